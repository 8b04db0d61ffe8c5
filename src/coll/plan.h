/*
 * The collective plan (DESIGN.md §3.1, seed 000 §2.2): from every rank's access range, choose
 * the aggregators, split the global range into file domains with a partitioner, and cut each
 * domain into cycles of at most cb_buffer_size bytes.  Everything here is a pure function of
 * its input (no MPI calls), so tests run it for up to 10^6 simulated ranks (tests/coll).
 *
 * Memory: O(P) for the input arrays the caller owns, O(aggregators) for the plan.
 */
#ifndef WEFT_COLL_PLAN_H
#define WEFT_COLL_PLAN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    WEFT_PARTITION_EVEN,          /* contiguous domains of equal size (ROMIO) */
    WEFT_PARTITION_EVEN_ALIGNED,  /* contiguous domains, bounds rounded to the stripe unit */
    WEFT_PARTITION_STATIC_CYCLIC, /* unit-sized blocks dealt round-robin to aggregators */
    WEFT_PARTITION_GROUP_CYCLIC,  /* aggregators in groups of stripe_count; static-cyclic
                                     inside each group, groups own contiguous ranges */
} weft_partition_kind;

typedef struct weft_plan_input {
    int nprocs;
    const MPI_Offset *first;      /* per rank: first byte it accesses; < 0 if it accesses none */
    const MPI_Offset *end;        /* per rank: one past the last byte it accesses */
    const int *node_of_rank;      /* per rank: node index in [0, nnodes); NULL = every rank
                                     is a node of its own */
    int nnodes;
    int cb_nodes;                 /* aggregators wanted; 0 = as cb_config_list says.  With a
                                     list of only "*" entries: this many, any number per node;
                                     with a list naming hosts: the first this many of it */
    const char *cb_config_list;   /* ROMIO syntax "name[:N],...", name a host or "*", N a
                                     count or "*" (all); e.g. "*:2" = two per node,
                                     "io1:2,*:1"; NULL = "*:1".  A malformed list, or one that
                                     matches no host, means "*:1" (plan.config_fallback) */
    const char *const *node_name; /* per node index [0, nnodes): its host name, matched
                                     ASCII case-insensitively against cb_config_list; NULL =
                                     names unknown (only "*" entries match); an entry may be
                                     NULL (that node matches only "*").  Ignored when
                                     node_of_rank is NULL */
    MPI_Offset cb_buffer_size;    /* bytes per aggregator per cycle (> 0): the cycle size,
                                     weft_plan_cycle_size of the hints */
    weft_partition_kind partition;
    MPI_Offset stripe_unit;       /* file-system stripe size; 0 = unknown */
    int stripe_count;             /* file-system stripe count; 0 = unknown */
    int aggregators_auto;         /* weft_aggregators: 0 = the hints decide the count ("hints");
                                     1 = "auto": at most max(1, ceil(total_bytes / auto_bytes))
                                     of the hint-derived aggregators */
    MPI_Offset auto_bytes;        /* aggregators_auto: data each aggregator gets at least;
                                     0 = cb_buffer_size, the cycle size (what the engine
                                     passes) */
    MPI_Offset total_bytes;       /* bytes all ranks access in this call, summed (>= 0); only
                                     read when aggregators_auto is set */
} weft_plan_input;

/* plan.config_fallback: why cb_config_list was replaced by "*:1" (ROMIO's default). */
enum {
    WEFT_PLAN_CONFIG_OK = 0,        /* the list was used (or was NULL) */
    WEFT_PLAN_CONFIG_MALFORMED = 1, /* the list does not parse */
    WEFT_PLAN_CONFIG_NO_MATCH = 2,  /* it parses but names no host that has ranks */
};

