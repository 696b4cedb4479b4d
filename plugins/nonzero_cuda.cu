// NonZeroPlugin on CUDA (cuda_launch.h): the (row, col) indices of the
// non-zero elements of a rows x cols float32/float16 tensor, in row-major
// order, and their count K, written on the device.
//
// Tiles. A tile is B threads x IT items. Warp w of the tile owns 32 * IT
// consecutive elements; item e of lane l is element w * 32 * IT + e * 32 + l,
// so each of a warp's loads reads 32 consecutive elements (128 bytes of
// float32) and row-major order inside a warp is (item, lane). Per tile:
//   1. Each lane loads its IT elements (all loads issued before any is
//      used) and keeps one bit per item: a 32-bit mask is its whole state.
//   2. The warp's count is one reduction of the lanes' popcounts; the
//      warps' counts give each warp its offset in the tile and the tile's
//      total.
//   3. The tile's offset in the output comes from a decoupled look-back over
//      the tiles before it (ONE_PASS, ONE_PASS_WIDE), from a
//      scan of per-tile counts that an earlier kernel made (COUNT_SCAN_WRITE),
//      from the counts of the chunks of tiles before it (BITMAP, which
//      writes from the bitmap an earlier kernel stored), or from a running sum
//      (ONE_BLOCK). The look-back is block-wide: every
//      thread reads one predecessor's state, so a round trip to L2 covers B
//      tiles.
//   4. Per item, one ballot of the lanes' bits gives every lane its place
//      among the item's non-zeros (the popcount of the lanes below it) and
//      the item's count; the non-zero lanes store their pairs, which are
//      consecutive in the output, so a warp's store covers one contiguous
//      run. (row, col) come from the element's place by a division by cols
//      done as a multiply and shifts (constants made once a block).
// Column order (2 x K) puts the columns behind the K rows, so they can be
// placed only once K is known: COUNT_SCAN_WRITE counts first (the input is
// read twice); the one-pass plans store the columns from the end of the
// output's room backwards (room for 2 x rows x cols indices, and K <= rows
// x cols, so they never meet the rows), then a move kernel puts them behind
// the rows once K is on the device. When K is above a third of the room the
// staged columns would overlap their destination; then a second kernel
// reads the input again and writes the columns in place from the per-tile
// offsets the one-pass kernel recorded (the move then does nothing). Both
// decide on the device, so the launches are the same in every run (a CUDA
// graph replays them whatever K is).
// Positions come from scans, never from atomics, so the output is
// deterministic. The one atomic (look-back plans) hands out tile ids in the
// order blocks ask for them, so a tile only ever waits on tiles whose blocks
// are already running: the look-back cannot deadlock.
//
// Zero is +0 or -0 (every bit but the sign clear): NaN and subnormals count,
// as on the CPU. Tested on the raw bits, so flushing subnormals cannot change
// the answer.
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "cuda_device.cuh"
#include "cuda_launch.h"

namespace
{

using plg::FULL_MASK;

constexpr int ITEMS = 16;      // ONE_PASS and COUNT_SCAN_WRITE: 4096-element tiles
constexpr int WIDE_ITEMS = 32; // ONE_PASS_WIDE: 8192
constexpr int BIG_B = 256;     // threads of the multi-block kernels
constexpr int SCAN_B = 1024;
constexpr int SCAN_ITEMS = 8;
// Blocks an SM the registers must allow: 16 items a lane fit in 32
// registers, so eight blocks (every warp slot); the wide tiles' loads need
// more, and forcing them into 32 spills, so they get no bound (0: the
// compiler's choice, 47 registers, five blocks; an explicit 1 lets it take
// 89).
constexpr int blocks_per_sm(int items)
{
    return items <= ITEMS ? 8 : 0;
}
// AUTO runs one block up to this many elements: below it, the launches and
// the memset of a multi-block plan cost more than one SM streaming the input.
constexpr int64_t ONE_BLOCK_MAX = 1 << 16;

template <typename T> struct nzbits;
template <> struct nzbits<uint32_t> {
    __device__ static bool nz(uint32_t b) { return (b & 0x7FFFFFFFu) != 0; }
};
template <> struct nzbits<uint16_t> {
    __device__ static bool nz(uint16_t b) { return (b & 0x7FFFu) != 0; }
};

// Where a tile's pairs go.
enum {
    OUT_ROW,        // row order: (row, col) pairs at idx[2o], idx[2o + 1]
    OUT_COL,        // column order, K known: rows at idx[o], columns at idx[K + o]
    OUT_COL_STAGED, // column order, K unknown: columns at idx[capacity - 1 - o]
    OUT_COL_ONLY    // only the columns at idx[K + o] (the overlap fallback)
};

struct nz_params {
    const void *x;
    int32_t *idx;
    int64_t *count;
    int64_t rows, cols;         // upper bounds when dims_device is set
    const int64_t *dims_device; // true [rows, cols], or NULL
    int64_t capacity;           // indices idx has room for (>= 2 rows cols)
    int32_t out8;               // idx is 8-byte aligned: a pair is one store
    uint32_t *next_tile;        // look-back: the tile id dispenser
    unsigned long long *state;  // look-back: per tile, flag | value
    int64_t *tile_offset;       // per tile (COUNT_SCAN_WRITE; the staged fallback)
    int32_t *tile_count;        // COUNT_SCAN_WRITE: per tile
    uint32_t *mask;             // BITMAP: the input's bitmap, one bit per element
};

// The true dims; returns the element count.
__device__ __forceinline__ int64_t true_dims(const nz_params &p, int64_t &rows,
                                             int64_t &cols)
{
    if (p.dims_device) {
        rows = p.dims_device[0];
        cols = p.dims_device[1];
    } else {
        rows = p.rows;
        cols = p.cols;
    }
    return rows * cols;
}

// Output stores through a global address made once a tile (which also hides
// it from the optimizer): each store then adds a 32-bit index to it, one
// instruction, where the compiler would rebuild the 64-bit sum from the
// kernel's parameters for every store.
template <typename P> __device__ __forceinline__ uint64_t global_addr(P *p)
{
    uint64_t a;
    asm("cvta.to.global.u64 %0, %1;" : "=l"(a) : "l"(p));
    return a;
}

__device__ __forceinline__ void store_i32(uint64_t a, int v)
{
    asm volatile("st.global.b32 [%0], %1;" ::"l"(a), "r"(v) : "memory");
}

__device__ __forceinline__ void store_pair(uint64_t a, int x, int y)
{
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(a), "r"(x), "r"(y) : "memory");
}

