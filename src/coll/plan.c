/*
 * The collective plan: aggregator choice and placement, file-domain partitioners and cycle
 * windows (DESIGN.md §3.1; docs/COLLECTIVE.md describes exactly what is built here).  Pure
 * functions: no MPI calls, only MPI_Offset.
 *
 * Representation (all partitioners):
 *   - aggregator_rank[a]: the rank of aggregator a; the list is in domain order.
 *   - domain_start[a], domain_end[a]: for EVEN / EVEN_ALIGNED the contiguous domain of a; for
 *     the cyclic partitioners the byte range of a's group ([start, end) for STATIC_CYCLIC, which
 *     is GROUP_CYCLIC with one group).  domain_start is non-decreasing in a, which is what
 *     weft_plan_owner's binary search relies on.
 *   - unit: 1 for EVEN (no alignment), stripe_unit for EVEN_ALIGNED, the block size for the
 *     cyclic partitioners.  group_size: 1 for contiguous domains, aggregators per group for
 *     the cyclic ones.
 */
#include "coll/plan.h"
#include "coll/aggregators.h"
#include "common/error.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Block size of STATIC/GROUP_CYCLIC when the stripe unit is unknown: min(cb_buffer_size, this)
 * (Lustre's default stripe size). */
#define WEFT_PLAN_DEFAULT_UNIT ((MPI_Offset)1 << 20)

#define PLAN_ERR_ARG WEFT_MPI_ERR(MPI_ERR_ARG)

static inline MPI_Offset min_off(MPI_Offset a, MPI_Offset b) { return a < b ? a : b; }
static inline MPI_Offset max_off(MPI_Offset a, MPI_Offset b) { return a > b ? a : b; }
static inline MPI_Offset ceil_div(MPI_Offset a, MPI_Offset b) { return a / b + (a % b != 0); }

static inline int is_contiguous(weft_partition_kind k)
{
    return k == WEFT_PARTITION_EVEN || k == WEFT_PARTITION_EVEN_ALIGNED;
}


/* Cycles of a contiguous domain [ds, de) whose cycles are cut from `base` (<= ds). */
static MPI_Offset contiguous_cycles(MPI_Offset base, MPI_Offset de, MPI_Offset cb)
{
    return ceil_div(de - base, cb);
}

/* Cyclic partitioners: the blocks of aggregator a (absolute block indices first, first + s,
 * ...); returns how many.  Group g's blocks are [gb_lo, gb_hi]; within a group block b belongs
 * to the group's aggregator b % s (absolute, like file striping). */
static MPI_Offset cyclic_blocks(const weft_plan *p, int a, MPI_Offset *first, MPI_Offset *step)
{
    int G = p->group_size;
    int g0 = (a / G) * G;
    int s = p->naggregators - g0 < G ? p->naggregators - g0 : G;
    int j = a - g0;
    MPI_Offset u = p->unit;
    MPI_Offset gb_lo = p->domain_start[a] / u, gb_hi = (p->domain_end[a] - 1) / u;
    MPI_Offset f = gb_lo + ((j - gb_lo % s) % s + s) % s;
    *first = f;
    *step = s;
    return f <= gb_hi ? (gb_hi - f) / s + 1 : 0;
}

static MPI_Offset aggregator_cycles(const weft_plan *p, int a)
{
    if (is_contiguous(p->partition)) {
        MPI_Offset base = p->domain_start[a];
        if (p->partition == WEFT_PARTITION_EVEN_ALIGNED)
            base -= base % p->unit;
        return contiguous_cycles(base, p->domain_end[a], p->cycle_bytes);
    }
    MPI_Offset first, step;
    MPI_Offset nb = cyclic_blocks(p, a, &first, &step);
    return ceil_div(nb, p->cycle_bytes / p->unit);
}

static int plan_build(const weft_plan_input *in, weft_plan *plan)
{
    if (!plan)
        return PLAN_ERR_ARG;
    memset(plan, 0, sizeof *plan);
    if (!in || in->nprocs <= 0 || !in->first || !in->end || in->cb_buffer_size <= 0 ||
        in->cb_nodes < 0 || in->total_bytes < 0 || in->auto_bytes < 0 || in->stripe_unit < 0 || in->stripe_count < 0 ||
        (int)in->partition < (int)WEFT_PARTITION_EVEN ||
        (int)in->partition > (int)WEFT_PARTITION_GROUP_CYCLIC)
        return PLAN_ERR_ARG;
    if (in->node_of_rank) {
        if (in->nnodes <= 0)
            return PLAN_ERR_ARG;
        for (int r = 0; r < in->nprocs; r++)
            if (in->node_of_rank[r] < 0 || in->node_of_rank[r] >= in->nnodes)
                return PLAN_ERR_ARG;
    }

    /* Global range over the ranks that access something. */
    MPI_Offset start = 0, end = 0;
    int any = 0;
    for (int r = 0; r < in->nprocs; r++) {
        MPI_Offset f = in->first[r], e = in->end[r];
        if (f < 0)
            continue;
        if (e < f)
            return PLAN_ERR_ARG;
        if (e == f)
            continue;
        if (!any || f < start)
            start = f;
        if (!any || e > end)
            end = e;
        any = 1;
    }

    weft_partition_kind kind = in->partition;
    if (kind == WEFT_PARTITION_EVEN_ALIGNED && in->stripe_unit == 0)
        kind = WEFT_PARTITION_EVEN;
    MPI_Offset unit;
    if (kind == WEFT_PARTITION_EVEN)
        unit = 1;
    else if (in->stripe_unit > 0)
        unit = in->stripe_unit;
    else
        unit = min_off(in->cb_buffer_size, WEFT_PLAN_DEFAULT_UNIT);
    MPI_Offset cycle_bytes = in->cb_buffer_size;
    if (kind != WEFT_PARTITION_EVEN)
        cycle_bytes = max_off(unit, cycle_bytes - cycle_bytes % unit);
    /* Keep block and cycle arithmetic (b * unit + unit, base + c * cycle_bytes) in range. */
    if (unit > INT64_MAX / 4 || cycle_bytes > INT64_MAX / 4 ||
        end > INT64_MAX - 2 * max_off(unit, cycle_bytes))
        return PLAN_ERR_ARG;

    /* The cb_config_list in effect.  With cb_nodes > 0 a list of only "*" entries is ignored
     * and cb_nodes alone decides (any number per node, round-robin): the hint's default "*:*"
     * arrives whether or not the user wrote it, so it cannot be read as a restriction.  A list
     * naming hosts does restrict where they go, and cb_nodes takes the first cb_nodes of it. */
    config_list config = {0};
    config_entry default_entry = {NULL, 0, in->cb_nodes > 0 ? INT_MAX : 1};
    const config_list fallback = {&default_entry, 1, 0};
    const config_list *use = &fallback;
    if (in->cb_config_list) {
        int prc = weft_config_parse(in->cb_config_list, &config);
        if (prc < 0) {
            free(config.entry);
            return prc;
        }
        if (prc > 0)
            plan->config_fallback = WEFT_PLAN_CONFIG_MALFORMED;
        else if (config.names_host || in->cb_nodes == 0)
            use = &config;
    }

    plan->start = start;
    plan->end = end;
    plan->partition = kind;
    plan->unit = unit;
    plan->group_size = 1;
    plan->cycle_bytes = cycle_bytes;
    if (start == end) {
        /* Nothing accessed: no aggregators, no cycles (plan->start == plan->end == 0).  Still
         * say whether a host list matches, so the fallback is reported whatever the range. */
        plan->start = plan->end = 0;
        int probe, got = use->names_host ? weft_select_aggregators(in, use, 1, &probe) : 1;
        free(config.entry);
        if (got < 0)
            return got;
        if (got == 0)
            plan->config_fallback = WEFT_PLAN_CONFIG_NO_MATCH;
        return 0;
    }

    /* Never more than needed: every aggregator gets at least one unit of the range. */
    MPI_Offset range = end - start;
    MPI_Offset b0 = start / unit, b1 = (end - 1) / unit, nblocks = b1 - b0 + 1;
    MPI_Offset cap;
    if (kind == WEFT_PARTITION_EVEN) {
        MPI_Offset min_domain = in->stripe_unit > 0 ? in->stripe_unit : 1;
        cap = max_off(1, range / min_domain);
    } else {
        cap = nblocks;
    }
    /* weft_aggregators=auto: at least a full buffer of data per aggregator, since one with
     * less still pays the synchronisation of whole cycles for it. */
    if (in->aggregators_auto) {
        MPI_Offset each = in->auto_bytes > 0 ? in->auto_bytes : in->cb_buffer_size;
        cap = min_off(cap, max_off(1, ceil_div(in->total_bytes, each)));
    }
    int want = in->cb_nodes > 0 && in->cb_nodes < in->nprocs ? in->cb_nodes : in->nprocs;
    if (want > cap)
        want = (int)cap;

    /* Choose them in list order; every limit above keeps a prefix of that order. */
    int *ranks = malloc((size_t)want * sizeof *ranks);
    if (!ranks) {
        free(config.entry);
        return -ENOMEM;
    }
    int A = weft_select_aggregators(in, use, want, ranks);
    if (A == 0) {
        /* Only a list of host names that match no node gets here. */
        plan->config_fallback = WEFT_PLAN_CONFIG_NO_MATCH;
        use = &fallback;
        A = weft_select_aggregators(in, use, want, ranks);
    }
    free(config.entry);
    if (A < 0) {
        free(ranks);
        return A;
    }

    /* Partition.  EVEN may trim A further so that no domain is empty. */
    MPI_Offset *ds = malloc((size_t)A * sizeof *ds);
    MPI_Offset *de = malloc((size_t)A * sizeof *de);
    if (!ds || !de) {
        free(ranks), free(ds), free(de);
        return -ENOMEM;
    }
    if (kind == WEFT_PARTITION_EVEN) {
        MPI_Offset fd = ceil_div(range, A);
        A = (int)ceil_div(range, fd);        /* (A-1) * fd < range: none empty */
        for (int a = 0; a < A; a++) {
            ds[a] = start + (MPI_Offset)a * fd;
            de[a] = a == A - 1 ? end : ds[a] + fd;
        }
    } else if (kind == WEFT_PARTITION_EVEN_ALIGNED) {
        /* Whole blocks, as evenly as possible: domain a starts at block b0 + floor(nblocks*a/A)
         * (A <= nblocks, so every domain has at least one block; sizes differ by at most one
         * block).  Interior bounds are multiples of the stripe unit. */
        MPI_Offset q = nblocks / A, r = nblocks % A;
        for (int a = 0; a < A; a++) {
            ds[a] = a == 0 ? start : (b0 + q * a + (r * a) / A) * unit;
            de[a] = a == A - 1 ? end : (b0 + q * (a + 1) + (r * (a + 1)) / A) * unit;
        }
    } else {
        int G = A;
        if (kind == WEFT_PARTITION_GROUP_CYCLIC && in->stripe_count > 0 && in->stripe_count < A)
            G = in->stripe_count;
        plan->group_size = G;
        /* Group ranges proportional to group size (equal while groups are full), on block
         * bounds: the group starting at aggregator k starts at block b0 + floor(nblocks*k/A). */
        MPI_Offset q = nblocks / A, r = nblocks % A;
        for (int g0 = 0; g0 < A; g0 += G) {
            int g1 = A - g0 < G ? A : g0 + G;
            MPI_Offset lo = b0 + q * g0 + (r * g0) / A;
            MPI_Offset hi = b0 + q * g1 + (r * g1) / A;
            MPI_Offset s = g0 == 0 ? start : lo * unit;
            MPI_Offset e = g1 == A ? end : hi * unit;
            for (int a = g0; a < g1; a++)
                ds[a] = s, de[a] = e;
        }
    }
    plan->naggregators = A;
    plan->aggregator_rank = ranks;
    plan->domain_start = ds;
    plan->domain_end = de;

    /* Cycles: the busiest aggregator's count; refuse what does not fit in an int. */
    MPI_Offset maxc = 0;
    for (int a = 0; a < A; a++)
        maxc = max_off(maxc, aggregator_cycles(plan, a));
    if (maxc > INT_MAX)
        return PLAN_ERR_ARG;
    plan->ncycles = (int)maxc;
    /* The window count must fit an int too (a tiny stripe unit with a huge buffer). */
    if (!is_contiguous(kind) && weft_plan_window_max(plan) < 0)
        return PLAN_ERR_ARG;
    return 0;
}

MPI_Offset weft_plan_cycle_size(MPI_Offset share, MPI_Offset requested, int senders)
{
    MPI_Offset want = requested;
    if (want <= 0) /* auto: small enough to stay in cache, large enough per sender */
        want = max_off(WEFT_PLAN_CYCLE_AUTO_MIN,
                       (MPI_Offset)(senders > 0 ? senders : 0) * WEFT_PLAN_CYCLE_PER_SENDER);
    return max_off(1, min_off(want, share));
}

int weft_plan_build(const weft_plan_input *in, weft_plan *plan)
{
    int rc = plan_build(in, plan);
    if (rc < 0 && plan) {
        weft_plan_free(plan);
        memset(plan, 0, sizeof *plan);
    }
    return rc;
}

void weft_plan_free(weft_plan *plan)
{
    if (!plan)
        return;
    free(plan->aggregator_rank);
    free(plan->domain_start);
    free(plan->domain_end);
    plan->aggregator_rank = NULL;
    plan->domain_start = plan->domain_end = NULL;
    plan->naggregators = 0;
    plan->ncycles = 0;
}

int weft_plan_owner(const weft_plan *plan, MPI_Offset offset, MPI_Offset *run_end)
{
    if (!plan || plan->naggregators <= 0 || offset < plan->start || offset >= plan->end)
        return PLAN_ERR_ARG;
    /* Largest a with domain_start[a] <= offset (domain_start is non-decreasing). */
    int lo = 0, hi = plan->naggregators - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (plan->domain_start[mid] <= offset)
            lo = mid;
        else
            hi = mid - 1;
    }
    int a = lo;
    if (is_contiguous(plan->partition)) {
        if (run_end)
            *run_end = plan->domain_end[a];
        return a;
    }
    /* a is the last aggregator of its group; find the one owning the block. */
    int G = plan->group_size;
    int g0 = (a / G) * G;
    int s = plan->naggregators - g0 < G ? plan->naggregators - g0 : G;
    MPI_Offset b = offset / plan->unit;
    int owner = g0 + (int)(b % s);
    if (run_end)
        *run_end = s == 1 ? plan->domain_end[a]
                          : min_off(plan->domain_end[a], (b + 1) * plan->unit);
    return owner;
}