typedef struct weft_plan {
    int naggregators;             /* 0 exactly when the range is empty (then ncycles = 0) */
    int *aggregator_rank;         /* rank of aggregator a, a in [0, naggregators) */
    MPI_Offset start, end;        /* global accessed range [start, end); start == end: none */
    weft_partition_kind partition;/* the one used (even-aligned without stripe_unit: even) */
    MPI_Offset unit;              /* block size of the cyclic partitioners (and alignment);
                                     1 for even */
    int group_size;               /* group-cyclic: aggregators per group (static-cyclic:
                                     naggregators; even/even-aligned: 1) */
    MPI_Offset *domain_start;     /* even/even-aligned: domain of aggregator a */
    MPI_Offset *domain_end;       /*   (group-cyclic: the range of a's group; static-cyclic:
                                        [start, end)); domain_start is non-decreasing */
    MPI_Offset cycle_bytes;       /* window span per cycle (<= cb_buffer_size, except that it
                                     is at least one unit: a stripe unit above cb_buffer_size
                                     gives cycles of one unit) */
    int ncycles;                  /* cycles the busiest aggregator needs */
    int config_fallback;          /* WEFT_PLAN_CONFIG_*: non-zero when cb_config_list was
                                     ignored for "*:1" (set whatever the range, so the engine
                                     can warn once) */
} weft_plan;

/* weft_cycle_size=0 (auto): cycles of at least this many bytes, and at least this many more per
 * rank with data, so each sender's message per cycle stays large at scale. */
enum { WEFT_PLAN_CYCLE_AUTO_MIN = 512 * 1024, WEFT_PLAN_CYCLE_PER_SENDER = 64 * 1024 };

/* The bytes per aggregator per cycle (the plan input's cb_buffer_size): `requested` (the
 * weft_cycle_size hint; 0 = auto, see above) but never more than `share` (cb_buffer_size,
 * halved when two cycles are in flight), and at least 1.  `senders` is the number of ranks
 * with data in the call.  Pure; the same on every rank given the same arguments. */
MPI_Offset weft_plan_cycle_size(MPI_Offset share, MPI_Offset requested, int senders);

/* Build the plan.  Returns 0, or a negative code (common/error.h) for invalid input or no
 * memory.  Aggregators are chosen in cb_config_list order ("*" entries round-robin across
 * nodes, lowest ranks first within a node), never more than nprocs, never more than needed
 * to cover the range (nor, with aggregators_auto, than the data fills cycles for).
 * O(nprocs + nnodes + list length) time and temporary memory. */
int weft_plan_build(const weft_plan_input *in, weft_plan *plan);
void weft_plan_free(weft_plan *plan);

/* Index of the aggregator owning file byte `offset` (start <= offset < end); *run_end gets the
 * end (exclusive) of the run of bytes from `offset` that the same aggregator owns (the maximal
 * run; run_end may be NULL).  O(log A).  Negative (MPI_ERR_ARG) for an offset outside. */
int weft_plan_owner(const weft_plan *plan, MPI_Offset offset, MPI_Offset *run_end);

/* The file ranges aggregator `a` handles in cycle `cycle`, ascending and disjoint, at most
 * `max` of them: returns how many (0 when the aggregator has nothing in that cycle).  Their
 * total length is at most plan->cycle_bytes; in the aggregator's cycle buffer they lie back to
 * back in this order.  A cycle's ranges are within the accessed range. */
int weft_plan_window(const weft_plan *plan, int a, int cycle, MPI_Offset *offsets,
                     MPI_Offset *lengths, int max);

/* Negative (MPI_ERR_ARG) for a bad aggregator or cycle < 0, or when `max` is too small; 0 for
 * cycle >= the aggregator's cycles. */

/* Upper bound on the number of ranges weft_plan_window returns (for the caller's arrays);
 * 1 for even/even-aligned; 0 for a plan without aggregators. */
int weft_plan_window_max(const weft_plan *plan);

/* Non-zero when the ranks' ranges interleave (some rank's range overlaps another's), the
 * case where aggregation pays even for large accesses (romio_cb_*=automatic). */
int weft_plan_interleaved(const weft_plan_input *in);   /* -ENOMEM if out of memory */

/* The same without allocating: `scratch` holds weft_plan_interleaved_scratch_bytes(nprocs)
 * bytes (used only when the ranges are not in rank order).  Cannot fail, so ranks that
 * decide a call's path from it never diverge. */
size_t weft_plan_interleaved_scratch_bytes(int nprocs);
int weft_plan_interleaved_in(const weft_plan_input *in, void *scratch);

#endif