// Pair j of a run whose first output positions are `flat` (row order: the
// pair; column order: the row) and `colp` (column order: the column;
// staged, counted down from there) is element (r, c).
template <int OUT>
__device__ __forceinline__ void put(const nz_params &p, uint64_t flat, uint64_t colp,
                                    uint32_t j, int r, int c)
{
    if (OUT == OUT_ROW) {
        if (p.out8) {
            store_pair(flat + 8ull * j, r, c);
        } else {
            store_i32(flat + 8ull * j, r);
            store_i32(flat + 8ull * j + 4, c);
        }
    } else {
        if (OUT != OUT_COL_ONLY)
            store_i32(flat + 4ull * j, r);
        store_i32(OUT == OUT_COL_STAGED ? colp - 4ull * j : colp + 4ull * j, c);
    }
}

// The true dims, the element count and the tiles of size SIZE over it.
template <int64_t SIZE> struct extent {
    int64_t rows, cols, n, ntiles;
    __device__ explicit extent(const nz_params &p)
    {
        n = true_dims(p, rows, cols);
        ntiles = plg::ceil_div(n, SIZE);
    }
};

// The staged columns [capacity - K, capacity) overlap their place [K, 2K).
__device__ __forceinline__ bool staged_overlap(int64_t k, int64_t capacity)
{
    return 3 * k > capacity;
}

template <int B> __device__ int64_t block_sum64(int64_t v, int64_t *scratch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = plg::warp_sum64(v);
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    int64_t s = 0;
#pragma unroll
    for (int w = 0; w < B / 32; w++)
        s += scratch[w];
    __syncthreads(); // scratch may be reused right after
    return s;
}

