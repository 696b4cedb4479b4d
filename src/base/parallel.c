/* base_parallel_for: serial until a pool is installed for the thread. */
#include "parallel.h"

void base_parallel_for(int64_t n, int64_t grain, base_range_fn fn, void *arg)
{
    (void)grain;
    if (n > 0)
        fn(arg, 0, n);
}

int32_t base_parallel_threads(void)
{
    return 1;
}
