/* Shared by weft's real-client test programs (tests/clients): the data layout and the
 * expected values.  client_common.py holds the same rules for the Python side and for the
 * serial checks (h5dump / ncmpidump); the two must stay in step.
 *
 * A global NY x NX array of int32 is split over a py x px process grid (rank = ry*px + rx),
 * with uneven blocks.  Every element's value depends on the seed, its global index and the
 * rank that owns it, so data written to the wrong place is caught. */
#ifndef WEFT_CLIENT_COMMON_H
#define WEFT_CLIENT_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* px = the largest divisor of np not above sqrt(np); py = np / px. */
static inline void client_grid(int np, int *py, int *px)
{
    int best = 1;
    for (int d = 1; d * d <= np; d++)
        if (np % d == 0)
            best = d;
    *px = best;
    *py = np / best;
}

/* Part idx of n items split into `parts` nearly equal ranges: [lo, hi). */
static inline void client_range(long n, int parts, int idx, long *lo, long *hi)
{
    *lo = n * idx / parts;
    *hi = n * (idx + 1) / parts;
}

static inline int client_part_of(long n, int parts, long k)
{
    for (int p = 0; p < parts; p++) {
        long lo, hi;
        client_range(n, parts, p, &lo, &hi);
        if (k >= lo && k < hi)
            return p;
    }
    return -1;
}

static inline int client_owner(int np, long ny, long nx, long i, long j)
{
    int py, px;
    client_grid(np, &py, &px);
    return client_part_of(ny, py, i) * px + client_part_of(nx, px, j);
}

static inline int32_t client_value(uint32_t seed, long i, long j, long nx, int owner)
{
    uint32_t h = seed * 2654435761u;
    h ^= (uint32_t)(i * nx + j) * 40503u;
    h ^= (uint32_t)(owner + 1) * 0x01000193u;
    h ^= h >> 13;
    return (int32_t)(h & 0x7fffffffu);
}

/* Seed from argv (decimal) or, failing that, from the clock; always printed by the caller. */
static inline uint32_t client_seed(int argc, char **argv, int idx)
{
    if (argc > idx)
        return (uint32_t)strtoul(argv[idx], NULL, 10);
    return (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 8);
}

#endif
