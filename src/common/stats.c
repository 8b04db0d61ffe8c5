#include "common/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double weft_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int weft_stats_enabled(void)
{
    const char *s = getenv("WEFT_STATS");
    return s && *s && strcmp(s, "0") != 0;
}

void weft_stats_report(const weft_stats *s, MPI_Comm comm, const char *path)
{
    enum { N = 2 * WEFT_STAT_KINDS + 1 };
    uint64_t local[N], total[N];
    for (int k = 0; k < WEFT_STAT_KINDS; k++) {
        local[k] = s->calls[k];
        local[WEFT_STAT_KINDS + k] = s->bytes[k];
    }
    local[N - 1] = s->syscalls;
    double times[2] = {s->access_seconds, weft_now() - s->opened_at}, max_times[2];
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Reduce(local, total, N, MPI_UINT64_T, MPI_SUM, 0, comm);
    MPI_Reduce(times, max_times, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank != 0)
        return;
    const uint64_t *calls = total, *bytes = total + WEFT_STAT_KINDS;
    uint64_t written = bytes[WEFT_STAT_WRITE_CONTIG] + bytes[WEFT_STAT_WRITE_NONCONTIG] +
                       bytes[WEFT_STAT_WRITE_COLLECTIVE];
    uint64_t read = bytes[WEFT_STAT_READ_CONTIG] + bytes[WEFT_STAT_READ_NONCONTIG] +
                    bytes[WEFT_STAT_READ_COLLECTIVE];
    double access = max_times[0] > 0 ? max_times[0] : 1e-12;
    printf("weft-stats %s: ranks=%d written=%llu read=%llu "
           "write_calls{contig=%llu,noncontig=%llu,collective=%llu} "
           "read_calls{contig=%llu,noncontig=%llu,collective=%llu} syscalls=%llu "
           "open_seconds=%.6f access_seconds=%.6f bandwidth_MBps=%.1f\n",
           path, size, (unsigned long long)written, (unsigned long long)read,
           (unsigned long long)calls[WEFT_STAT_WRITE_CONTIG],
           (unsigned long long)calls[WEFT_STAT_WRITE_NONCONTIG],
           (unsigned long long)calls[WEFT_STAT_WRITE_COLLECTIVE],
           (unsigned long long)calls[WEFT_STAT_READ_CONTIG],
           (unsigned long long)calls[WEFT_STAT_READ_NONCONTIG],
           (unsigned long long)calls[WEFT_STAT_READ_COLLECTIVE],
           (unsigned long long)total[N - 1], max_times[1], max_times[0],
           (double)(written + read) / access / 1e6);
    fflush(stdout);
}
