#include "common/stats.h"

#include "common/hints.h"

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

static const char *choice_name(int hint, int index, int slot)
{
    static char names[5][WEFT_HINT_STRING_MAX];
    weft_hint_choice_text(hint, index, names[slot], sizeof names[slot]);
    return names[slot];
}

void weft_stats_report(const weft_stats *s, MPI_Comm comm, const char *path)
{
    enum { N = 2 * WEFT_STAT_KINDS + 4 };
    uint64_t local[N], total[N];
    for (int k = 0; k < WEFT_STAT_KINDS; k++) {
        local[k] = s->calls[k];
        local[WEFT_STAT_KINDS + k] = s->bytes[k];
    }
    local[N - 4] = s->degraded;
    local[N - 3] = s->syscalls;
    local[N - 2] = s->collective_aggregated;
    local[N - 1] = s->collective_independent;
    double times[5] = {s->access_seconds, weft_now() - s->opened_at, s->plan_seconds,
                       s->shuffle_seconds, s->file_seconds}, max_times[5];
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Reduce(local, total, N, MPI_UINT64_T, MPI_SUM, 0, comm);
    MPI_Reduce(times, max_times, 5, MPI_DOUBLE, MPI_MAX, 0, comm);
    int aggregators = s->aggregators, max_aggregators = 0;
    MPI_Reduce(&aggregators, &max_aggregators, 1, MPI_INT, MPI_MAX, 0, comm);
    /* Bytes each aggregator moved: rank 0 alone holds the O(P) array, at close only. */
    uint64_t *moved = rank == 0 ? calloc((size_t)size, sizeof *moved) : NULL;
    uint64_t mine = s->aggregator_bytes;
    MPI_Gather(&mine, 1, MPI_UINT64_T, moved, 1, MPI_UINT64_T, 0, comm);
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
           "open_seconds=%.6f access_seconds=%.6f bandwidth_MBps=%.1f "
           "collective{aggregated=%llu,independent=%llu,aggregators=%d,partition=%s,overlap=%s,"
           "read_overlap=%s,auto_trials=%llu,shuffle=%s,degraded=%llu,backend=%s,cycle_bytes=%lld} "
           "phases{plan=%.6f,shuffle=%.6f,file=%.6f} aggregator_bytes{",
           path, size, (unsigned long long)written, (unsigned long long)read,
           (unsigned long long)calls[WEFT_STAT_WRITE_CONTIG],
           (unsigned long long)calls[WEFT_STAT_WRITE_NONCONTIG],
           (unsigned long long)calls[WEFT_STAT_WRITE_COLLECTIVE],
           (unsigned long long)calls[WEFT_STAT_READ_CONTIG],
           (unsigned long long)calls[WEFT_STAT_READ_NONCONTIG],
           (unsigned long long)calls[WEFT_STAT_READ_COLLECTIVE],
           (unsigned long long)total[N - 3], max_times[1], max_times[0],
           (double)(written + read) / access / 1e6, (unsigned long long)total[N - 2],
           (unsigned long long)total[N - 1], max_aggregators,
           choice_name(WEFT_HINT_WEFT_PARTITION, s->partition, 0),
           choice_name(WEFT_HINT_WEFT_OVERLAP, s->overlap[1], 1),
           choice_name(WEFT_HINT_WEFT_OVERLAP, s->overlap[0], 4), (unsigned long long)s->auto_trials,
           choice_name(WEFT_HINT_WEFT_SHUFFLE, s->shuffle, 3), (unsigned long long)total[N - 4],
           choice_name(WEFT_HINT_WEFT_BACKEND, s->backend, 2), (long long)s->cycle_bytes,
           max_times[2], max_times[3], max_times[4]);
    /* rank:bytes of every rank that moved file data as an aggregator (the first 64). */
    int listed = 0;
    for (int r = 0; moved && r < size; r++) {
        if (!moved[r])
            continue;
        if (listed++ == 64) {
            printf(",...");
            break;
        }
        printf("%s%d:%llu", listed > 1 ? "," : "", r, (unsigned long long)moved[r]);
    }
    printf("}\n");
    free(moved);
    fflush(stdout);
}