// One tile of B threads x IT items: see the top of the file.
template <typename T, int B, int IT> struct tile {
    static constexpr int WARPS = B / 32;
    static constexpr int WSPAN = 32 * IT; // elements a warp owns
    static constexpr int64_t SIZE = (int64_t)B * IT;
    static_assert(IT <= 32, "a lane's mask holds one bit per item");

    struct smem {
        int32_t warp_count[WARPS];
        uint32_t id;                    // look-back: this block's tile
        uint32_t div_m, div_s1, div_s2; // dividing by cols (set_cols)
        uint32_t tile_r, tile_c;        // (row, col) of the tile's first element
        int64_t scratch[WARPS];         // look_back, block_sum64
        int wfirst[WARPS];              // look_back
    };

    // Thread 0, once a block: the constants of a division by cols without a
    // hardware divide (Granlund and Montgomery's round-up method, valid for
    // every 32-bit numerator and 1 <= cols <= 2^31).
    __device__ static void set_cols(smem &sm, int64_t cols)
    {
        const uint32_t d = cols > 0 ? (uint32_t)cols : 1u;
        const uint32_t l = d == 1 ? 0 : 32 - __clz(d - 1); // ceil(log2(d))
        sm.div_m = (uint32_t)(((1ull << 32) * ((1ull << l) - d)) / d + 1);
        sm.div_s1 = l < 1 ? l : 1;
        sm.div_s2 = l > 1 ? l - 1 : 0;
    }

    // One element; STREAM: read once, so evicted first (ld.global.cs), which
    // keeps the caches for what is read again.
    template <bool STREAM> __device__ static T ld(const T *px)
    {
        return STREAM ? __ldcs(px) : __ldg(px);
    }

    // This lane's IT loads of the full tile at `base`, all issued before
    // mask() uses any.
    template <bool STREAM>
    __device__ static void issue(const T *x, int64_t base, T (&v)[IT])
    {
        const T *px = x + base + (threadIdx.x >> 5) * WSPAN + (threadIdx.x & 31);
#pragma unroll
        for (int e = 0; e < IT; e++)
            v[e] = ld<STREAM>(px + e * 32);
    }

    __device__ static uint32_t mask(const T (&v)[IT])
    {
        uint32_t m = 0;
#pragma unroll
        for (int e = 0; e < IT; e++)
            m |= (uint32_t)nzbits<T>::nz(v[e]) << e;
        return m;
    }

    // This lane's mask of the tile at `base`: bit e for item e. FULL: the
    // whole tile lies below n.
    template <bool FULL, bool STREAM>
    __device__ static uint32_t load(const T *x, int64_t base, int64_t n)
    {
        if (FULL) {
            T v[IT];
            issue<STREAM>(x, base, v);
            return mask(v);
        }
        const int64_t first = base + (threadIdx.x >> 5) * WSPAN + (threadIdx.x & 31);
        const T *px = x + first;
        const int64_t left = n - first; // elements from px on
        uint32_t m = 0;
#pragma unroll
        for (int e = 0; e < IT; e++)
            if (e * 32 < left && nzbits<T>::nz(ld<STREAM>(px + e * 32)))
                m |= 1u << e;
        return m;
    }

    template <bool STREAM = false>
    __device__ static uint32_t load_any(const T *x, int64_t base, int64_t n)
    {
        return base + SIZE <= n ? load<true, STREAM>(x, base, n)
                                : load<false, STREAM>(x, base, n);
    }

    // Lane 0 of each warp puts the warp's count in warp_count; thread 0 the
    // tile's first (row, col). Before the barrier that publishes them.
    __device__ static void count(uint32_t m, smem &sm, int64_t base, int64_t cols)
    {
        const unsigned c = __reduce_add_sync(FULL_MASK, (unsigned)__popc(m));
        if ((threadIdx.x & 31) == 0)
            sm.warp_count[threadIdx.x >> 5] = (int32_t)c;
        if (threadIdx.x == 0 && cols > 0) {
            uint64_t r, cc;
            plg::divmod((uint64_t)base, (uint64_t)cols, r, cc);
            sm.tile_r = (uint32_t)r;
            sm.tile_c = (uint32_t)cc;
        }
    }

    // After count() and a barrier: this warp's first place in the tile; the
    // tile's total in `total`.
    __device__ static int warp_offset(const smem &sm, int &total)
    {
        const int warp = threadIdx.x >> 5;
        int off = 0, s = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            const int v = sm.warp_count[w];
            off += w < warp ? v : 0;
            s += v;
        }
        total = s;
        return off;
    }

    // Stores this warp's pairs of the tile, the first at output position g;
    // k: the true count (OUT_COL, OUT_COL_ONLY). After count() and a barrier.
    template <int OUT>
    __device__ static void write(const nz_params &p, const smem &sm, int64_t cols,
                                 int64_t g, int64_t k, uint32_t m)
    {
        const uint32_t r0 = sm.tile_r, c0 = sm.tile_c;
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const unsigned below = (1u << lane) - 1u;
        const uint32_t C = (uint32_t)cols, dm = sm.div_m, s1 = sm.div_s1, s2 = sm.div_s2;
        // Item e's element, counted from the start of the tile's first row:
        // l0 + 32 e < cols + SIZE, which fits (cols <= 2^31).
        const uint32_t l0 = c0 + (uint32_t)(warp * WSPAN + lane);
        unsigned q = 0; // the warp's pairs stored so far
        const uint64_t flat = global_addr(p.idx + (OUT == OUT_ROW ? 2 * g : g));
        const uint64_t colp = global_addr(
            OUT == OUT_COL_STAGED ? p.idx + (p.capacity - 1 - g) : p.idx + (k + g));
        // Item e: one ballot places its non-zeros; their stores are one run.
        auto item = [&](int e) {
            const bool on = (m >> e) & 1u;
            const unsigned b = __ballot_sync(FULL_MASK, on);
            if (on) {
                const unsigned j = q + (unsigned)__popc(b & below);
                const uint32_t l = l0 + 32u * (uint32_t)e;
                const uint32_t t = __umulhi(dm, l);
                const uint32_t qd = (t + ((l - t) >> s1)) >> s2; // l / C
                put<OUT>(p, flat, colp, j, (int)(r0 + qd), (int)(l - qd * C));
            }
            q += (unsigned)__popc(b);
        };
        // The items holding a non-zero somewhere in the warp: when at most
        // half of them do (sparse input; on the H200 at d = 0.01, where about
        // 9 of 32 do, 16384^2 took 414 us this way against 519 us), only
        // those are visited, so the cost follows the non-zeros; else a loop
        // unrolled over all (visiting nearly all items in a loop measured
        // slower at d = 0.1, 893 against 678 us).
        unsigned items = __reduce_or_sync(FULL_MASK, m);
        if (__popc(items) > IT / 2) {
#pragma unroll
            for (int e = 0; e < IT; e++)
                item(e);
        } else {
            while (items) { // the same in the whole warp
                const int e = __ffs((int)items) - 1;
                items &= items - 1u;
                item(e);
            }
        }
    }
};

// ---- decoupled look-back ----------------------------------------------------
// state[t] is one 64-bit word: the flag in the top two bits, the value below,
// so a reader never sees a flag without its value.
constexpr unsigned long long FLAG_AGGREGATE = 1ull << 62; // the tile's own count
constexpr unsigned long long FLAG_INCLUSIVE = 2ull << 62; // count of tiles 0..t
constexpr unsigned long long VALUE_MASK = (1ull << 62) - 1;

