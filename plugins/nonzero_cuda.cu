// NonZeroPlugin on CUDA (cuda_launch.h): the (row, col) indices of the
// non-zero elements of a rows x cols float32/float16 tensor, in row-major
// order, and their count K, written on the device.
//
// Tiles. The input is read in tiles of B threads x ROUNDS 16-byte vectors
// (VEC = 4 float32 or 8 float16 elements each): in round j, thread t holds
// elements [base + (j*B + t)*VEC, +VEC), so each load instruction of a warp
// reads 512 contiguous bytes. Row-major order inside a tile is therefore
// (round, warp, lane, element); a warp's 32*VEC elements of one round are a
// "segment".
//   1. Each lane makes a VEC-bit mask of its non-zero elements. Ballots over
//      the bits of the lanes' counts give every lane its offset inside its
//      segment and the segment's total.
//   2. Warp 0 scans the ROUNDS * WARPS segment totals: each segment's offset
//      inside the tile, and the tile's total.
//   3. The tile's offset in the output comes from a decoupled look-back over
//      the tiles before it (ONE_PASS; ONE_PASS_WIDE with tiles twice as
//      long), from a scan of per-tile counts that an earlier kernel made
//      (COUNT_SCAN_WRITE), or from a running sum (ONE_BLOCK). The look-back
//      is block-wide: every thread reads one predecessor's state, so a
//      round trip to L2 covers 256 tiles. (A warp-wide one, 32 tiles a
//      trip, left a tile started a few hundred tiles behind the last
//      published prefix waiting through many trips.)
//   4. Each warp stages a segment's (row, col) pairs in shared memory in
//      output order, then stores them as one contiguous run: 8-byte pair
//      stores (row order) or two runs of 4-byte stores (column order).
// Positions come from scans, never from atomics, so the output is
// deterministic. The one atomic (ONE_PASS) hands out tile ids in the order
// blocks start, so a tile only ever waits on tiles whose blocks are already
// running: the look-back cannot deadlock.
//
// Zero is +0 or -0 (every bit but the sign clear): NaN and subnormals count,
// as on the CPU. Tested on the raw bits, so flushing subnormals cannot change
// the answer.
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_device.cuh"
#include "cuda_launch.h"