int weft_plan_window(const weft_plan *plan, int a, int cycle, MPI_Offset *offsets,
                     MPI_Offset *lengths, int max)
{
    if (!plan || a < 0 || a >= plan->naggregators || cycle < 0 || max < 0)
        return PLAN_ERR_ARG;
    if (cycle >= plan->ncycles)
        return 0;
    if (is_contiguous(plan->partition)) {
        MPI_Offset ds = plan->domain_start[a], de = plan->domain_end[a];
        MPI_Offset base = ds;
        if (plan->partition == WEFT_PARTITION_EVEN_ALIGNED)
            base -= base % plan->unit;       /* cycles on stripe bounds (seed 000 §5.1.3) */
        MPI_Offset lo = base + (MPI_Offset)cycle * plan->cycle_bytes;
        if (lo >= de)
            return 0;
        MPI_Offset hi = min_off(lo + plan->cycle_bytes, de);
        lo = max_off(lo, ds);
        if (max < 1)
            return PLAN_ERR_ARG;
        offsets[0] = lo;
        lengths[0] = hi - lo;
        return 1;
    }
    MPI_Offset first, step;
    MPI_Offset nb = cyclic_blocks(plan, a, &first, &step);
    MPI_Offset bpc = plan->cycle_bytes / plan->unit;
    MPI_Offset k0 = (MPI_Offset)cycle * bpc;
    if (k0 >= nb)
        return 0;
    MPI_Offset k1 = min_off(k0 + bpc, nb);
    MPI_Offset u = plan->unit;
    MPI_Offset lo_clip = plan->domain_start[a], hi_clip = plan->domain_end[a];
    int n = 0;
    for (MPI_Offset k = k0; k < k1; k++) {
        MPI_Offset b = first + k * step;
        MPI_Offset lo = max_off(b * u, lo_clip), hi = min_off(b * u + u, hi_clip);
        if (n > 0 && offsets[n - 1] + lengths[n - 1] == lo) {
            lengths[n - 1] += hi - lo;
            continue;
        }
        if (n >= max)
            return PLAN_ERR_ARG;
        offsets[n] = lo;
        lengths[n] = hi - lo;
        n++;
    }
    return n;
}