// All B threads of tile t > 0, after its aggregate is published: the
// exclusive prefix of the tile, read B predecessors per round trip (one
// tile's state per thread, nearest first), so a tile started far behind the
// last published prefix looks back in few steps. `wfirst` and `scratch`
// hold B / 32 entries. Ends with a barrier.
template <int B>
__device__ int64_t look_back(unsigned long long *state_mem, int64_t t, int *wfirst,
                             int64_t *scratch)
{
    volatile unsigned long long *state = state_mem;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t excl = 0;
    for (int64_t end = t - 1;; end -= B) {
        const int64_t i = end - (int64_t)threadIdx.x;
        unsigned long long s = FLAG_INCLUSIVE; // before tile 0: a prefix of 0
        if (i >= 0) {
            // Tile i's block is running (its id came first), and publishes
            // as soon as it has counted.
            while (((s = state[i]) >> 62) == 0)
                __nanosleep(32);
        }
        const unsigned incl = __ballot_sync(FULL_MASK, (s >> 62) == 2);
        if (lane == 0)
            wfirst[warp] = incl ? warp * 32 + __ffs(incl) - 1 : B;
        __syncthreads();
        int first = B;
#pragma unroll
        for (int w = 0; w < B / 32; w++)
            first = wfirst[w] < first ? wfirst[w] : first;
        // Up to the nearest inclusive prefix, which ends the walk.
        const int64_t v = (int)threadIdx.x <= first ? (int64_t)(s & VALUE_MASK) : 0;
        excl += block_sum64<B>(v, scratch); // its barriers free wfirst too
        if (first < B)
            return excl;
    }
}

// One tile of a look-back plan, after count() and a barrier: publishes the
// tile's count, looks back, publishes its inclusive prefix (and K for the
// last tile) and returns this warp's first output position.
template <typename TL>
__device__ int64_t tile_position(const nz_params &p, typename TL::smem &sm, int64_t t,
                                 int64_t ntiles, bool record)
{
    int total;
    const int woff = TL::warp_offset(sm, total);
    if (threadIdx.x == 0) // publish at once: later tiles wait on this
        reinterpret_cast<volatile unsigned long long *>(p.state)[t] =
            (t == 0 ? FLAG_INCLUSIVE : FLAG_AGGREGATE) | (unsigned long long)total;
    const int64_t off = t == 0 ? 0 : look_back<BIG_B>(p.state, t, sm.wfirst, sm.scratch);
    if (threadIdx.x == 0) {
        if (t > 0)
            reinterpret_cast<volatile unsigned long long *>(p.state)[t] =
                FLAG_INCLUSIVE | (unsigned long long)(off + total);
        if (record)
            p.tile_offset[t] = off;
        if (t == ntiles - 1)
            *p.count = off + total;
    }
    return off + woff;
}

// ---- count, scan, write (COUNT_SCAN_WRITE) ---------------------------------

template <typename T>
__global__ void __launch_bounds__(BIG_B, blocks_per_sm(ITEMS)) count_kernel(nz_params p)
{
    using TL = tile<T, BIG_B, ITEMS>;
    __shared__ typename TL::smem sm;
    int64_t rows, cols;
    const int64_t n = true_dims(p, rows, cols);
    const int64_t t = blockIdx.x;
    if (t >= plg::ceil_div(n, TL::SIZE))
        return;
    TL::count(TL::load_any(static_cast<const T *>(p.x), t * TL::SIZE, n), sm,
              t * TL::SIZE, 0);
    __syncthreads();
    if (threadIdx.x == 0) {
        int total;
        TL::warp_offset(sm, total);
        p.tile_count[t] = total;
    }
}

// One block: tile_offset = exclusive scan of tile_count; K = the total.
template <typename T> __global__ void __launch_bounds__(SCAN_B) scan_kernel(nz_params p)
{
    __shared__ int64_t warp_off[SCAN_B / 32];
    __shared__ int64_t chunk_total;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t rows, cols;
    const int64_t ntiles =
        plg::ceil_div(true_dims(p, rows, cols), tile<T, BIG_B, ITEMS>::SIZE);
    int64_t carry = 0;
    for (int64_t b0 = 0; b0 < ntiles; b0 += (int64_t)SCAN_B * SCAN_ITEMS) {
        const int64_t i0 = b0 + (int64_t)threadIdx.x * SCAN_ITEMS;
        int32_t c[SCAN_ITEMS];
        int64_t s = 0;
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS; q++) {
            c[q] = i0 + q < ntiles ? p.tile_count[i0 + q] : 0;
            s += c[q];
        }
        const int64_t incl = plg::warp_inclusive_scan(s, lane);
        if (lane == 31)
            warp_off[warp] = incl;
        __syncthreads();
        if (warp == 0) {
            const int64_t w = warp_off[lane];
            const int64_t wi = plg::warp_inclusive_scan(w, lane);
            warp_off[lane] = wi - w;
            if (lane == 31)
                chunk_total = wi;
        }
        __syncthreads();
        int64_t off = carry + warp_off[warp] + incl - s;
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS; q++) {
            if (i0 + q < ntiles)
                p.tile_offset[i0 + q] = off;
            off += c[q];
        }
        carry += chunk_total;
        __syncthreads(); // warp_off and chunk_total are reused
    }
    if (threadIdx.x == 0)
        *p.count = carry;
}

// Tiles from tile_offset, blocks striding over them: COUNT_SCAN_WRITE's
// write (OUT_ROW or OUT_COL, a block per tile) and the staged plans'
// fallback (OUT_COL_ONLY, which does nothing unless the staged columns
// overlap their place).
template <typename T, int OUT, int IT>
__global__ void __launch_bounds__(BIG_B, blocks_per_sm(IT))
    offset_write_kernel(nz_params p)
{
    using TL = tile<T, BIG_B, IT>;
    __shared__ typename TL::smem sm;
    const extent<TL::SIZE> d(p);
    const int64_t n = d.n, ntiles = d.ntiles, cols = d.cols;
    const int64_t k = OUT == OUT_ROW ? 0 : *p.count;
    if (OUT == OUT_COL_ONLY && !staged_overlap(k, p.capacity))
        return;
    if (threadIdx.x == 0)
        TL::set_cols(sm, cols);
    const T *x = static_cast<const T *>(p.x);
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const uint32_t m = TL::load_any(x, t * TL::SIZE, n);
        TL::count(m, sm, t * TL::SIZE, cols);
        __syncthreads();
        int total;
        const int woff = TL::warp_offset(sm, total);
        TL::template write<OUT>(p, sm, cols, p.tile_offset[t] + woff, k, m);
        __syncthreads(); // warp_count is reused
    }
}

