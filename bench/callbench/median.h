/* The median of per-repetition times, shared by the per-call timers of bench/callbench. */
#ifndef WEFT_BENCH_MEDIAN_H
#define WEFT_BENCH_MEDIAN_H

#include <stdlib.h>

static int median_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) in place and returns its median (the upper one for even n). */
static inline double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), median_by_value);
    return v[n / 2];
}

#endif