int weft_plan_window_max(const weft_plan *plan)
{
    if (!plan || plan->naggregators <= 0)
        return 0;
    if (is_contiguous(plan->partition))
        return 1;
    /* Blocks of one aggregator are adjacent only when its group has one member (then a cycle
     * is one range); otherwise a cycle has at most min(blocks per cycle, its blocks). */
    MPI_Offset bpc = plan->cycle_bytes / plan->unit, best = 0;
    int G = plan->group_size;
    for (int g0 = 0; g0 < plan->naggregators; g0 += G) {
        int s = plan->naggregators - g0 < G ? plan->naggregators - g0 : G;
        MPI_Offset m = 1;
        if (s > 1) {
            /* Block counts inside a group differ by at most one: ceil(blocks / s) is the
             * most any member has. */
            MPI_Offset gb_lo = plan->domain_start[g0] / plan->unit;
            MPI_Offset gb_hi = (plan->domain_end[g0] - 1) / plan->unit;
            m = min_off(bpc, ceil_div(gb_hi - gb_lo + 1, s));
        }
        best = max_off(best, m);
    }
    return best > INT_MAX ? -1 : (int)best;
}

typedef struct {
    MPI_Offset first, end;
} plan_span;

static int span_cmp(const void *x, const void *y)
{
    const plan_span *p = x, *q = y;
    if (p->first != q->first)
        return p->first < q->first ? -1 : 1;
    return (p->end > q->end) - (p->end < q->end);
}