// The staged plans: columns from idx[capacity - 1 - o] to idx[K + o], unless
// they overlap (then offset_write_kernel<OUT_COL_ONLY> wrote them).
__global__ void __launch_bounds__(BIG_B) move_columns_kernel(nz_params p)
{
    const int64_t k = *p.count;
    if (staged_overlap(k, p.capacity))
        return;
    const int32_t *src = p.idx + (p.capacity - 1);
    int32_t *dst = p.idx + k;
    for (int64_t o = blockIdx.x * (int64_t)BIG_B + threadIdx.x; o < k;
         o += (int64_t)gridDim.x * BIG_B)
        dst[o] = src[-o];
}

// ---- one pass: a block per tile (ONE_PASS, ONE_PASS_WIDE) --------------------

template <typename T, int OUT, int IT>
__global__ void __launch_bounds__(BIG_B, blocks_per_sm(IT)) one_pass_kernel(nz_params p)
{
    using TL = tile<T, BIG_B, IT>;
    __shared__ typename TL::smem sm;
    const extent<TL::SIZE> d(p);
    const int64_t n = d.n, ntiles = d.ntiles, cols = d.cols;
    if (threadIdx.x == 0) {
        sm.id = atomicAdd(p.next_tile, 1u);
        TL::set_cols(sm, cols);
    }
    __syncthreads();
    const int64_t t = sm.id;
    if (t >= ntiles) { // the grid is sized for the upper bound
        if (t == 0 && threadIdx.x == 0)
            *p.count = 0; // an empty input: no tile writes K
        return;
    }
    const int64_t base = t * TL::SIZE;
    const uint32_t m = TL::load_any(static_cast<const T *>(p.x), base, n);
    TL::count(m, sm, base, cols);
    __syncthreads();
    const int64_t g = tile_position<TL>(p, sm, t, ntiles, OUT == OUT_COL_STAGED);
    TL::template write<OUT>(p, sm, cols, g, 0, m);
}

// ---- two kernels through the input's bitmap (BITMAP) -------------------------
// Block b of either kernel owns a contiguous chunk of tiles (the same in
// both: the same grid over the same true size).
//   1. mask_count_kernel streams the input once, with nothing to wait for:
//      per tile, the input's plain bitmap goes to the workspace (one bit per
//      element: 1/32 of float32's bytes, 1/16 of float16's), and the block
//      counts its chunk. The input is loaded evict-first, so the words stay
//      in L2 where they fit.
//   2. bitmap_write_kernel reads the words, not the input: every block sums
//      the chunks' counts (a few thousand at most) for its chunk's place and
//      K, then writes group after group (below). K is known, so column order
//      writes in place.
// The plan trades the look-back's wait on other tiles for a second launch
// and the words' round trip (about 1/32 more traffic than the input).
// Tactic 5 (MASKS) was this plan with the words as loaded and a write that
// visited every item; the bitmap's write replaced it (bench/RESULTS.md),
// and engines that recorded 5 run this plan.
constexpr int MASK_ITEMS = 32; // 8192-element tiles: a lane's word is full

struct chunk {
    int64_t t0, t1; // this block's tiles
    __device__ chunk(int64_t ntiles)
    {
        const int64_t per = plg::ceil_div(ntiles, (int64_t)gridDim.x);
        t0 = (int64_t)blockIdx.x * per;
        t1 = t0 + per < ntiles ? t0 + per : ntiles;
    }
};

// The words go out as the input's plain bitmap (word i: elements 32 i ..
// 32 i + 31, bit b for element 32 i + b), the warp's 32 item masks turned
// by one ballot each (lane e keeps item e's ballot, which is the word of
// elements 32 e .. 32 e + 31 of the warp's span).
template <typename T>
__global__ void __launch_bounds__(BIG_B) mask_count_kernel(nz_params p)
{
    using TL = tile<T, BIG_B, MASK_ITEMS>;
    __shared__ int64_t scratch[TL::WARPS];
    const extent<TL::SIZE> d(p);
    const chunk c(d.ntiles);
    const T *x = static_cast<const T *>(p.x);
    const int lane = threadIdx.x & 31;
    uint32_t count = 0;
    for (int64_t t = c.t0; t < c.t1; t++) {
        const uint32_t m = TL::template load_any<true>(x, t * TL::SIZE, d.n);
        uint32_t word = m;
#pragma unroll
        for (int e = 0; e < MASK_ITEMS; e++) {
            const uint32_t b = __ballot_sync(FULL_MASK, (m >> e) & 1u);
            word = lane == e ? b : word;
        }
        p.mask[t * BIG_B + threadIdx.x] = word;
        count += (uint32_t)__popc(m);
    }
    const int64_t s = block_sum64<BIG_B>(count, scratch);
    if (threadIdx.x == 0)
        p.tile_offset[blockIdx.x] = s; // the chunk's count
}