namespace
{

using plg::FULL_MASK;

constexpr int ROUNDS = 4;      // 16-byte loads in flight per thread per tile
constexpr int WIDE_ROUNDS = 8; // the same for ONE_PASS_WIDE
constexpr int BIG_B = 256;     // threads of the multi-block kernels
constexpr int SCAN_B = 1024;
constexpr int SCAN_ITEMS = 8;
// AUTO runs one block up to this many elements: below it, the launches and
// the memset of a multi-block plan cost more than one SM streaming the input.
constexpr int64_t ONE_BLOCK_MAX = 1 << 16;

template <typename T> struct nzbits;
template <> struct nzbits<uint32_t> {
    static constexpr int VEC = 4;
    static constexpr int COUNT_BITS = 3; // a lane's count is 0..4
    __device__ static bool nz(uint32_t b) { return (b << 1) != 0; }
    __device__ static uint32_t mask(uint4 v)
    {
        return (uint32_t)nz(v.x) | (uint32_t)nz(v.y) << 1 | (uint32_t)nz(v.z) << 2 |
               (uint32_t)nz(v.w) << 3;
    }
};
template <> struct nzbits<uint16_t> {
    static constexpr int VEC = 8;
    static constexpr int COUNT_BITS = 4; // 0..8
    __device__ static bool nz(uint16_t b) { return (b & 0x7FFFu) != 0; }
    __device__ static uint32_t word(uint32_t w)
    {
        return (uint32_t)((w & 0x7FFFu) != 0) | (uint32_t)((w & 0x7FFF0000u) != 0) << 1;
    }
    __device__ static uint32_t mask(uint4 v)
    {
        return word(v.x) | word(v.y) << 2 | word(v.z) << 4 | word(v.w) << 6;
    }
};

struct nz_params {
    const void *x;
    int32_t *idx;
    int64_t *count;
    int64_t rows, cols;         // upper bounds when dims_device is set
    const int64_t *dims_device; // true [rows, cols], or NULL
    int32_t row_order;
    int32_t out8;              // idx is 8-byte aligned: a pair is one store
    uint32_t *next_tile;       // ONE_PASS: the tile id dispenser
    unsigned long long *state; // ONE_PASS: per tile, flag | value
    int64_t *tile_offset;      // COUNT_SCAN_WRITE: per tile
    int32_t *tile_count;       // COUNT_SCAN_WRITE: per tile
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

// One tile of B threads: see the top of the file.
template <typename T, int B, int R = ROUNDS> struct tile {
    static constexpr int VEC = nzbits<T>::VEC;
    static constexpr int WARPS = B / 32;
    static constexpr int SEGS = R * WARPS;
    static constexpr int64_t SIZE = (int64_t)B * R * VEC;
    static_assert(SEGS % 32 == 0, "warp 0 scans SEGS / 32 segments per lane");

    struct smem {
        int32_t seg[SEGS];  // segment totals, then their offsets in the tile
        int32_t total;      // the tile's non-zeros
        uint32_t id;        // ONE_PASS: this block's tile
        int64_t offset;     // the tile's first output position
        uint64_t step_rows; // (B * VEC) / cols and % cols: one round further
        uint64_t step_cols;
        int64_t scratch[WARPS];
        int2 stage[WARPS][32 * VEC]; // a segment's pairs, in output order
    };

    __device__ static void set_step(smem &sm, int64_t cols)
    {
        if (cols > 0)
            plg::divmod((uint64_t)B * VEC, (uint64_t)cols, sm.step_rows, sm.step_cols);
    }

    __device__ static uint32_t scalar_mask(const T *x, int64_t i, int64_t n)
    {
        uint32_t m = 0;
#pragma unroll
        for (int e = 0; e < VEC; e++)
            if (i + e < n && nzbits<T>::nz(__ldg(x + i + e)))
                m |= 1u << e;
        return m;
    }

    // The masks of this thread's R vectors of the tile at `base`. All
    // vector loads are issued before any is used.
    template <bool ALIGNED>
    __device__ static void load(const T *x, int64_t base, int64_t n, uint32_t (&m)[R])
    {
        if (ALIGNED) {
            uint4 v[R];
#pragma unroll
            for (int j = 0; j < R; j++) {
                const int64_t i = base + ((int64_t)j * B + threadIdx.x) * VEC;
                v[j] = i + VEC <= n ? __ldg(reinterpret_cast<const uint4 *>(x + i))
                                    : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int j = 0; j < R; j++) {
                const int64_t i = base + ((int64_t)j * B + threadIdx.x) * VEC;
                m[j] = i + VEC <= n ? nzbits<T>::mask(v[j]) : scalar_mask(x, i, n);
            }
        } else {
#pragma unroll
            for (int j = 0; j < R; j++)
                m[j] = scalar_mask(x, base + ((int64_t)j * B + threadIdx.x) * VEC, n);
        }
    }

    // Per round: this lane's offset in its segment (pre), the segment's
    // total (tot, the same in every lane), which lane 0 also puts in seg[].
    __device__ static void count(const uint32_t (&m)[R], int (&pre)[R], int (&tot)[R],
                                 smem &sm)
    {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const unsigned below = (1u << lane) - 1u;
#pragma unroll
        for (int j = 0; j < R; j++) {
            const unsigned c = (unsigned)__popc(m[j]);
            int p = 0, s = 0;
#pragma unroll
            for (int b = 0; b < nzbits<T>::COUNT_BITS; b++) {
                const unsigned bal = __ballot_sync(FULL_MASK, (c >> b) & 1u);
                p += __popc(bal & below) << b;
                s += __popc(bal) << b;
            }
            pre[j] = p;
            tot[j] = s;
            if (lane == 0)
                sm.seg[j * WARPS + warp] = s;
        }
    }

    // Warp 0, after count() and a barrier: seg[] becomes the segments'
    // offsets in the tile; returns the tile's total to every lane.
    __device__ static int scan_segments(smem &sm, int lane)
    {
        constexpr int PER = SEGS / 32;
        int v[PER];
        int s = 0;
#pragma unroll
        for (int q = 0; q < PER; q++) {
            v[q] = sm.seg[lane * PER + q];
            s += v[q];
        }
        const int incl = plg::warp_inclusive_scan(s, lane);
        int off = incl - s;
#pragma unroll
        for (int q = 0; q < PER; q++) {
            sm.seg[lane * PER + q] = off;
            off += v[q];
        }
        return __shfl_sync(FULL_MASK, incl, 31);
    }

    // Writes the tile's pairs from output position `offset` on; `k` is the
    // true count (where the column half starts, column order).
    __device__ static void write(const nz_params &p, smem &sm, int64_t base, int64_t cols,
                                 int64_t offset, int64_t k, const uint32_t (&m)[R],
                                 const int (&pre)[R], const int (&tot)[R])
    {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        const uint64_t C = (uint64_t)cols;
        int2 *st = sm.stage[warp];
        uint32_t any = 0;
#pragma unroll
        for (int j = 0; j < R; j++)
            any |= m[j];
        // (r, c) of the thread's first element of the round; one division
        // per tile, then one add per round.
        uint64_t r = 0, c = 0;
        if (any)
            plg::divmod((uint64_t)(base + (int64_t)threadIdx.x * VEC), C, r, c);
#pragma unroll
        for (int j = 0; j < R; j++) {
            if (tot[j] != 0) { // the same in the whole warp
                if (m[j]) {
                    int at = pre[j];
#pragma unroll
                    for (int e = 0; e < VEC; e++) {
                        if ((m[j] >> e) & 1u) {
                            uint64_t ce = c + (uint64_t)e, re = r;
                            if (C >= (uint64_t)VEC) {
                                if (ce >= C) {
                                    ce -= C;
                                    re++;
                                }
                            } else {
                                re += ce / C;
                                ce %= C;
                            }
                            st[at++] = make_int2((int)re, (int)ce);
                        }
                    }
                }
                __syncwarp();
                const int64_t g = offset + sm.seg[j * WARPS + warp];
                for (int q = lane; q < tot[j]; q += 32) {
                    const int2 v = st[q];
                    const int64_t o = g + q;
                    if (p.row_order) {
                        if (p.out8) {
                            reinterpret_cast<int2 *>(p.idx)[o] = v;
                        } else {
                            p.idx[2 * o] = v.x;
                            p.idx[2 * o + 1] = v.y;
                        }
                    } else {
                        p.idx[o] = v.x;
                        p.idx[k + o] = v.y;
                    }
                }
                __syncwarp(); // the stage is reused next round
            }
            if (any) {
                c += sm.step_cols;
                r += sm.step_rows;
                if (c >= C) {
                    c -= C;
                    r++;
                }
            }
        }
    }
};

// ---- decoupled look-back (ONE_PASS) ----------------------------------------
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

// ---- count, scan, write (COUNT_SCAN_WRITE) ---------------------------------

template <typename T, bool ALIGNED>
__global__ void __launch_bounds__(BIG_B) count_kernel(nz_params p)
{
    using TL = tile<T, BIG_B>;
    __shared__ int64_t scratch[TL::WARPS];
    int64_t rows, cols;
    const int64_t n = true_dims(p, rows, cols);
    const int64_t t = blockIdx.x;
    if (t >= plg::ceil_div(n, TL::SIZE))
        return;
    uint32_t m[ROUNDS];
    TL::template load<ALIGNED>(static_cast<const T *>(p.x), t * TL::SIZE, n, m);
    int64_t c = 0;
#pragma unroll
    for (int j = 0; j < ROUNDS; j++)
        c += __popc(m[j]);
    c = block_sum64<BIG_B>(c, scratch);
    if (threadIdx.x == 0)
        p.tile_count[t] = (int32_t)c;
}

// One block: tile_offset = exclusive scan of tile_count; K = the total.
template <typename T> __global__ void __launch_bounds__(SCAN_B) scan_kernel(nz_params p)
{
    __shared__ int64_t warp_off[SCAN_B / 32];
    __shared__ int64_t chunk_total;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t rows, cols;
    const int64_t ntiles = plg::ceil_div(true_dims(p, rows, cols), tile<T, BIG_B>::SIZE);
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

// The tile's output offset from the look-back (LOOK_BACK: ONE_PASS and
// ONE_PASS_WIDE, tile ids from the dispenser) or from tile_offset
// (COUNT_SCAN_WRITE: tile blockIdx.x, K from the scan). R: vectors per
// thread per tile.
template <typename T, bool ALIGNED, bool LOOK_BACK, int R = ROUNDS>
__global__ void __launch_bounds__(BIG_B) write_kernel(nz_params p)
{
    using TL = tile<T, BIG_B, R>;
    __shared__ typename TL::smem sm;
    __shared__ int wfirst[TL::WARPS];
    int64_t rows, cols;
    const int64_t n = true_dims(p, rows, cols);
    const int64_t ntiles = plg::ceil_div(n, TL::SIZE);
    if (threadIdx.x == 0) {
        sm.id = LOOK_BACK ? atomicAdd(p.next_tile, 1u) : blockIdx.x;
        TL::set_step(sm, cols);
    }
    __syncthreads();
    const int64_t t = sm.id;
    if (t >= ntiles) { // the grid is sized for the upper bound
        if (LOOK_BACK && t == 0 && threadIdx.x == 0)
            *p.count = 0; // an empty input: no tile writes K
        return;
    }
    const int64_t base = t * TL::SIZE;
    uint32_t m[R];
    int pre[R], tot[R];
    TL::template load<ALIGNED>(static_cast<const T *>(p.x), base, n, m);
    TL::count(m, pre, tot, sm);
    __syncthreads();
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        const int total = TL::scan_segments(sm, lane);
        if (lane == 0) {
            sm.total = total;
            if (LOOK_BACK) // publish at once: later tiles wait on this
                reinterpret_cast<volatile unsigned long long *>(p.state)[t] =
                    (t == 0 ? FLAG_INCLUSIVE : FLAG_AGGREGATE) |
                    (unsigned long long)total;
            else
                sm.offset = p.tile_offset[t];
        }
    }
    __syncthreads();
    if (LOOK_BACK) {
        const int64_t off = t == 0 ? 0 : look_back<BIG_B>(p.state, t, wfirst, sm.scratch);
        if (threadIdx.x == 0) {
            if (t > 0)
                reinterpret_cast<volatile unsigned long long *>(p.state)[t] =
                    FLAG_INCLUSIVE | (unsigned long long)(off + sm.total);
            sm.offset = off;
            if (t == ntiles - 1)
                *p.count = off + sm.total;
        }
        __syncthreads();
    }
    TL::write(p, sm, base, cols, sm.offset, p.row_order ? 0 : *p.count, m, pre, tot);
}

// ---- one block (ONE_BLOCK) -------------------------------------------------

template <typename T, int B, bool ALIGNED>
__global__ void __launch_bounds__(B) one_block_kernel(nz_params p)
{
    using TL = tile<T, B>;
    __shared__ typename TL::smem sm;
    const T *x = static_cast<const T *>(p.x);
    int64_t rows, cols;
    const int64_t n = true_dims(p, rows, cols);
    if (threadIdx.x == 0)
        TL::set_step(sm, cols);
    int64_t k = 0;
    if (!p.row_order) {
        // The column half starts at K: count first (a small input, so the
        // second read comes from the caches).
        int64_t c = 0;
        for (int64_t base = 0; base < n; base += TL::SIZE) {
            uint32_t m[ROUNDS];
            TL::template load<ALIGNED>(x, base, n, m);
#pragma unroll
            for (int j = 0; j < ROUNDS; j++)
                c += __popc(m[j]);
        }
        k = block_sum64<B>(c, sm.scratch);
    }
    int64_t offset = 0;
    for (int64_t base = 0; base < n; base += TL::SIZE) {
        uint32_t m[ROUNDS];
        int pre[ROUNDS], tot[ROUNDS];
        TL::template load<ALIGNED>(x, base, n, m);
        TL::count(m, pre, tot, sm);
        __syncthreads();
        if (threadIdx.x < 32) {
            const int total = TL::scan_segments(sm, threadIdx.x);
            if (threadIdx.x == 0)
                sm.total = total;
        }
        __syncthreads();
        TL::write(p, sm, base, cols, offset, k, m, pre, tot);
        offset += sm.total;
        __syncthreads(); // the next tile reuses seg, total and the stage
    }
    if (threadIdx.x == 0)
        *p.count = offset;
}

// ---- launch ----------------------------------------------------------------

static_assert(tile<uint32_t, BIG_B>::SIZE == PLG_NZ_TILE,
              "cuda_launch.h sizes the workspace");

template <typename T, bool ALIGNED>
cudaError_t launch(const plg_nz_launch *a, nz_params &p, int plan, cudaStream_t s)
{
    using TL = tile<T, BIG_B>;
    const int64_t tiles = plg::ceil_div(a->rows * a->cols, TL::SIZE);
    if (plan == PLG_NZ_ONE_BLOCK) {
        // 1024 float32 threads or 512 float16 threads: a 16384-element tile
        // (a 128 x 128 input in one go), 32 KB of staging either way.
        constexpr int B = sizeof(T) == 4 ? 1024 : 512;
        one_block_kernel<T, B, ALIGNED><<<1, B, 0, s>>>(p);
        return cudaGetLastError();
    }
    if (tiles > INT32_MAX)
        return cudaErrorInvalidValue;
    const plg_nz_layout l = plg_nz_workspace_layout(tiles);
    unsigned char *ws = static_cast<unsigned char *>(a->workspace);
    if (plan == PLG_NZ_ONE_PASS) {
        p.next_tile = reinterpret_cast<uint32_t *>(ws);
        p.state = reinterpret_cast<unsigned long long *>(ws + l.state);
        cudaError_t e = cudaMemsetAsync(ws, 0, (size_t)l.offset, s);
        if (e != cudaSuccess)
            return e;
        write_kernel<T, ALIGNED, true><<<(unsigned)tiles, BIG_B, 0, s>>>(p);
        return cudaGetLastError();
    }
    if (plan == PLG_NZ_ONE_PASS_WIDE) {
        // Tiles of WIDE_ROUNDS vectors a thread: half as many tiles to walk
        // back over, fewer blocks resident.
        using TW = tile<T, BIG_B, WIDE_ROUNDS>;
        const int64_t wtiles = plg::ceil_div(a->rows * a->cols, TW::SIZE);
        p.next_tile = reinterpret_cast<uint32_t *>(ws);
        p.state = reinterpret_cast<unsigned long long *>(ws + l.state);
        cudaError_t e =
            cudaMemsetAsync(ws, 0, (size_t)plg_nz_workspace_layout(wtiles).offset, s);
        if (e != cudaSuccess)
            return e;
        write_kernel<T, ALIGNED, true, WIDE_ROUNDS>
            <<<(unsigned)(wtiles > 0 ? wtiles : 1), BIG_B, 0, s>>>(p);
        return cudaGetLastError();
    }
    p.tile_offset = reinterpret_cast<int64_t *>(ws + l.offset);
    p.tile_count = reinterpret_cast<int32_t *>(ws + l.count);
    const unsigned grid = (unsigned)(tiles > 0 ? tiles : 1);
    count_kernel<T, ALIGNED><<<grid, BIG_B, 0, s>>>(p);
    scan_kernel<T><<<1, SCAN_B, 0, s>>>(p);
    write_kernel<T, ALIGNED, false><<<grid, BIG_B, 0, s>>>(p);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_t(const plg_nz_launch *a, nz_params &p, int plan, cudaStream_t s)
{
    return plg::aligned16(a->x) ? launch<T, true>(a, p, plan, s)
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
    p.row_order = a->row_order;
    p.out8 = ((uintptr_t)a->idx & 7u) == 0;
    int plan = a->tactic;
    if (plan == PLG_NZ_AUTO)
        plan = n <= ONE_BLOCK_MAX ? PLG_NZ_ONE_BLOCK
               : a->row_order     ? PLG_NZ_ONE_PASS
                                  : PLG_NZ_COUNT_SCAN_WRITE;
    if ((plan == PLG_NZ_ONE_PASS || plan == PLG_NZ_ONE_PASS_WIDE) && !a->row_order)
        plan = PLG_NZ_COUNT_SCAN_WRITE; // the column half needs K first
    // An empty input (K = 0 from one tiny launch) or no scratch: one block.
    if (n == 0 || !a->workspace)
        plan = PLG_NZ_ONE_BLOCK;
    return (int)(a->dtype == PRT_FLOAT32 ? launch_t<uint32_t>(a, p, plan, s)
                                         : launch_t<uint16_t>(a, p, plan, s));
}
