/*
 * Per-file counters behind WEFT_STATS=1: what weft moved, how, and how long it took.  At close
 * the counters are reduced over the file's communicator and rank 0 prints one line that
 * starts with "weft-stats <path>:" (tests and the benchmark parse it).
 */
#ifndef WEFT_STATS_H
#define WEFT_STATS_H

#include <mpi.h>
#include <stdint.h>

typedef enum {
    WEFT_STAT_WRITE_CONTIG,     /* independent, one contiguous run */
    WEFT_STAT_WRITE_NONCONTIG,  /* independent, list I/O */
    WEFT_STAT_WRITE_COLLECTIVE,
    WEFT_STAT_READ_CONTIG,
    WEFT_STAT_READ_NONCONTIG,
    WEFT_STAT_READ_COLLECTIVE,
    WEFT_STAT_KINDS
} weft_stat_kind;

typedef struct weft_stats {
    uint64_t calls[WEFT_STAT_KINDS];
    uint64_t bytes[WEFT_STAT_KINDS];
    uint64_t syscalls;          /* pread/pwrite family calls issued */
    double access_seconds;      /* time inside data access calls */
    /* collective engine */
    double plan_seconds;        /* allgather, plan, view exchange */
    double shuffle_seconds;     /* moving data between ranks and aggregators */
    double file_seconds;        /* aggregators' file access */
    uint64_t collective_aggregated;  /* collective calls that went through aggregation */
    uint64_t collective_independent; /* ... that went straight to the file (automatic, hints) */
    int aggregators;            /* in the last aggregated call */
    long long cycle_bytes;      /* bytes per aggregator per cycle in the last aggregated call */
    int partition;              /* weft_partition of the last aggregated call (hint index) */
    int overlap[2];             /* overlap schedule of the last aggregated read [0] and write [1]
                                 * (auto's pick) */
    int backend;                /* transfer backend in use (after any fallback) */
    int shuffle;                /* weft_shuffle of the last aggregated call (hint index) */
    uint64_t degraded;          /* aggregated calls whose overlap schedule the shuffle degraded */
    uint64_t auto_trials;       /* calls in which weft_overlap=auto timed its candidate write
                                 * schedules (the same on every rank; rank 0's is printed) */
    uint64_t aggregator_bytes;  /* bytes this rank moved to or from the file as an aggregator */
    double opened_at;           /* weft_now() at open */
} weft_stats;

double weft_now(void);
int weft_stats_enabled(void);

/* Collective over comm: reduce and let rank 0 print the summary line. */
void weft_stats_report(const weft_stats *s, MPI_Comm comm, const char *path);

#endif