// ---- the bitmap's write (BITMAP) ---------------------------------------------
// The count is mask_count_kernel. The write takes the block's chunk as
// groups of 32 WPL words (1024 WPL elements; lane l holds words WPL l ..
// WPL l + WPL - 1), a contiguous run of groups per warp: one pass sums each
// warp's popcounts (for the warps' places in the block), the next visits
// the groups in order. Per group, one scan of the lanes' popcounts places
// every lane's words; then
//   - few non-zeros (at most ROUNDS x 32): rounds of 32 in which lane j
//     stores the group's non-zero number 32 r + j, whose lane comes from a
//     binary search over the lanes' places and whose word and bit from its
//     rank there, so every store instruction writes 32 consecutive pairs
//     and the work follows the non-zeros;
//   - more: per word e, its bits spread over the lanes (a shuffle of the
//     word), stores of one contiguous run.
// WPL is 2 where chunks hold two tiles or more: the scan and the rounds'
// set-up are paid once per 2048 elements (16384² at d = 0.01: 343 -> 323
// us), and rounds are taken up to 16 a group (10 with WPL 1). Where chunks
// are single tiles (4096²) that would leave half the warps without a group
// (5-6% slower at d = 0.5), so there WPL is 1.
// (row, col) come from the group's first element, carried from group to
// group, plus a 32-bit offset divided by cols with the block's constants
// (no division when the group lies within one row).
template <int WPL> struct bitmap_group {
    static constexpr int64_t SIZE = 1024 * WPL;
    static constexpr unsigned ROUNDS = WPL == 1 ? 10 : 16;
};

// The position of set bit number r (from 0) of x; r < popc(x).
__device__ __forceinline__ uint32_t nth_bit(uint32_t x, uint32_t r)
{
    uint32_t pos = 0;
#pragma unroll
    for (uint32_t w = 16; w >= 2; w >>= 1) { // halves of 16, 8, 4, 2 bits
        const uint32_t c = (uint32_t)__popc(x & ((1u << w) - 1u));
        if (r >= c) {
            r -= c;
            x >>= w;
            pos += w;
        }
    }
    return pos + (r >= (x & 1u) ? 1u : 0u);
}

// l / C and l % C by the block's constants (tile::set_cols).
template <typename TL>
__device__ __forceinline__ void div_cols(const typename TL::smem &sm, uint32_t C,
                                         uint32_t l, uint32_t &q, uint32_t &r)
{
    const uint32_t t = __umulhi(sm.div_m, l);
    q = (t + ((l - t) >> sm.div_s1)) >> sm.div_s2;
    r = l - q * C;
}

// A lane's words of a group (bitmap_write_kernel).
__device__ __forceinline__ void unpack(uint32_t v, uint32_t (&w)[1])
{
    w[0] = v;
}
__device__ __forceinline__ void unpack(uint2 v, uint32_t (&w)[2])
{
    w[0] = v.x;
    w[1] = v.y;
}