size_t weft_plan_interleaved_scratch_bytes(int nprocs)
{
    return nprocs > 0 ? (size_t)nprocs * sizeof(plan_span) : 0;
}

int weft_plan_interleaved_in(const weft_plan_input *in, void *scratch)
{
    if (!in || in->nprocs <= 0 || !in->first || !in->end)
        return 0;
    /* Ranges in rank order (the common case: rank r writes block r) need no sort. */
    int sorted = 1, inter = 0;
    MPI_Offset reach = 0, last_first = -1;
    for (int r = 0; r < in->nprocs && sorted; r++) {
        if (in->first[r] < 0 || in->end[r] <= in->first[r])
            continue;
        if (in->first[r] < last_first)
            sorted = 0;
        else if (last_first >= 0 && in->first[r] < reach)
            inter = 1;
        last_first = in->first[r];
        reach = max_off(reach, in->end[r]);
    }
    if (sorted)
        return inter;
    plan_span *s = scratch;
    int n = 0;
    for (int r = 0; r < in->nprocs; r++)
        if (in->first[r] >= 0 && in->end[r] > in->first[r])
            s[n].first = in->first[r], s[n].end = in->end[r], n++;
    qsort(s, (size_t)n, sizeof *s, span_cmp);
    reach = 0;
    for (int i = 0; i < n && !inter; i++) {
        if (i > 0 && s[i].first < reach)
            inter = 1;
        reach = max_off(reach, s[i].end);
    }
    return inter;
}

int weft_plan_interleaved(const weft_plan_input *in)
{
    if (!in || in->nprocs <= 0 || !in->first || !in->end)
        return 0;
    void *scratch = malloc(weft_plan_interleaved_scratch_bytes(in->nprocs));
    if (!scratch)
        return -ENOMEM;
    int inter = weft_plan_interleaved_in(in, scratch);
    free(scratch);
    return inter;
}