template <typename T, int OUT, int WPL>
__global__ void __launch_bounds__(BIG_B) bitmap_write_kernel(nz_params p)
{
    constexpr int64_t GROUP = bitmap_group<WPL>::SIZE;
    using words = typename std::conditional<WPL == 2, uint2, uint32_t>::type;
    using TL = tile<T, BIG_B, MASK_ITEMS>;
    constexpr int WARPS = TL::WARPS;
    __shared__ typename TL::smem sm;
    __shared__ int64_t wsum[WARPS];
    const extent<TL::SIZE> d(p);
    const chunk c(d.ntiles);
    const int64_t cols = d.cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned below = (1u << lane) - 1u;
    if (threadIdx.x == 0)
        TL::set_cols(sm, cols);
    int64_t before = 0, all = 0;
    for (int64_t i = threadIdx.x; i < gridDim.x; i += BIG_B) {
        const int64_t v = p.tile_offset[i];
        all += v;
        before += i < blockIdx.x ? v : 0;
    }
    const int64_t off = block_sum64<BIG_B>(before, sm.scratch);
    const int64_t k = block_sum64<BIG_B>(all, sm.scratch);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *p.count = k;
    // This warp's groups [g0, g1) of the chunk's (t1 - t0) x GPT.
    constexpr int64_t GPT = TL::SIZE / GROUP; // groups a tile
    const int64_t cg0 = c.t0 * GPT, ng = c.t1 > c.t0 ? (c.t1 - c.t0) * GPT : 0;
    const int64_t per = plg::ceil_div(ng, (int64_t)WARPS);
    const int64_t g0 = cg0 + (warp * per < ng ? warp * per : ng);
    const int64_t g1 = cg0 + ((warp + 1) * per < ng ? (warp + 1) * per : ng);
    const words *mask = reinterpret_cast<const words *>(p.mask);
    uint32_t mine = 0;
    for (int64_t g = g0; g < g1; g++) {
        uint32_t w[WPL];
        unpack(mask[g * 32 + lane], w);
        for (int h = 0; h < WPL; h++)
            mine += (uint32_t)__popc(w[h]);
    }
    mine = __reduce_add_sync(FULL_MASK, mine);
    if (lane == 0)
        wsum[warp] = mine;
    __syncthreads();
    int64_t q = off;
    for (int w = 0; w < WARPS; w++)
        q += w < warp ? wsum[w] : 0;
    if (g0 >= g1)
        return;
    const uint32_t C = (uint32_t)cols;
    uint32_t R0, C0; // (row, col) of group g's first element
    {
        uint64_t r, cc;
        plg::divmod((uint64_t)g0 * GROUP, (uint64_t)cols, r, cc);
        R0 = (uint32_t)r;
        C0 = (uint32_t)cc;
    }
    for (int64_t g = g0; g < g1; g++) {
        // The group within one row (warp-uniform): (row, col) without the
        // division.
        const bool one_row = C0 + (uint32_t)GROUP <= C;
        uint32_t w[WPL];
        unpack(mask[g * 32 + lane], w);
        const uint32_t c0 = (uint32_t)__popc(w[0]);
        const uint32_t cnt = WPL == 2 ? c0 + (uint32_t)__popc(w[WPL - 1]) : c0;
        const uint32_t incl = plg::warp_inclusive_scan(cnt, lane);
        const uint32_t P = incl - cnt, tot = __shfl_sync(FULL_MASK, incl, 31);
        if (tot) {
            const uint64_t flat = global_addr(p.idx + (OUT == OUT_ROW ? 2 * q : q));
            const uint64_t colp = global_addr(p.idx + (k + q));
            if (tot <= 32 * bitmap_group<WPL>::ROUNDS) {
                for (uint32_t base = 0; base < tot; base += 32) {
                    const uint32_t i = base + (uint32_t)lane;
                    // The lane e whose words hold non-zero number i.
                    int e = 0;
#pragma unroll
                    for (int st = 16; st >= 1; st >>= 1) {
                        const uint32_t pe = __shfl_sync(FULL_MASK, P, e + st);
                        e = pe <= i ? e + st : e;
                    }
                    const uint32_t wx = __shfl_sync(FULL_MASK, w[0], e);
                    const uint32_t wy =
                        WPL == 2 ? __shfl_sync(FULL_MASK, w[WPL - 1], e) : 0u;
                    const uint32_t ce = WPL == 2 ? __shfl_sync(FULL_MASK, c0, e) : 32u;
                    const uint32_t pe = __shfl_sync(FULL_MASK, P, e);
                    if (i < tot) {
                        const uint32_t r = i - pe, hi = r >= ce ? 1u : 0u;
                        const uint32_t l = C0 + 32u * WPL * (uint32_t)e + 32u * hi +
                                           nth_bit(hi ? wy : wx, hi ? r - ce : r);
                        uint32_t qd = 0, cc = l;
                        if (!one_row)
                            div_cols<TL>(sm, C, l, qd, cc);
                        put<OUT>(p, flat, colp, i, (int)(R0 + qd), (int)cc);
                    }
                }
            } else {
                uint32_t done = 0;
#pragma unroll
                for (int e = 0; e < 32 * WPL; e++) {
                    const uint32_t b = __shfl_sync(FULL_MASK, w[e % WPL], e / WPL);
                    if ((b >> lane) & 1u) {
                        const uint32_t l = C0 + 32u * (uint32_t)e + (uint32_t)lane;
                        uint32_t qd = 0, cc = l;
                        if (!one_row)
                            div_cols<TL>(sm, C, l, qd, cc);
                        put<OUT>(p, flat, colp, done + (uint32_t)__popc(b & below),
                                 (int)(R0 + qd), (int)cc);
                    }
                    done += (uint32_t)__popc(b);
                }
            }
            q += tot;
        }
        if (one_row) {
            C0 += (uint32_t)GROUP;
            R0 += C0 == C ? 1u : 0u;
            C0 = C0 == C ? 0u : C0;
        } else {
            uint32_t qd, cc;
            div_cols<TL>(sm, C, C0 + (uint32_t)GROUP, qd, cc);
            R0 += qd;
            C0 = cc;
        }
    }
}

template <typename T, bool ROW>
cudaError_t launch_bitmap(const plg_nz_launch *a, nz_params &p, cudaStream_t s)
{
    using TL = tile<T, BIG_B, MASK_ITEMS>;
    const int64_t tiles = plg::ceil_div(a->rows * a->cols, TL::SIZE);
    const plg_nz_layout l =
        plg_nz_workspace_layout(plg::ceil_div(a->rows * a->cols, PLG_NZ_TILE));
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    p.tile_offset = reinterpret_cast<int64_t *>(ws + l.offset); // per chunk
    p.mask = reinterpret_cast<uint32_t *>(ws + l.mask);
    // At most one chunk per 8192-element tile, so the counts fit the
    // per-tile offsets (sized for 4096-element tiles).
    const unsigned grid = plg::grid_for(tiles, plg::sm_count());
    mask_count_kernel<T><<<grid, BIG_B, 0, s>>>(p);
    // Two words a lane when every warp of a chunk gets a group of 2048
    // (chunks of two tiles or more); one where chunks are single tiles.
    if (tiles >= 2 * (int64_t)grid)
        bitmap_write_kernel<T, ROW ? OUT_ROW : OUT_COL, 2><<<grid, BIG_B, 0, s>>>(p);
    else
        bitmap_write_kernel<T, ROW ? OUT_ROW : OUT_COL, 1><<<grid, BIG_B, 0, s>>>(p);
    return cudaGetLastError();
}

// ---- one block (ONE_BLOCK) -------------------------------------------------

template <typename T, int B, int IT, bool ROW>
__global__ void __launch_bounds__(B) one_block_kernel(nz_params p)
{
    using TL = tile<T, B, IT>;
    __shared__ typename TL::smem sm;
    const T *x = static_cast<const T *>(p.x);
    int64_t rows, cols;
    const int64_t n = true_dims(p, rows, cols);
    if (threadIdx.x == 0)
        TL::set_cols(sm, cols);
    int64_t k = 0;
    if (!ROW) {
        // The column half starts at K: count first (a small input, so the
        // second read comes from the caches).
        int64_t c = 0;
        for (int64_t base = 0; base < n; base += TL::SIZE)
            c += __popc(TL::load_any(x, base, n));
        k = block_sum64<B>(c, sm.scratch);
    }
    int64_t offset = 0;
    for (int64_t base = 0; base < n; base += TL::SIZE) {
        const uint32_t m = TL::load_any(x, base, n);
        TL::count(m, sm, base, cols);
        __syncthreads();
        int total;
        const int woff = TL::warp_offset(sm, total);
        TL::template write<ROW ? OUT_ROW : OUT_COL>(p, sm, cols, offset + woff, k, m);
        offset += total;
        __syncthreads(); // the next tile reuses warp_count
    }
    if (threadIdx.x == 0)
        *p.count = offset;
}

// ---- launch ----------------------------------------------------------------

static_assert(tile<uint32_t, BIG_B, ITEMS>::SIZE == PLG_NZ_TILE,
              "cuda_launch.h sizes the workspace");

// A look-back plan (ONE_PASS, ONE_PASS_WIDE) with tiles of IT
// items: clears the tile state, runs, and for column order moves the staged
// columns (or, past the overlap bound, writes them again in place).
template <typename T, bool ROW, int IT>
cudaError_t launch_look_back(const plg_nz_launch *a, nz_params &p, cudaStream_t s)
{
    using TL = tile<T, BIG_B, IT>;
    constexpr int OUT = ROW ? OUT_ROW : OUT_COL_STAGED;
    const int64_t tiles = plg::ceil_div(a->rows * a->cols, TL::SIZE);
    const plg_nz_layout l = plg_nz_workspace_layout(tiles);
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    p.next_tile = reinterpret_cast<uint32_t *>(ws);
    p.state = reinterpret_cast<unsigned long long *>(ws + l.state);
    p.tile_offset = reinterpret_cast<int64_t *>(ws + l.offset);
    cudaError_t e = cudaMemsetAsync(ws, 0, (size_t)l.offset, s);
    if (e != cudaSuccess)
        return e;
    one_pass_kernel<T, OUT, IT><<<(unsigned)(tiles > 0 ? tiles : 1), BIG_B, 0, s>>>(p);
    if (ROW)
        return cudaGetLastError();
    const int sms = plg::sm_count();
    offset_write_kernel<T, OUT_COL_ONLY, IT>
        <<<plg::grid_for(tiles, sms), BIG_B, 0, s>>>(p);
    move_columns_kernel<<<plg::grid_for(plg::ceil_div(a->rows * a->cols, BIG_B), sms),
                          BIG_B, 0, s>>>(p);
    return cudaGetLastError();
}

template <typename T, bool ROW>
cudaError_t launch(const plg_nz_launch *a, nz_params &p, int plan, cudaStream_t s)
{
    using TL = tile<T, BIG_B, ITEMS>;
    const int64_t tiles = plg::ceil_div(a->rows * a->cols, TL::SIZE);
    if (plan == PLG_NZ_ONE_BLOCK) {
        // 1024 threads x 16 items: a 128 x 128 input in one tile.
        one_block_kernel<T, 1024, 16, ROW><<<1, 1024, 0, s>>>(p);
        return cudaGetLastError();
    }
    if (tiles > INT32_MAX)
        return cudaErrorInvalidValue;
    if (plan == PLG_NZ_ONE_PASS)
        return launch_look_back<T, ROW, ITEMS>(a, p, s);
    if (plan == PLG_NZ_ONE_PASS_WIDE)
        return launch_look_back<T, ROW, WIDE_ITEMS>(a, p, s);
    if (plan == PLG_NZ_BITMAP)
        return launch_bitmap<T, ROW>(a, p, s);
    const plg_nz_layout l = plg_nz_workspace_layout(tiles);
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    p.tile_offset = reinterpret_cast<int64_t *>(ws + l.offset);
    p.tile_count = reinterpret_cast<int32_t *>(ws + l.count);
    const unsigned grid = (unsigned)(tiles > 0 ? tiles : 1);
    count_kernel<T><<<grid, BIG_B, 0, s>>>(p);
    scan_kernel<T><<<1, SCAN_B, 0, s>>>(p);
    offset_write_kernel<T, ROW ? OUT_ROW : OUT_COL, ITEMS><<<grid, BIG_B, 0, s>>>(p);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_t(const plg_nz_launch *a, nz_params &p, int plan, cudaStream_t s)
{
    return a->row_order ? launch<T, true>(a, p, plan, s)
                        : launch<T, false>(a, p, plan, s);
}

} // namespace

extern "C" int plg_nz_cuda(const plg_nz_launch *a, void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int64_t n = a->rows * a->cols;
    nz_params p = {};
    p.x = a->x;
    p.idx = a->idx;
    p.count = a->count;
    p.rows = a->rows;
    p.cols = a->cols;
    p.dims_device = a->dims_device;
    p.capacity = a->capacity;
    p.out8 = ((uintptr_t)a->idx & 7u) == 0;
    if (a->capacity < 2 * n)
        return (int)cudaErrorInvalidValue;
    int plan = a->tactic;
    if (plan == PLG_NZ_AUTO)
        plan = n <= ONE_BLOCK_MAX ? PLG_NZ_ONE_BLOCK : PLG_NZ_BITMAP;
    // An empty input (K = 0 from one tiny launch) or no scratch: one block.
    if (n == 0 || !a->workspace)
        plan = PLG_NZ_ONE_BLOCK;
    return (int)(a->dtype == PRT_FLOAT32 ? launch_t<uint32_t>(a, p, plan, s)
                                         : launch_t<uint16_t>(a, p, plan, s));
}
