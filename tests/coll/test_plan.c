/*
 * Tests of the collective plan (src/coll/plan.c): aggregator count and placement, the four
 * partitioners, cycle windows, owner lookup and the interleave test.  Pure functions, so
 * everything runs in one process with simulated ranks (up to 10^6).
 *
 * The central check (check_plan) is exact for every size: it collects every window of every
 * cycle of every aggregator, sorts them, and walks the owner runs of [start, end) with
 * weft_plan_owner; the windows must tile each run with the run's owner.  Small cases also
 * compare owner() at every byte.
 */
#include "helpers.h"
#include "coll/plan.h"
#include "common/error.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <strings.h>

static uint64_t rng;

/* ------------------------------------------------------------------------------------ */
/* Input construction                                                                   */

typedef struct {
    int nprocs, nnodes;
    MPI_Offset *first, *end;
    int *node;
} ranks_t;

static void ranks_alloc(ranks_t *r, int nprocs, int nnodes)
{
    r->nprocs = nprocs;
    r->nnodes = nnodes;
    r->first = malloc((size_t)nprocs * sizeof *r->first);
    r->end = malloc((size_t)nprocs * sizeof *r->end);
    r->node = malloc((size_t)nprocs * sizeof *r->node);
    CHECK(r->first && r->end && r->node, "out of memory");
    for (int i = 0; i < nprocs; i++) {
        r->first[i] = -1;
        r->end[i] = 0;
        r->node[i] = (int)((long long)i * nnodes / nprocs); /* block placement */
    }
}

static void ranks_free(ranks_t *r)
{
    free(r->first), free(r->end), free(r->node);
}

static weft_plan_input make_input(const ranks_t *r, weft_partition_kind kind, int cb_nodes,
                                  const char *config, MPI_Offset cb, MPI_Offset su, int sc)
{
    weft_plan_input in = {
        .nprocs = r->nprocs, .first = r->first, .end = r->end, .node_of_rank = r->node,
        .nnodes = r->nnodes, .cb_nodes = cb_nodes, .cb_config_list = config,
        .cb_buffer_size = cb, .partition = kind, .stripe_unit = su, .stripe_count = sc,
    };
    return in;
}

static const char *kind_name(weft_partition_kind k)
{
    switch (k) {
    case WEFT_PARTITION_EVEN: return "even";
    case WEFT_PARTITION_EVEN_ALIGNED: return "even-aligned";
    case WEFT_PARTITION_STATIC_CYCLIC: return "static-cyclic";
    case WEFT_PARTITION_GROUP_CYCLIC: return "group-cyclic";
    }
    return "?";
}

/* ------------------------------------------------------------------------------------ */
/* Expected values, from the documented rules (docs/COLLECTIVE.md)                       */

static MPI_Offset cdiv(MPI_Offset a, MPI_Offset b) { return (a + b - 1) / b; }
static MPI_Offset mino(MPI_Offset a, MPI_Offset b) { return a < b ? a : b; }
static MPI_Offset maxo(MPI_Offset a, MPI_Offset b) { return a > b ? a : b; }

/* Reference cb_config_list: parsed and applied the plain way, O(P) per pick, written from
 * the rules in docs/COLLECTIVE.md without looking at plan.c's walk. */
typedef struct {
    char name[64];                /* "" for "*" */
    long long count;              /* LLONG_MAX for ":*" */
} ref_entry;

static char *ref_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Entries, or -1 when malformed. */
static int ref_parse(const char *list, ref_entry *e, int max)
{
    char buf[4096];
    if (strlen(list) >= sizeof buf)
        return -1;
    strcpy(buf, list);
    int n = 0;
    char *piece = buf;
    for (;;) {
        char *comma = strchr(piece, ',');
        if (comma)
            *comma = '\0';
        char *colon = strchr(piece, ':');
        if (colon)
            *colon = '\0';
        char *name = ref_trim(piece);
        if (!*name || strlen(name) >= sizeof e->name || n == max)
            return -1;
        for (char *q = name; *q; q++)
            if (isspace((unsigned char)*q) || (*q == '*' && strcmp(name, "*")))
                return -1;
        strcpy(e[n].name, strcmp(name, "*") ? name : "");
        e[n].count = 1;
        if (colon) {
            char *num = ref_trim(colon + 1);
            if (!strcmp(num, "*")) {
                e[n].count = LLONG_MAX;
            } else {
                if (!*num || strspn(num, "0123456789") != strlen(num))
                    return -1;
                e[n].count = strlen(num) > 15 ? LLONG_MAX : strtoll(num, NULL, 10);
                if (e[n].count < 1)
                    return -1;
            }
        }
        n++;
        if (!comma)
            return n;
        piece = comma + 1;
    }
}

static int ref_node(const weft_plan_input *in, int r)
{
    return in->node_of_rank ? in->node_of_rank[r] : r;
}

/* Lowest not-yet-chosen rank of node n, or -1. */
static int ref_lowest(const weft_plan_input *in, const char *used, int n)
{
    for (int r = 0; r < in->nprocs; r++)
        if (!used[r] && ref_node(in, r) == n)
            return r;
    return -1;
}

/* The aggregators the entries choose, in order (no limit). */
static int ref_apply(const weft_plan_input *in, const ref_entry *e, int ne, int *out)
{
    int N = in->node_of_rank ? in->nnodes : in->nprocs, got = 0;
    const char *const *names = in->node_of_rank ? in->node_name : NULL;
    char *used = calloc((size_t)in->nprocs, 1);
    CHECK(used, "out of memory");
    for (int k = 0; k < ne; k++) {
        /* One pass takes one rank from every matching node; "*:N" = N passes, "host:N" =
         * passes until N taken. */
        long long taken = 0, passes = 0;
        for (;;) {
            int picked = 0;
            for (int n = 0; n < N; n++) {
                if (e[k].name[0] && !(names && names[n] && !strcasecmp(names[n], e[k].name)))
                    continue;
                if (e[k].name[0] && taken == e[k].count)
                    break;
                int r = ref_lowest(in, used, n);
                if (r >= 0)
                    used[r] = 1, out[got++] = r, picked++, taken++;
            }
            passes++;
            if (!picked || (e[k].name[0] ? taken == e[k].count : passes == e[k].count))
                break;
        }
    }
    free(used);
    return got;
}

/* The reference walk costs O(P) per pick; larger cases use the "*"-only formula. */
#define REF_MAX_PROCS 2000

typedef struct {
    MPI_Offset start, end;
    weft_partition_kind kind;
    MPI_Offset unit, cycle_bytes;
    int want;        /* aggregators the hints give (the reference list's length) */
    int *cand;       /* the reference aggregator list, in order (NULL: not computed) */
    int per_node;    /* the list in effect is one "*:N" entry: N; otherwise 0 */
    int fallback;    /* expected plan.config_fallback */
} expect_t;

static expect_t expect_of(const weft_plan_input *in)
{
    expect_t x = {0};
    int any = 0;
    for (int r = 0; r < in->nprocs; r++) {
        if (in->first[r] < 0 || in->end[r] <= in->first[r])
            continue;
        if (!any || in->first[r] < x.start)
            x.start = in->first[r];
        if (!any || in->end[r] > x.end)
            x.end = in->end[r];
        any = 1;
    }
    x.kind = in->partition;
    if (x.kind == WEFT_PARTITION_EVEN_ALIGNED && in->stripe_unit == 0)
        x.kind = WEFT_PARTITION_EVEN;
    if (x.kind == WEFT_PARTITION_EVEN)
        x.unit = 1;
    else
        x.unit = in->stripe_unit > 0 ? in->stripe_unit : mino(in->cb_buffer_size, 1 << 20);
    x.cycle_bytes = x.kind == WEFT_PARTITION_EVEN
                        ? in->cb_buffer_size
                        : maxo(x.unit, in->cb_buffer_size / x.unit * x.unit);

    /* The list in effect: the default when NULL, malformed, matching nothing, or (with
     * cb_nodes) naming no host. */
    ref_entry e[64], dflt = {"", in->cb_nodes > 0 ? LLONG_MAX : 1};
    int ne = in->cb_config_list ? ref_parse(in->cb_config_list, e, 64) : -1;
    if (in->cb_config_list && ne < 0)
        x.fallback = WEFT_PLAN_CONFIG_MALFORMED;
    int names_host = 0;
    for (int k = 0; k < ne; k++)
        names_host |= e[k].name[0] != '\0';
    if (in->nprocs > REF_MAX_PROCS) {
        /* Too large for the reference walk: only one "*" entry (or the cb_nodes rule) here,
         * whose count is sum over nodes of min(ranks, N); check_placement checks the order. */
        CHECK(ne < 0 || (!names_host && (ne == 1 || in->cb_nodes > 0)),
              "large cases take one \"*\" entry");
        x.per_node = in->cb_nodes > 0 ? INT_MAX
                     : ne == 1 ? (int)mino(e[0].count, INT_MAX) : 1;
        int N = in->node_of_rank ? in->nnodes : in->nprocs;
        int *size = calloc((size_t)N, sizeof *size);
        CHECK(size, "out of memory");
        for (int r = 0; r < in->nprocs; r++)
            size[ref_node(in, r)]++;
        long long placeable = 0;
        for (int n = 0; n < N; n++)
            placeable += mino(size[n], x.per_node);
        free(size);
        x.want = (int)mino(placeable, in->cb_nodes > 0 ? in->cb_nodes : in->nprocs);
        return x;
    }
    x.cand = malloc((size_t)in->nprocs * sizeof *x.cand);
    CHECK(x.cand, "out of memory");
    int n = 0;
    if (ne > 0 && (names_host || in->cb_nodes == 0)) {
        n = ref_apply(in, e, ne, x.cand);
        if (n == 0)
            x.fallback = WEFT_PLAN_CONFIG_NO_MATCH;
        else if (ne == 1 && !names_host)
            x.per_node = e[0].count > INT_MAX ? INT_MAX : (int)e[0].count;
    }
    if (n == 0) {
        n = ref_apply(in, &dflt, 1, x.cand);
        x.per_node = in->cb_nodes > 0 ? INT_MAX : 1;
    }
    if (in->cb_nodes > 0 && n > in->cb_nodes)
        n = in->cb_nodes;
    x.want = n;
    return x;
}

/* ------------------------------------------------------------------------------------ */
/* Checks                                                                                */

typedef struct {
    MPI_Offset off, len;
    int agg, cycle;
} win_t;

static int win_cmp(const void *x, const void *y)
{
    const win_t *p = x, *q = y;
    return (p->off > q->off) - (p->off < q->off);
}

/* Placement: distinct valid ranks; on each node the lowest ranks; list order = round-robin
 * (pass = index within its node; passes non-decreasing, nodes ascending within a pass); no
 * node holds more than per_node; a node with fewer than the busiest-minus-one is exhausted. */
static void check_placement(const weft_plan_input *in, const weft_plan *p, int per_node)
{
    int P = in->nprocs, N = in->nnodes, A = p->naggregators;
    char *used = calloc((size_t)P, 1);
    int *size = calloc((size_t)N, sizeof *size), *got = calloc((size_t)N, sizeof *got);
    CHECK(used && size && got, "out of memory");
    for (int r = 0; r < P; r++)
        size[in->node_of_rank[r]]++;
    int prev_pass = 0, prev_node = -1;
    for (int a = 0; a < A; a++) {
        int r = p->aggregator_rank[a];
        CHECK(r >= 0 && r < P, "aggregator %d has rank %d of %d", a, r, P);
        CHECK(!used[r], "rank %d is aggregator twice", r);
        used[r] = 1;
        int n = in->node_of_rank[r];
        int pass = got[n]++;
        CHECK(pass < per_node, "node %d has %d aggregators, limit %d", n, got[n], per_node);
        CHECK(pass > prev_pass || (pass == prev_pass && n > prev_node),
              "aggregator %d (rank %d, node %d, pass %d) out of round-robin order "
              "(previous: node %d pass %d)", a, r, n, pass, prev_node, prev_pass);
        prev_pass = pass, prev_node = n;
    }
    /* Lowest ranks of each node: every non-aggregator rank on a node is above all its
     * aggregators. */
    int *maxagg = malloc((size_t)N * sizeof *maxagg);
    CHECK(maxagg, "out of memory");
    for (int n = 0; n < N; n++)
        maxagg[n] = -1;
    for (int r = 0; r < P; r++)
        if (used[r])
            maxagg[in->node_of_rank[r]] = r;
    for (int r = 0; r < P; r++)
        CHECK(used[r] || r > maxagg[in->node_of_rank[r]],
              "rank %d on node %d skipped but a higher rank %d is an aggregator", r,
              in->node_of_rank[r], maxagg[in->node_of_rank[r]]);
    /* Spread: if any node got k+1 aggregators, every node got min(size, per_node, k). */
    int most = 0;
    for (int n = 0; n < N; n++)
        most = got[n] > most ? got[n] : most;
    for (int n = 0; n < N; n++)
        CHECK(got[n] >= most - 1 || got[n] == size[n] || got[n] == per_node,
              "node %d has %d aggregators while another has %d", n, got[n], most);
    /* With A <= nodes that have ranks, all aggregators are on different nodes. */
    int nonempty = 0;
    for (int n = 0; n < N; n++)
        nonempty += size[n] > 0;
    if (A <= nonempty)
        CHECK(most <= 1, "%d aggregators on %d nodes, but one node has %d", A, nonempty, most);
    free(used), free(size), free(got), free(maxagg);
}

/* Expected aggregator count: the reference list, limited by the cap (and auto), then the
 * even trim. */
static int expect_count(const weft_plan_input *in, const expect_t *x)
{
    if (x->start == x->end)
        return 0;
    MPI_Offset R = x->end - x->start;
    MPI_Offset nb = (x->end - 1) / x->unit - x->start / x->unit + 1;
    MPI_Offset A = x->want;
    if (x->kind == WEFT_PARTITION_EVEN)
        A = mino(A, maxo(1, R / (in->stripe_unit > 0 ? in->stripe_unit : 1)));
    else
        A = mino(A, nb);
    if (in->aggregators_auto)
        A = mino(A, maxo(1, cdiv(in->total_bytes, in->cb_buffer_size)));
    if (x->kind == WEFT_PARTITION_EVEN)
        A = cdiv(R, cdiv(R, A));
    return (int)A;
}

/* Partitioner-specific shape of the domains. */
static void check_domains(const weft_plan_input *in, const weft_plan *p, const expect_t *x)
{
    int A = p->naggregators;
    MPI_Offset u = p->unit;
    if (x->kind == WEFT_PARTITION_EVEN || x->kind == WEFT_PARTITION_EVEN_ALIGNED) {
        CHECK(p->group_size == 1, "group_size %d for a contiguous partitioner", p->group_size);
        CHECK(p->domain_start[0] == p->start && p->domain_end[A - 1] == p->end, "domains "
              "[%lld, %lld) do not span the range", (long long)p->domain_start[0],
              (long long)p->domain_end[A - 1]);
        MPI_Offset fd = cdiv(p->end - p->start, A);
        for (int a = 0; a < A; a++) {
            CHECK(p->domain_start[a] < p->domain_end[a], "domain %d empty", a);
            if (a > 0)
                CHECK(p->domain_start[a] == p->domain_end[a - 1], "domains %d, %d not adjacent",
                      a - 1, a);
            if (x->kind == WEFT_PARTITION_EVEN && a < A - 1)
                CHECK(p->domain_end[a] - p->domain_start[a] == fd,
                      "even domain %d has %lld bytes, expected %lld", a,
                      (long long)(p->domain_end[a] - p->domain_start[a]), (long long)fd);
            if (x->kind == WEFT_PARTITION_EVEN_ALIGNED && a > 0)
                CHECK(p->domain_start[a] % in->stripe_unit == 0,
                      "aligned bound %lld not a multiple of %lld", (long long)p->domain_start[a],
                      (long long)in->stripe_unit);
        }
        if (x->kind == WEFT_PARTITION_EVEN_ALIGNED && A > 1) {
            /* No stripe shared: block counts per domain (covering) sum to the total. */
            MPI_Offset sum = 0, su = in->stripe_unit, lo = INT64_MAX, hi = 0;
            for (int a = 0; a < A; a++) {
                MPI_Offset nb = (p->domain_end[a] - 1) / su - p->domain_start[a] / su + 1;
                sum += nb, lo = mino(lo, nb), hi = maxo(hi, nb);
            }
            CHECK(hi - lo <= 1, "aligned domains of %lld to %lld stripes", (long long)lo,
                  (long long)hi);
            CHECK(sum == (p->end - 1) / su - p->start / su + 1, "two domains share a stripe");
        }
        return;
    }
    int G = x->kind == WEFT_PARTITION_STATIC_CYCLIC || in->stripe_count == 0 ||
                    in->stripe_count >= A ? A : in->stripe_count;
    CHECK(p->group_size == G, "group_size %d, expected %d", p->group_size, G);
    for (int a = 0; a < A; a++) {
        int g0 = a / G * G;
        CHECK(p->domain_start[a] == p->domain_start[g0] && p->domain_end[a] == p->domain_end[g0],
              "aggregator %d has a different group range than its group's first", a);
        if (a == g0 && a > 0) {
            CHECK(p->domain_start[a] == p->domain_end[a - 1], "group ranges not adjacent");
            CHECK(p->domain_start[a] % u == 0, "group bound %lld not on a block",
                  (long long)p->domain_start[a]);
        }
        CHECK(p->domain_start[a] < p->domain_end[a], "group of %d empty", a);
    }
    CHECK(p->domain_start[0] == p->start && p->domain_end[A - 1] == p->end, "groups do not span");
    /* Group ranges are proportional to the group's size: each within one block of it. */
    MPI_Offset nb = (p->end - 1) / u - p->start / u + 1;
    for (int g0 = 0; g0 < A; g0 += G) {
        int s = A - g0 < G ? A - g0 : G;
        MPI_Offset gb = (p->domain_end[g0] - 1) / u - p->domain_start[g0] / u + 1;
        MPI_Offset ideal_lo = nb * s / A, ideal_hi = cdiv(nb * s, A);
        CHECK(gb >= ideal_lo - 1 && gb <= ideal_hi + 1, "group at %d has %lld blocks, ideal "
              "%lld..%lld", g0, (long long)gb, (long long)ideal_lo, (long long)ideal_hi);
    }
}

/* The owner a byte must have by the documented rule. */
static int expect_owner(const weft_plan *p, MPI_Offset x)
{
    int A = p->naggregators;
    if (p->partition == WEFT_PARTITION_EVEN || p->partition == WEFT_PARTITION_EVEN_ALIGNED) {
        for (int a = 0; a < A; a++)
            if (x >= p->domain_start[a] && x < p->domain_end[a])
                return a;
        return -1;
    }
    int G = p->group_size;
    for (int g0 = 0; g0 < A; g0 += G) {
        if (x >= p->domain_start[g0] && x < p->domain_end[g0]) {
            int s = A - g0 < G ? A - g0 : G;
            return g0 + (int)((x / p->unit) % s);
        }
    }
    return -1;
}

static long long nchecked_plans;

/* Build, check every invariant, free.  brute: also compare owner() at every byte. Returns the
 * aggregator count. */
static int check_plan(const weft_plan_input *in, int brute, const char *what)
{
    weft_plan p;
    int rc = weft_plan_build(in, &p);
    CHECK(rc == 0, "%s: build returned %d", what, rc);
    expect_t x = expect_of(in);
    CHECK(p.start == x.start && p.end == x.end, "%s: range [%lld, %lld), expected [%lld, %lld)",
          what, (long long)p.start, (long long)p.end, (long long)x.start, (long long)x.end);
    CHECK(p.partition == x.kind, "%s: partition %s, expected %s", what, kind_name(p.partition),
          kind_name(x.kind));
    CHECK(p.cycle_bytes == x.cycle_bytes, "%s: cycle_bytes %lld, expected %lld", what,
          (long long)p.cycle_bytes, (long long)x.cycle_bytes);
    if (p.partition != WEFT_PARTITION_EVEN)
        CHECK(p.unit == x.unit, "%s: unit %lld, expected %lld", what, (long long)p.unit,
              (long long)x.unit);
    int A = p.naggregators;
    int expA = expect_count(in, &x);
    CHECK(A == expA, "%s: %d aggregators, expected %d (want %d)", what, A, expA, x.want);
    CHECK(p.config_fallback == x.fallback, "%s: config_fallback %d, expected %d", what,
          p.config_fallback, x.fallback);
    for (int a = 0; x.cand && a < A; a++)
        CHECK(p.aggregator_rank[a] == x.cand[a], "%s: aggregator %d is rank %d, the reference "
              "says %d", what, a, p.aggregator_rank[a], x.cand[a]);
    free(x.cand);
    if (x.start == x.end) {
        CHECK(A == 0 && p.ncycles == 0, "%s: empty range but %d aggregators, %d cycles", what,
              A, p.ncycles);
        MPI_Offset re;
        CHECK(weft_plan_owner(&p, 0, &re) < 0, "%s: owner in an empty plan", what);
        CHECK(weft_plan_window_max(&p) == 0, "%s: window_max of an empty plan", what);
        weft_plan_free(&p);
        nchecked_plans++;
        return 0;
    }
    CHECK(A >= 1 && A <= x.want, "%s: %d aggregators, want %d", what, A, x.want);
    if (x.per_node > 0 && in->node_of_rank)
        check_placement(in, &p, x.per_node);
    check_domains(in, &p, &x);

    /* Windows of every cycle of every aggregator. */
    int wmax = weft_plan_window_max(&p);
    CHECK(wmax >= 1, "%s: window_max %d", what, wmax);
    size_t cap = 1024, nw = 0;
    win_t *w = malloc(cap * sizeof *w);
    MPI_Offset *off = malloc((size_t)wmax * sizeof *off), *len = malloc((size_t)wmax * sizeof *len);
    MPI_Offset *owned = calloc((size_t)A, sizeof *owned);
    CHECK(w && off && len && owned, "out of memory");
    int last_busy = -1;
    for (int a = 0; a < A; a++) {
        int done = 0;
        for (int c = 0; c < p.ncycles; c++) {
            int n = weft_plan_window(&p, a, c, off, len, wmax);
            CHECK(n >= 0 && n <= wmax, "%s: window(%d, %d) returned %d (max %d)", what, a, c, n,
                  wmax);
            if (n == 0) {
                done = 1;
                continue;
            }
            CHECK(!done, "%s: aggregator %d has an empty cycle before cycle %d", what, a, c);
            if (c > last_busy)
                last_busy = c;
            MPI_Offset total = 0;
            for (int i = 0; i < n; i++) {
                CHECK(len[i] > 0, "%s: empty range in window(%d, %d)", what, a, c);
                CHECK(off[i] >= p.start && off[i] + len[i] <= p.end,
                      "%s: window(%d, %d) range [%lld, +%lld) outside [%lld, %lld)", what, a, c,
                      (long long)off[i], (long long)len[i], (long long)p.start, (long long)p.end);
                if (i > 0)
                    CHECK(off[i] > off[i - 1] + len[i - 1], "%s: window(%d, %d) ranges %d, %d "
                          "not ascending, disjoint and separate", what, a, c, i - 1, i);
                total += len[i];
                if (nw == cap) {
                    cap *= 2;
                    w = realloc(w, cap * sizeof *w);
                    CHECK(w, "out of memory");
                }
                w[nw++] = (win_t){off[i], len[i], a, c};
            }
            CHECK(total <= p.cycle_bytes, "%s: window(%d, %d) holds %lld > cycle_bytes %lld",
                  what, a, c, (long long)total, (long long)p.cycle_bytes);
            owned[a] += total;
        }
        CHECK(weft_plan_window(&p, a, p.ncycles, off, len, wmax) == 0,
              "%s: window beyond ncycles", what);
        CHECK(owned[a] > 0, "%s: aggregator %d owns nothing", what, a);
    }
    CHECK(last_busy == p.ncycles - 1, "%s: ncycles %d but the last busy cycle is %d", what,
          p.ncycles, last_busy);

    /* The windows tile [start, end) exactly along the owner runs. */
    qsort(w, nw, sizeof *w, win_cmp);
    size_t i = 0;
    MPI_Offset pos = p.start;
    int prev_owner = -1;
    while (pos < p.end) {
        MPI_Offset re = -1;
        int a = weft_plan_owner(&p, pos, &re);
        CHECK(a >= 0 && a < A, "%s: owner(%lld) = %d", what, (long long)pos, a);
        CHECK(re > pos && re <= p.end, "%s: owner(%lld) run end %lld", what, (long long)pos,
              (long long)re);
        CHECK(a != prev_owner, "%s: run at %lld not maximal (owner %d continues)", what,
              (long long)pos, a);
        CHECK(a == expect_owner(&p, pos), "%s: owner(%lld) = %d, rule says %d", what,
              (long long)pos, a, expect_owner(&p, pos));
        MPI_Offset q = pos;
        while (q < re) {
            CHECK(i < nw, "%s: no window covers %lld", what, (long long)q);
            CHECK(w[i].off == q, "%s: window at %lld where %lld was expected", what,
                  (long long)w[i].off, (long long)q);
            CHECK(w[i].agg == a, "%s: byte %lld owned by %d but in a window of %d", what,
                  (long long)q, a, w[i].agg);
            CHECK(w[i].off + w[i].len <= re, "%s: window of %d at %lld passes its run end %lld",
                  what, a, (long long)q, (long long)re);
            q += w[i].len;
            i++;
        }
        prev_owner = a;
        pos = re;
    }
    CHECK(i == nw, "%s: %zu windows beyond the range", what, nw - i);

    if (brute) {
        for (MPI_Offset b = p.start; b < p.end; b++) {
            MPI_Offset re;
            int a = weft_plan_owner(&p, b, &re);
            CHECK(a == expect_owner(&p, b), "%s: owner(%lld) = %d, rule says %d", what,
                  (long long)b, a, expect_owner(&p, b));
            CHECK(re > b && re <= p.end && (re == p.end || expect_owner(&p, re) != a),
                  "%s: owner(%lld) run end %lld", what, (long long)b, (long long)re);
            for (MPI_Offset y = b + 1; y < re; y++)
                CHECK(expect_owner(&p, y) == a, "%s: byte %lld in the run of %lld has another "
                      "owner", what, (long long)y, (long long)b);
        }
    } else {
        /* Sampled owner queries in the middle of runs. */
        for (int k = 0; k < 1000; k++) {
            MPI_Offset b = p.start + (MPI_Offset)test_rand_below(&rng, (uint64_t)(p.end - p.start));
            MPI_Offset re;
            int a = weft_plan_owner(&p, b, &re);
            CHECK(a == expect_owner(&p, b), "%s: owner(%lld) = %d, rule says %d", what,
                  (long long)b, a, expect_owner(&p, b));
            CHECK(expect_owner(&p, re - 1) == a && (re == p.end || expect_owner(&p, re) != a),
                  "%s: owner(%lld) run end %lld", what, (long long)b, (long long)re);
        }
    }
    CHECK(weft_plan_owner(&p, p.start - 1, NULL) < 0 && weft_plan_owner(&p, p.end, NULL) < 0,
          "%s: owner outside the range", what);
    CHECK(weft_plan_window(&p, A, 0, off, len, wmax) < 0 &&
          weft_plan_window(&p, -1, 0, off, len, wmax) < 0 &&
          weft_plan_window(&p, 0, -1, off, len, wmax) < 0, "%s: bad window arguments", what);
    free(w), free(off), free(len), free(owned);
    weft_plan_free(&p);
    CHECK(p.aggregator_rank == NULL && p.naggregators == 0, "free leaves a stale plan");
    nchecked_plans++;
    return A;
}

/* ------------------------------------------------------------------------------------ */
/* Tests                                                                                 */

static const weft_partition_kind kinds[] = {WEFT_PARTITION_EVEN, WEFT_PARTITION_EVEN_ALIGNED,
                                            WEFT_PARTITION_STATIC_CYCLIC,
                                            WEFT_PARTITION_GROUP_CYCLIC};

/* Exact layouts worked out by hand. */
static void test_examples(void)
{
    ranks_t r;
    ranks_alloc(&r, 4, 4);            /* one rank per node */
    r.first[0] = 5, r.end[0] = 500;
    r.first[1] = -1, r.end[1] = 1LL << 40;  /* accesses nothing: its end is ignored */
    r.first[2] = 500, r.end[2] = 1000;
    r.first[3] = 100, r.end[3] = 100;        /* empty access */
    weft_plan p;
    weft_plan_input in;

    /* even: 995 bytes over 3 aggregators (cb_nodes=3): ceil = 332. */
    in = make_input(&r, WEFT_PARTITION_EVEN, 3, NULL, 100, 0, 0);
    CHECK(weft_plan_build(&in, &p) == 0, "build");
    CHECK(p.start == 5 && p.end == 1000 && p.naggregators == 3, "even range/count");
    CHECK(p.domain_start[1] == 337 && p.domain_start[2] == 669 && p.domain_end[2] == 1000,
          "even bounds %lld %lld", (long long)p.domain_start[1], (long long)p.domain_start[2]);
    CHECK(p.aggregator_rank[0] == 0 && p.aggregator_rank[1] == 1 && p.aggregator_rank[2] == 2,
          "placement");
    CHECK(p.cycle_bytes == 100 && p.ncycles == 4, "even cycles %lld %d", (long long)p.cycle_bytes,
          p.ncycles);
    MPI_Offset off[8], len[8];
    CHECK(weft_plan_window(&p, 1, 3, off, len, 8) == 1 && off[0] == 637 && len[0] == 32,
          "even window");
    weft_plan_free(&p);
    check_plan(&in, 1, "example even");

    /* even-aligned, stripe 100: blocks 0..9 over 4 -> bounds at blocks floor(10a/4) = 2, 5, 7. */
    in = make_input(&r, WEFT_PARTITION_EVEN_ALIGNED, 4, NULL, 250, 100, 0);
    CHECK(weft_plan_build(&in, &p) == 0, "build");
    CHECK(p.naggregators == 4 && p.domain_start[1] == 200 && p.domain_start[2] == 500 &&
          p.domain_start[3] == 700 && p.domain_end[3] == 1000, "aligned bounds");
    /* cycle_bytes 200; cycles of domain 1 [200,500): [200,400), [400,500); of domain 0 from
     * block 0 (cycles on stripe bounds): [5,200). */
    CHECK(p.cycle_bytes == 200 && p.ncycles == 2, "aligned cycles");
    CHECK(weft_plan_window(&p, 0, 0, off, len, 8) == 1 && off[0] == 5 && len[0] == 195,
          "aligned window 0");
    CHECK(weft_plan_window(&p, 0, 1, off, len, 8) == 0, "aligned window 0/1");
    CHECK(weft_plan_window(&p, 1, 1, off, len, 8) == 1 && off[0] == 400 && len[0] == 100,
          "aligned window 1/1");
    weft_plan_free(&p);
    check_plan(&in, 1, "example aligned");
    /* Domain 0 starting mid-stripe: [150, 300) with 100-byte cycles is [150,200), [200,300). */
    ranks_t r1;
    ranks_alloc(&r1, 2, 2);
    r1.first[0] = 150, r1.end[0] = 550;
    in = make_input(&r1, WEFT_PARTITION_EVEN_ALIGNED, 0, NULL, 100, 100, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 2 && p.domain_start[1] == 300 &&
          p.ncycles == 3, "aligned mid-stripe");
    CHECK(weft_plan_window(&p, 0, 0, off, len, 8) == 1 && off[0] == 150 && len[0] == 50,
          "aligned mid-stripe window 0");
    CHECK(weft_plan_window(&p, 0, 1, off, len, 8) == 1 && off[0] == 200 && len[0] == 100,
          "aligned mid-stripe window 1");
    weft_plan_free(&p);
    ranks_free(&r1);

    /* even-aligned, 10 blocks, 6 wanted: all 6 used, 1 or 2 blocks each. */
    ranks_t r6;
    ranks_alloc(&r6, 6, 6);
    r6.first[0] = 0, r6.end[0] = 1000;
    in = make_input(&r6, WEFT_PARTITION_EVEN_ALIGNED, 0, NULL, 100, 100, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 6 && p.domain_start[1] == 100 &&
          p.domain_start[2] == 300 && p.domain_start[5] == 800, "aligned 10 blocks over 6");
    weft_plan_free(&p);
    /* even-aligned without a stripe unit is even. */
    in = make_input(&r6, WEFT_PARTITION_EVEN_ALIGNED, 0, NULL, 100, 0, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.partition == WEFT_PARTITION_EVEN &&
          p.naggregators == 6 && p.domain_start[1] == 167, "aligned fallback");
    weft_plan_free(&p);

    /* static-cyclic, stripe 100, 3 aggregators: block b -> b % 3, absolute. */
    in = make_input(&r, WEFT_PARTITION_STATIC_CYCLIC, 3, NULL, 250, 100, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 3, "static build");
    CHECK(p.cycle_bytes == 200 && p.unit == 100 && p.group_size == 3, "static unit");
    MPI_Offset re;
    CHECK(weft_plan_owner(&p, 5, &re) == 0 && re == 100, "static owner 5");
    CHECK(weft_plan_owner(&p, 350, &re) == 0 && re == 400, "static owner 350");
    CHECK(weft_plan_owner(&p, 999, &re) == 0 && re == 1000, "static owner 999");
    CHECK(weft_plan_owner(&p, 250, &re) == 2 && re == 300, "static owner 250");
    /* aggregator 0: blocks 0, 3, 6, 9; 2 per cycle -> cycles [5,100)+[300,400), [600,700)+[900,1000) */
    CHECK(p.ncycles == 2, "static ncycles %d", p.ncycles);
    CHECK(weft_plan_window(&p, 0, 0, off, len, 8) == 2 && off[0] == 5 && len[0] == 95 &&
          off[1] == 300 && len[1] == 100, "static window");
    CHECK(weft_plan_window(&p, 0, 1, off, len, 1) < 0, "window with max too small");
    weft_plan_free(&p);
    check_plan(&in, 1, "example static");

    /* static-cyclic without a stripe unit: unit min(cb, 1 MiB). */
    in = make_input(&r, WEFT_PARTITION_STATIC_CYCLIC, 3, NULL, 64, 0, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.unit == 64 && p.cycle_bytes == 64, "default unit");
    weft_plan_free(&p);
    in = make_input(&r, WEFT_PARTITION_STATIC_CYCLIC, 3, NULL, 3 << 20, 0, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.unit == 1 << 20 && p.cycle_bytes == 3 << 20 &&
          p.naggregators == 1, "default unit 1 MiB");
    weft_plan_free(&p);
    /* stripe unit above cb_buffer_size: one unit per cycle. */
    in = make_input(&r, WEFT_PARTITION_STATIC_CYCLIC, 3, NULL, 64, 100, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.cycle_bytes == 100, "cycle >= unit");
    weft_plan_free(&p);

    /* group-cyclic: 5 aggregators, stripe_count 2 -> groups {0,1} {2,3} {4}; 20 blocks of 50
     * (0..999 from 5): group ranges of 8, 8, 4 blocks. */
    ranks_t r5;
    ranks_alloc(&r5, 5, 5);
    r5.first[0] = 5, r5.end[0] = 1000;
    in = make_input(&r5, WEFT_PARTITION_GROUP_CYCLIC, 0, NULL, 100, 50, 2);
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 5 && p.group_size == 2, "group");
    CHECK(p.domain_start[2] == 400 && p.domain_start[4] == 800 && p.domain_end[4] == 1000 &&
          p.domain_end[1] == 400, "group ranges %lld %lld", (long long)p.domain_start[2],
          (long long)p.domain_start[4]);
    CHECK(weft_plan_owner(&p, 450, &re) == 3 && re == 500, "group owner 450");
    CHECK(weft_plan_owner(&p, 400, &re) == 2 && re == 450, "group owner 400");
    CHECK(weft_plan_owner(&p, 850, &re) == 4 && re == 1000, "group owner (group of one)");
    CHECK(weft_plan_window_max(&p) == 2, "group window_max %d", weft_plan_window_max(&p));
    /* aggregator 4 owns [800, 1000): cycles of 100 bytes, one range each */
    CHECK(weft_plan_window(&p, 4, 1, off, len, 2) == 1 && off[0] == 900 && len[0] == 100,
          "group-of-one window");
    weft_plan_free(&p);
    check_plan(&in, 1, "example group");
    /* stripe_count 0 or >= A: one group = static-cyclic. */
    in = make_input(&r5, WEFT_PARTITION_GROUP_CYCLIC, 0, NULL, 100, 50, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.group_size == 5, "group of all");
    weft_plan_free(&p);
    in = make_input(&r5, WEFT_PARTITION_GROUP_CYCLIC, 0, NULL, 100, 50, 9);
    CHECK(weft_plan_build(&in, &p) == 0 && p.group_size == 5, "group of all (9)");
    weft_plan_free(&p);

    ranks_free(&r), ranks_free(&r6), ranks_free(&r5);
}

/* Aggregator counts from cb_nodes and cb_config_list, and their placement. */
static void test_counts(void)
{
    ranks_t r;
    ranks_alloc(&r, 32, 8);           /* 8 nodes x 4 ranks, block placement */
    for (int i = 0; i < 32; i++)
        r.first[i] = (MPI_Offset)i << 20, r.end[i] = r.first[i] + (1 << 20);
    struct { int cb_nodes; const char *config; int expect; } cases[] = {
        {0, NULL, 8}, {0, "*:1", 8}, {0, "*:2", 16}, {0, " *:3 ", 24}, {0, "*:4", 32},
        {0, "*:9", 32}, {0, "*:*", 32}, {0, "node1:2,node2:2", 8}, {0, "*:0", 8}, {0, "*:x", 8},
        {0, "", 8}, {5, NULL, 5}, {5, "*:2", 5}, {12, NULL, 12}, {32, NULL, 32}, {99, NULL, 32},
        {1, NULL, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int ki = 0; ki < 4; ki++) {
            weft_plan_input in = make_input(&r, kinds[ki], cases[k].cb_nodes, cases[k].config,
                                            1 << 20, 1 << 16, 4);
            char what[128];
            snprintf(what, sizeof what, "counts cb_nodes=%d config=%s %s", cases[k].cb_nodes,
                     cases[k].config ? cases[k].config : "NULL", kind_name(kinds[ki]));
            int A = check_plan(&in, 0, what);
            CHECK(A == cases[k].expect, "%s: %d aggregators, expected %d", what, A,
                  cases[k].expect);
        }
    }
    /* cb_nodes=12 on 8 nodes: ranks 0,4,...,28 then 1,5,9,13. */
    weft_plan p;
    weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 12, NULL, 1 << 20, 0, 0);
    CHECK(weft_plan_build(&in, &p) == 0, "build");
    static const int want[12] = {0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13};
    for (int a = 0; a < 12; a++)
        CHECK(p.aggregator_rank[a] == want[a], "aggregator %d is rank %d, expected %d", a,
              p.aggregator_rank[a], want[a]);
    weft_plan_free(&p);
    /* Round-robin placement of ranks over nodes (rank i on node i % 8): node n's lowest rank
     * is n. */
    for (int i = 0; i < 32; i++)
        r.node[i] = i % 8;
    in = make_input(&r, WEFT_PARTITION_EVEN, 0, "*:2", 1 << 20, 0, 0);
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 16, "build");
    for (int a = 0; a < 16; a++)
        CHECK(p.aggregator_rank[a] == a, "cyclic nodes: aggregator %d is rank %d", a,
              p.aggregator_rank[a]);
    weft_plan_free(&p);
    /* Uneven nodes: node 0 has 20 ranks, nodes 1..3 have 4; *:* takes all, round-robin. */
    for (int i = 0; i < 32; i++)
        r.node[i] = i < 20 ? 0 : 1 + (i - 20) / 4;
    r.nnodes = 5;                      /* node 4 has no ranks */
    in = make_input(&r, WEFT_PARTITION_EVEN, 0, "*:*", 1 << 20, 0, 0);
    CHECK(check_plan(&in, 0, "uneven nodes *:*") == 32, "uneven *:*");
    in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 1 << 20, 0, 0);
    CHECK(check_plan(&in, 0, "uneven nodes default") == 4, "one per non-empty node");
    /* No node information: every rank its own node. */
    in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 1 << 20, 0, 0);
    in.node_of_rank = NULL;
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 32 && p.aggregator_rank[31] == 31,
          "no node_of_rank");
    weft_plan_free(&p);
    ranks_free(&r);
}

/* Never more aggregators than needed. */
static void test_cap(void)
{
    ranks_t r;
    ranks_alloc(&r, 64, 64);
    r.first[7] = 1000, r.end[7] = 1010;      /* 10 bytes */
    weft_plan p;
    weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 4096, 0, 0);
    CHECK(check_plan(&in, 1, "cap even 10 bytes") == 10, "even: one byte each");
    in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 4096, 4, 0);
    CHECK(check_plan(&in, 1, "cap even su=4") == 2, "even: at least a stripe unit each");
    in = make_input(&r, WEFT_PARTITION_EVEN_ALIGNED, 0, NULL, 4096, 4, 0);
    CHECK(check_plan(&in, 1, "cap aligned") == 3, "aligned: blocks 250..252");
    in = make_input(&r, WEFT_PARTITION_STATIC_CYCLIC, 0, NULL, 4096, 0, 0);
    CHECK(check_plan(&in, 1, "cap static") == 1, "static: one 4096 unit");
    in = make_input(&r, WEFT_PARTITION_GROUP_CYCLIC, 0, NULL, 4096, 3, 2);
    CHECK(check_plan(&in, 1, "cap group") == 4, "group: blocks 333..336");
    /* one byte */
    r.end[7] = 1001;
    for (int k = 0; k < 4; k++) {
        in = make_input(&r, kinds[k], 0, "*:*", 4096, 16, 4);
        CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 1 && p.ncycles == 1,
              "one byte");
        MPI_Offset o, l;
        CHECK(weft_plan_window(&p, 0, 0, &o, &l, 1) == 1 && o == 1000 && l == 1, "one byte");
        weft_plan_free(&p);
    }
    ranks_free(&r);
}

/* Nothing accessed. */
static void test_empty(void)
{
    ranks_t r;
    ranks_alloc(&r, 16, 4);
    r.end[3] = 1LL << 50;              /* first < 0: ignored */
    r.first[5] = 7, r.end[5] = 7;      /* empty */
    for (int k = 0; k < 4; k++) {
        weft_plan p;
        weft_plan_input in = make_input(&r, kinds[k], 0, NULL, 4096, 1024, 2);
        CHECK(weft_plan_build(&in, &p) == 0, "empty build");
        CHECK(p.naggregators == 0 && p.ncycles == 0 && p.start == p.end, "empty plan");
        MPI_Offset o, l;
        CHECK(weft_plan_window(&p, 0, 0, &o, &l, 1) < 0, "window of no aggregator");
        CHECK(weft_plan_interleaved(&in) == 0, "empty interleaved");
        weft_plan_free(&p);
        weft_plan_free(&p);            /* twice is harmless */
        check_plan(&in, 1, "empty");
    }
    ranks_free(&r);
}

static void test_errors(void)
{
    ranks_t r;
    ranks_alloc(&r, 4, 2);
    r.first[0] = 0, r.end[0] = 100;
    weft_plan p;
    weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 4096, 0, 0);
    const int arg = WEFT_MPI_ERR(MPI_ERR_ARG);
    CHECK(weft_plan_build(&in, NULL) == arg, "NULL plan");
    CHECK(weft_plan_build(NULL, &p) == arg, "NULL input");
    weft_plan_input bad = in;
    bad.cb_buffer_size = 0;
    CHECK(weft_plan_build(&bad, &p) == arg && p.naggregators == 0 && !p.aggregator_rank, "cb 0");
    bad.cb_buffer_size = -5;
    CHECK(weft_plan_build(&bad, &p) == arg, "cb < 0");
    bad = in, bad.nprocs = 0;
    CHECK(weft_plan_build(&bad, &p) == arg, "nprocs 0");
    bad = in, bad.first = NULL;
    CHECK(weft_plan_build(&bad, &p) == arg, "first NULL");
    bad = in, bad.cb_nodes = -1;
    CHECK(weft_plan_build(&bad, &p) == arg, "cb_nodes < 0");
    bad = in, bad.stripe_unit = -1;
    CHECK(weft_plan_build(&bad, &p) == arg, "stripe_unit < 0");
    bad = in, bad.stripe_count = -1;
    CHECK(weft_plan_build(&bad, &p) == arg, "stripe_count < 0");
    bad = in, bad.partition = (weft_partition_kind)17;
    CHECK(weft_plan_build(&bad, &p) == arg, "bad partition");
    bad = in, bad.nnodes = 0;
    CHECK(weft_plan_build(&bad, &p) == arg, "nnodes 0");
    bad = in, bad.nnodes = 1;          /* rank 2 is on node 1 */
    CHECK(weft_plan_build(&bad, &p) == arg, "node index out of range");
    r.first[1] = 50, r.end[1] = 40;
    CHECK(weft_plan_build(&in, &p) == arg, "end < first");
    r.first[1] = 0, r.end[1] = INT64_MAX;
    CHECK(weft_plan_build(&in, &p) == arg, "range up to INT64_MAX");
    /* More cycles than an int holds. */
    r.first[1] = 0, r.end[1] = 1LL << 60;
    in.cb_nodes = 1;
    CHECK(weft_plan_build(&in, &p) == arg && p.naggregators == 0 && !p.domain_start &&
          p.start == 0 && p.end == 0, "2^48 cycles");
    /* More window ranges than an int holds: one-byte stripes, 4 GiB buffer. */
    in.cb_nodes = 2;
    in.partition = WEFT_PARTITION_STATIC_CYCLIC;
    in.stripe_unit = 1;
    in.cb_buffer_size = 1LL << 32;
    CHECK(weft_plan_build(&in, &p) == arg, "2^31 window ranges");
    ranks_free(&r);
}

/* Randomised small cases, every byte checked. */
static void test_random_small(int iters)
{
    static const char *configs[] = {NULL, "*:1", "*:2", "*:3", "*:*", "h1,h2", "*:0", " *:5 "};
    for (int it = 0; it < iters; it++) {
        int P = 1 + (int)test_rand_below(&rng, 40);
        int N = 1 + (int)test_rand_below(&rng, (uint64_t)(P < 10 ? P + 2 : 10));
        ranks_t r;
        ranks_alloc(&r, P, N);
        int random_nodes = (int)test_rand_below(&rng, 2);
        MPI_Offset base = test_rand_below(&rng, 4) == 0 ? (5LL << 32) + 17 : 0;
        int sparse = (int)test_rand_below(&rng, 5);
        for (int i = 0; i < P; i++) {
            if (random_nodes)
                r.node[i] = (int)test_rand_below(&rng, (uint64_t)N);
            if (test_rand_below(&rng, 5) == 0 || (sparse == 0 && i > 0))
                continue;
            r.first[i] = base + (MPI_Offset)test_rand_below(&rng, 3000);
            r.end[i] = r.first[i] + (MPI_Offset)test_rand_below(&rng, 600);
        }
        int cb_nodes = test_rand_below(&rng, 2) ? 0 : 1 + (int)test_rand_below(&rng, 50);
        const char *config = configs[test_rand_below(&rng, 8)];
        MPI_Offset cb = 1 + (MPI_Offset)test_rand_below(&rng, 400);
        MPI_Offset su = test_rand_below(&rng, 3) == 0 ? 0 : 1 + (MPI_Offset)test_rand_below(&rng, 200);
        int sc = (int)test_rand_below(&rng, 7);
        weft_partition_kind k = kinds[test_rand_below(&rng, 4)];
        weft_plan_input in = make_input(&r, k, cb_nodes, config, cb, su, sc);
        char what[200];
        snprintf(what, sizeof what, "random #%d (P=%d N=%d %s cb_nodes=%d config=%s cb=%lld "
                 "su=%lld sc=%d)", it, P, N, kind_name(k), cb_nodes, config ? config : "NULL",
                 (long long)cb, (long long)su, sc);
        check_plan(&in, 1, what);
        ranks_free(&r);
    }
}

/* Build with `in`, check the plan, and compare the aggregator list with `expect` (n ranks) and
 * config_fallback with `fallback`. */
static void expect_aggregators(const weft_plan_input *in, const int *expect, int n, int fallback,
                               const char *what)
{
    weft_plan p;
    CHECK(weft_plan_build(in, &p) == 0, "%s: build", what);
    CHECK(p.config_fallback == fallback, "%s: config_fallback %d, expected %d", what,
          p.config_fallback, fallback);
    CHECK(p.naggregators == n, "%s: %d aggregators, expected %d", what, p.naggregators, n);
    for (int a = 0; a < n; a++)
        CHECK(p.aggregator_rank[a] == expect[a], "%s: aggregator %d is rank %d, expected %d",
              what, a, p.aggregator_rank[a], expect[a]);
    weft_plan_free(&p);
    check_plan(in, 0, what);
}

#define EXPECT_LIST(in, fallback, what, ...) \
    do { \
        static const int list_[] = {__VA_ARGS__}; \
        expect_aggregators(in, list_, (int)(sizeof list_ / sizeof *list_), fallback, what); \
    } while (0)

/* cb_config_list with host names: exact aggregator lists. */
static void test_config_lists(void)
{
    /* 4 nodes x 3 ranks, block placement: hostA = 0,1,2, hostB = 3,4,5, hostC = 6,7,8,
     * hostD = 9,10,11; 1 MiB each, so the range never limits the count. */
    static const char *const names[] = {"hostA", "hostB", "hostC", "hostD"};
    ranks_t r;
    ranks_alloc(&r, 12, 4);
    for (int i = 0; i < 12; i++)
        r.first[i] = (MPI_Offset)i << 20, r.end[i] = r.first[i] + (1 << 20);
    weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 1 << 20, 0, 0);
    in.node_name = names;
    const int ok = WEFT_PLAN_CONFIG_OK, malformed = WEFT_PLAN_CONFIG_MALFORMED,
              no_match = WEFT_PLAN_CONFIG_NO_MATCH;

    in.cb_config_list = "*:2";
    EXPECT_LIST(&in, ok, "*:2", 0, 3, 6, 9, 1, 4, 7, 10);
    in.cb_config_list = "*:*";
    EXPECT_LIST(&in, ok, "*:*", 0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11);
    in.cb_config_list = "*";
    EXPECT_LIST(&in, ok, "* alone is *:1", 0, 3, 6, 9);
    in.cb_config_list = "hostB:2,hostA";
    EXPECT_LIST(&in, ok, "hostB:2,hostA", 3, 4, 0);
    in.cb_config_list = "hostA:*";
    EXPECT_LIST(&in, ok, "hostA:*", 0, 1, 2);
    in.cb_config_list = "hostA:1,*:1";     /* "*" takes hostA's next rank, never rank 0 again */
    EXPECT_LIST(&in, ok, "hostA:1,*:1", 0, 1, 3, 6, 9);
    in.cb_config_list = "hostA:1,hostA:1";
    EXPECT_LIST(&in, ok, "hostA twice", 0, 1);
    in.cb_config_list = "hostA:5";         /* more than the host has: all of it */
    EXPECT_LIST(&in, ok, "hostA:5", 0, 1, 2);
    in.cb_config_list = "hostD:99999999999999";
    EXPECT_LIST(&in, ok, "huge count", 9, 10, 11);
    in.cb_config_list = "HOSTb:1,hostc";   /* names match ignoring case */
    EXPECT_LIST(&in, ok, "case", 3, 6);
    in.cb_config_list = " hostB : 2 ,\t* : 1 ";
    EXPECT_LIST(&in, ok, "whitespace", 3, 4, 0, 5, 6, 9);
    in.cb_config_list = "hostC:*,*:*";
    EXPECT_LIST(&in, ok, "host then all", 6, 7, 8, 0, 3, 9, 1, 4, 10, 2, 5, 11);
    in.cb_config_list = "hostZ:3,hostD:1"; /* an unknown host among known ones is skipped */
    EXPECT_LIST(&in, ok, "one unknown", 9);

    /* cb_nodes cuts a host list to its first cb_nodes... */
    in.cb_nodes = 2;
    in.cb_config_list = "hostC:*,hostA:1";
    EXPECT_LIST(&in, ok, "cb_nodes=2 hostC:*,hostA:1", 6, 7);
    in.cb_nodes = 5;
    in.cb_config_list = "hostC:*,hostA:1";
    EXPECT_LIST(&in, ok, "cb_nodes=5 hostC:*,hostA:1", 6, 7, 8, 0);
    /* ...and ignores a list of only "*" entries (any number per node, round-robin). */
    in.cb_config_list = "*:1";
    EXPECT_LIST(&in, ok, "cb_nodes=5 *:1", 0, 3, 6, 9, 1);
    in.cb_config_list = "hostZ";           /* matches nothing: the cb_nodes rule */
    EXPECT_LIST(&in, no_match, "cb_nodes=5 hostZ", 0, 3, 6, 9, 1);
    in.cb_config_list = "a::1";
    EXPECT_LIST(&in, malformed, "cb_nodes=5 a::1", 0, 3, 6, 9, 1);
    in.cb_nodes = 0;

    /* Fallback to "*:1". */
    in.cb_config_list = "hostZ:2";
    EXPECT_LIST(&in, no_match, "unknown host", 0, 3, 6, 9);
    in.cb_config_list = "hostZ:2,hostY";
    EXPECT_LIST(&in, no_match, "unknown hosts", 0, 3, 6, 9);
    static const char *const malformed_lists[] = {
        "host:0", "host:x", ",", "a::1", "", "   ", "hostA:2,", ",hostA", "hostA,,hostB",
        "hostA 2", "host*", "*x", "hostA:-1", "hostA:+1", "hostA:1:2", "hostA:", ":2", "*:0",
        "*:1x", "hostA:*2",
    };
    for (size_t k = 0; k < sizeof malformed_lists / sizeof *malformed_lists; k++) {
        char what[64];
        snprintf(what, sizeof what, "malformed \"%s\"", malformed_lists[k]);
        in.cb_config_list = malformed_lists[k];
        EXPECT_LIST(&in, malformed, what, 0, 3, 6, 9);
    }
    in.cb_config_list = NULL;              /* NULL is the default, not a fallback */
    EXPECT_LIST(&in, ok, "NULL", 0, 3, 6, 9);

    /* Names unknown: only "*" entries match. */
    in.node_name = NULL;
    in.cb_config_list = "hostA:2";
    EXPECT_LIST(&in, no_match, "node_name NULL", 0, 3, 6, 9);
    in.cb_config_list = "hostA:2,*:1";
    EXPECT_LIST(&in, ok, "node_name NULL with *", 0, 3, 6, 9);
    in.node_of_rank = NULL;                /* no node information: names ignored too */
    in.node_name = names;
    in.cb_config_list = "hostA:2";
    EXPECT_LIST(&in, no_match, "node_of_rank NULL", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    in.node_of_rank = r.node;

    /* Nodes sharing a name (virtual nodes on one host), a node without a name, a node
     * without ranks: node 0 = hostA (0,1,2), node 1 = hostA (3,4,5), node 2 = unnamed
     * (6..11), node 3 = hostB (no ranks). */
    static const char *const shared[] = {"hostA", "hostA", NULL, "hostB"};
    for (int i = 6; i < 12; i++)
        r.node[i] = 2;
    in.node_name = shared;
    in.cb_config_list = "hostA:3";         /* round-robin over the two hostA nodes */
    EXPECT_LIST(&in, ok, "shared name", 0, 3, 1);
    in.cb_config_list = "hostA:*";
    EXPECT_LIST(&in, ok, "shared name *", 0, 3, 1, 4, 2, 5);
    in.cb_config_list = "hostB:2";         /* exists, but has no ranks */
    EXPECT_LIST(&in, no_match, "host without ranks", 0, 3, 6);
    in.cb_config_list = "hostB:2,*:2";
    EXPECT_LIST(&in, ok, "unnamed node via *", 0, 3, 6, 1, 4, 7);

    /* Empty range: no aggregators, but the fallback is still reported. */
    for (int i = 0; i < 12; i++)
        r.first[i] = -1;
    weft_plan p;
    struct { const char *list; int fallback; } empty[] = {
        {"hostA:1", ok}, {"hostZ", no_match}, {",", malformed}, {"*:2", ok}, {NULL, ok},
    };
    for (size_t k = 0; k < sizeof empty / sizeof *empty; k++) {
        in.cb_config_list = empty[k].list;
        CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 0 &&
              p.config_fallback == empty[k].fallback, "empty range, list %s: fallback %d",
              empty[k].list ? empty[k].list : "NULL", p.config_fallback);
        weft_plan_free(&p);
    }
    ranks_free(&r);
}

/* weft_aggregators=auto: at most max(1, ceil(total_bytes / cb_buffer_size)) of the hint set. */
static void test_auto(void)
{
    ranks_t r;
    ranks_alloc(&r, 32, 8);           /* 8 nodes x 4 ranks, block placement */
    for (int i = 0; i < 32; i++)
        r.first[i] = (MPI_Offset)i << 20, r.end[i] = r.first[i] + (1 << 20);
    const MPI_Offset MiB = 1 << 20;
    struct { const char *list; int cb_nodes; MPI_Offset total; int expect; } cases[] = {
        {NULL, 0, 0, 1},                  /* nothing counted: still one */
        {NULL, 0, 100, 1},                /* small */
        {NULL, 0, MiB, 1},                /* exactly one cycle */
        {NULL, 0, MiB + 1, 2},
        {NULL, 0, 3 * MiB, 3},            /* exact multiple */
        {NULL, 0, 3 * MiB + 1, 4},
        {NULL, 0, 8 * MiB, 8},
        {NULL, 0, 100 * MiB, 8},          /* large: the hint count */
        {"*:2", 0, 10 * MiB, 10},
        {"*:2", 0, 1LL << 40, 16},
        {NULL, 12, 20 * MiB, 12},
        {"hostless:1", 0, 5 * MiB, 5},    /* a fallback list sizes the same way */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        for (int ki = 0; ki < 4; ki++) {
            weft_plan_input in = make_input(&r, kinds[ki], cases[k].cb_nodes, cases[k].list,
                                            MiB, 1 << 16, 4);
            in.aggregators_auto = 1;
            in.total_bytes = cases[k].total;
            char what[128];
            snprintf(what, sizeof what, "auto total=%lld list=%s cb_nodes=%d %s",
                     (long long)cases[k].total, cases[k].list ? cases[k].list : "NULL",
                     cases[k].cb_nodes, kind_name(kinds[ki]));
            CHECK(check_plan(&in, 0, what) == cases[k].expect, "%s: expected %d", what,
                  cases[k].expect);
            in.aggregators_auto = 0;      /* "hints": total_bytes is not read */
            snprintf(what, sizeof what, "hints total=%lld", (long long)cases[k].total);
            check_plan(&in, 0, what);
        }
    }
    /* The first A of the hint set, so still spread: "*:2" over 8 nodes, A = 10. */
    weft_plan p;
    weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, "*:2", MiB, 0, 0);
    in.aggregators_auto = 1;
    in.total_bytes = 10 * MiB;
    static const int spread[10] = {0, 4, 8, 12, 16, 20, 24, 28, 1, 5};
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 10, "auto spread");
    for (int a = 0; a < 10; a++)
        CHECK(p.aggregator_rank[a] == spread[a], "auto: aggregator %d is rank %d, expected %d",
              a, p.aggregator_rank[a], spread[a]);
    weft_plan_free(&p);
    /* cb_buffer_size is the cycle unit: 4 MiB cycles, 10 MiB -> 3. */
    in.cb_buffer_size = 4 * MiB;
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 3, "auto 4 MiB cycles: %d",
          p.naggregators);
    weft_plan_free(&p);
    /* auto_bytes, when given, is the unit instead of the cycle: 512 KiB cycles, 4 MiB each. */
    in.cb_buffer_size = 512 * 1024;
    in.auto_bytes = 4 * MiB;
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 3 && p.cycle_bytes == 512 * 1024,
          "auto 4 MiB each, 512 KiB cycles: %d aggregators, cycles of %lld", p.naggregators,
          (long long)p.cycle_bytes);
    weft_plan_free(&p);
    in.auto_bytes = -1;
    CHECK(weft_plan_build(&in, &p) == WEFT_MPI_ERR(MPI_ERR_ARG), "auto_bytes < 0");
    in.auto_bytes = 0;
    in.total_bytes = -1;
    CHECK(weft_plan_build(&in, &p) == WEFT_MPI_ERR(MPI_ERR_ARG), "total_bytes < 0");
    ranks_free(&r);
}

/* weft_plan_cycle_size: the hint within the buffer share; auto = max(512 KiB, 64 KiB per sender). */
static void test_cycle_size(void)
{
    const MPI_Offset KiB = 1024, MiB = 1 << 20;
    struct { MPI_Offset share, requested; int senders; MPI_Offset expect; } cases[] = {
        {8 * MiB, 0, 2, 512 * KiB},        /* auto at few ranks: the cache-sized floor */
        {8 * MiB, 0, 0, 512 * KiB},        /* nobody has data: still a valid size */
        {8 * MiB, 0, 8, 512 * KiB},        /* 8 x 64 KiB = the floor */
        {8 * MiB, 0, 9, 576 * KiB},        /* one more sender, 64 KiB more */
        {8 * MiB, 0, 64, 4 * MiB},
        {8 * MiB, 0, 1000, 8 * MiB},       /* at scale: the whole share, as ROMIO */
        {16 * MiB, 0, 1 << 30, 16 * MiB},  /* no overflow with 2^30 senders */
        {2048, 0, 2, 2048},                /* a share below the floor wins */
        {MiB, 8 * KiB, 2, 8 * KiB},        /* the hint, inside the share */
        {MiB, 2 * MiB, 2, MiB},            /* the hint, cut to the share */
        {MiB, 1, 100000, 1},               /* a hint of one byte is one byte */
        {MiB, 0, -3, 512 * KiB},           /* a negative count counts as none */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        MPI_Offset got = weft_plan_cycle_size(cases[k].share, cases[k].requested, cases[k].senders);
        CHECK(got == cases[k].expect, "cycle size share=%lld requested=%lld senders=%d: %lld, "
              "expected %lld", (long long)cases[k].share, (long long)cases[k].requested,
              cases[k].senders, (long long)got, (long long)cases[k].expect);
    }
    /* Properties over random arguments: within [1, share], the hint exact when it fits, auto
     * never shrinking as senders grow. */
    for (int i = 0; i < 10000; i++) {
        MPI_Offset share = 2048 + (MPI_Offset)test_rand_below(&rng, 1u << 30);
        MPI_Offset requested =
            test_rand_below(&rng, 3) == 0 ? 0 : 1 + (MPI_Offset)test_rand_below(&rng, 1u << 31);
        int senders = (int)test_rand_below(&rng, 200000);
        MPI_Offset got = weft_plan_cycle_size(share, requested, senders);
        CHECK(got >= 1 && got <= share, "cycle size %lld outside [1, %lld]", (long long)got,
              (long long)share);
        if (requested > 0)
            CHECK(got == (requested < share ? requested : share), "hint %lld share %lld: %lld",
                  (long long)requested, (long long)share, (long long)got);
        else
            CHECK(got <= weft_plan_cycle_size(share, 0, senders + 1), "auto shrank at %d senders",
                  senders + 1);
    }
}

static uint64_t run_seed;

/* Random lists, names and layouts against the reference (ref_apply through check_plan). */
static void test_random_config(int iters)
{
    static const char *const pool[] = {"hostA", "hostB", "HostA", "hostC", "n1", NULL};
    static const char *const entry_names[] = {"*", "hostA", "hostB", "hostc", "n1", "hostZ",
                                              "HOSTA"};
    static const char *const counts[] = {"", ":1", ":2", ":3", ":*", " : 2 ", ":7"};
    static const char *const junk[] = {":0", "::", ":x", ",", " x", "*"};
    int outcome[3] = {0, 0, 0};
    for (int it = 0; it < iters; it++) {
        uint64_t seed = test_rand(&rng), st = seed;
        int P = 1 + (int)test_rand_below(&st, 40);
        int N = 1 + (int)test_rand_below(&st, (uint64_t)(P < 10 ? P + 2 : 10));
        ranks_t r;
        ranks_alloc(&r, P, N);
        int random_nodes = (int)test_rand_below(&st, 2);
        for (int i = 0; i < P; i++) {
            if (random_nodes)
                r.node[i] = (int)test_rand_below(&st, (uint64_t)N);
            if (test_rand_below(&st, 4) == 0)
                continue;
            r.first[i] = (MPI_Offset)test_rand_below(&st, 3000);
            r.end[i] = r.first[i] + (MPI_Offset)test_rand_below(&st, 600);
        }
        const char *names[12];
        for (int n = 0; n < N; n++)
            names[n] = pool[test_rand_below(&st, 6)];
        char list[256] = "";
        int nentries = 1 + (int)test_rand_below(&st, 4);
        for (int k = 0; k < nentries; k++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s%s%s", k ? "," : "",
                     test_rand_below(&st, 4) == 0 ? " " : "",
                     entry_names[test_rand_below(&st, 7)], counts[test_rand_below(&st, 7)]);
            if (test_rand_below(&st, 25) == 0) {
                len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s", junk[test_rand_below(&st, 6)]);
            }
        }
        int cb_nodes = test_rand_below(&st, 3) ? 0 : 1 + (int)test_rand_below(&st, 20);
        MPI_Offset cb = 1 + (MPI_Offset)test_rand_below(&st, 400);
        MPI_Offset su = test_rand_below(&st, 3) == 0 ? 0 : 1 + (MPI_Offset)test_rand_below(&st, 200);
        weft_partition_kind k = kinds[test_rand_below(&st, 4)];
        weft_plan_input in = make_input(&r, k, cb_nodes, list, cb, su,
                                        (int)test_rand_below(&st, 5));
        int names_known = test_rand_below(&st, 5) != 0;
        in.node_name = names_known ? names : NULL;
        if (test_rand_below(&st, 10) == 0)
            in.node_of_rank = NULL;
        in.aggregators_auto = (int)test_rand_below(&st, 2);
        in.total_bytes = (MPI_Offset)test_rand_below(&st, 4) * cb +
                         (MPI_Offset)test_rand_below(&st, 3) - 1;
        if (in.total_bytes < 0)
            in.total_bytes = 0;
        char what[400];
        snprintf(what, sizeof what, "random config #%d (run seed %llu, case seed %llu: P=%d "
                 "N=%d list=\"%s\" names=%s node_of_rank=%s cb_nodes=%d auto=%d total=%lld "
                 "%s cb=%lld su=%lld)", it, (unsigned long long)run_seed,
                 (unsigned long long)seed, P, N, list, names_known ? "yes" : "NULL",
                 in.node_of_rank ? "yes" : "NULL", cb_nodes, in.aggregators_auto,
                 (long long)in.total_bytes, kind_name(k), (long long)cb, (long long)su);
        check_plan(&in, 0, what);
        weft_plan p;
        CHECK(weft_plan_build(&in, &p) == 0, "%s: build", what);
        outcome[p.config_fallback]++;
        weft_plan_free(&p);
        ranks_free(&r);
    }
    /* The mix matters: most lists should be used, some fall back either way. */
    printf("coll_plan: random config lists: %d used, %d malformed, %d matched no host\n",
           outcome[0], outcome[1], outcome[2]);
    CHECK(outcome[0] > iters / 2 && outcome[1] > 0 && outcome[2] > 0, "random config mix");
}

/* 10^5 ranks on 10^3 named nodes, long lists: linear, not quadratic. */
static void test_large_config(void)
{
    int P = 100000, N = 1000;
    ranks_t r;
    ranks_alloc(&r, P, N);           /* block placement: node n = ranks 100n .. 100n+99 */
    for (int i = 0; i < P; i++)
        r.first[i] = (1LL << 33) + (MPI_Offset)i * 4096, r.end[i] = r.first[i] + 4096;
    char **names = malloc((size_t)N * sizeof *names);
    CHECK(names, "out of memory");
    for (int n = 0; n < N; n++) {
        names[n] = malloc(16);
        CHECK(names[n], "out of memory");
        snprintf(names[n], 16, "node%04d", n);
    }
    /* Every node named once, in reverse, 7 each, then "*:*": all 10^5 ranks. */
    size_t cap = (size_t)N * 16 + 16, len = 0;
    char *list = malloc(cap);
    CHECK(list, "out of memory");
    for (int n = N - 1; n >= 0; n--)
        len += (size_t)snprintf(list + len, cap - len, "NODE%04d:7,", n);
    snprintf(list + len, cap - len, "*:*");
    weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, list, 1 << 20, 0, 0);
    in.node_name = (const char *const *)names;
    double t0 = MPI_Wtime();
    weft_plan p;
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == P && p.config_fallback == 0,
          "1e5 ranks, 1001 entries: %d aggregators", p.naggregators);
    double t1 = MPI_Wtime();
    /* Node 999's 7 lowest first, then node 998's, ...; then "*" round-robin from rank 7. */
    CHECK(p.aggregator_rank[0] == 99900 && p.aggregator_rank[6] == 99906 &&
          p.aggregator_rank[7] == 99800 && p.aggregator_rank[7 * N - 1] == 6 &&
          p.aggregator_rank[7 * N] == 7 && p.aggregator_rank[7 * N + 1] == 107 &&
          p.aggregator_rank[P - 1] == P - 1, "1e5 list order");
    char *seen = calloc((size_t)P, 1);
    CHECK(seen, "out of memory");
    for (int a = 0; a < P; a++) {
        CHECK(!seen[p.aggregator_rank[a]], "rank %d chosen twice", p.aggregator_rank[a]);
        seen[p.aggregator_rank[a]] = 1;
    }
    free(seen);
    weft_plan_free(&p);
    /* A list of 10^5 entries all naming one host (each takes one more of its ranks, which
     * run out after 100): the name lookup must not scan the nodes per entry. */
    free(list);
    cap = (size_t)P * 12 + 16;
    list = malloc(cap);
    CHECK(list, "out of memory");
    len = 0;
    for (int k = 0; k < P; k++)
        len += (size_t)snprintf(list + len, cap - len, "%snode0500", k ? "," : "");
    in.cb_config_list = list;
    double t2 = MPI_Wtime();
    CHECK(weft_plan_build(&in, &p) == 0 && p.naggregators == 100 &&
          p.aggregator_rank[0] == 50000 && p.aggregator_rank[99] == 50099, "1e5 entries: %d",
          p.naggregators);
    double t3 = MPI_Wtime();
    weft_plan_free(&p);
    printf("coll_plan: 10^5 ranks, 10^3 nodes: 1001-entry list %.3f s, 10^5-entry list %.3f s\n",
           t1 - t0, t3 - t2);
    free(list);
    for (int n = 0; n < N; n++)
        free(names[n]);
    free(names);
    ranks_free(&r);
}

/* Brute-force interleave reference. */
static int interleaved_ref(const ranks_t *r)
{
    for (int i = 0; i < r->nprocs; i++)
        for (int j = i + 1; j < r->nprocs; j++) {
            if (r->first[i] < 0 || r->first[j] < 0 || r->end[i] <= r->first[i] ||
                r->end[j] <= r->first[j])
                continue;
            if (r->first[i] < r->end[j] && r->first[j] < r->end[i])
                return 1;
        }
    return 0;
}

static void test_interleaved(void)
{
    for (int it = 0; it < 2000; it++) {
        int P = 1 + (int)test_rand_below(&rng, 20);
        ranks_t r;
        ranks_alloc(&r, P, 1);
        for (int i = 0; i < P; i++) {
            if (test_rand_below(&rng, 4) == 0)
                continue;
            r.first[i] = (MPI_Offset)test_rand_below(&rng, 1000);
            r.end[i] = r.first[i] + (MPI_Offset)test_rand_below(&rng, 60);
        }
        weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 4096, 0, 0);
        CHECK(weft_plan_interleaved(&in) == interleaved_ref(&r), "interleaved #%d: %d vs %d", it,
              weft_plan_interleaved(&in), interleaved_ref(&r));
        ranks_free(&r);
    }
    /* Touching ranges do not interleave; reversed rank order does not matter. */
    int P = 100000;
    ranks_t r;
    ranks_alloc(&r, P, 100);
    for (int i = 0; i < P; i++)
        r.first[i] = (MPI_Offset)(P - 1 - i) * 4096 + (1LL << 33), r.end[i] = r.first[i] + 4096;
    weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 4096, 0, 0);
    CHECK(weft_plan_interleaved(&in) == 0, "sequential blocks");
    r.end[P / 2] += 1;                 /* overlaps one byte of the next block */
    CHECK(weft_plan_interleaved(&in) == 1, "one-byte overlap");
    r.end[P / 2] -= 1;
    r.first[17] = -1, r.end[17] = 1LL << 50;
    CHECK(weft_plan_interleaved(&in) == 0, "ranks without access ignored");
    r.first[18] = r.first[19] + 10, r.end[18] = r.first[18];   /* empty, inside another */
    CHECK(weft_plan_interleaved(&in) == 0, "empty ranges ignored");
    r.first[20] = r.first[40] + 5, r.end[20] = r.first[20] + 1; /* inside rank 40's */
    CHECK(weft_plan_interleaved(&in) == 1, "contained range");
    ranks_free(&r);
}

/* Large cases: offsets beyond 2^32, domains > 2 GiB, 10^5 and 10^6 ranks. */
static void test_large(int with_million)
{
    char what[160];
    /* 10^5 ranks on 1000 nodes, 64 KiB each from 2^33, contiguous. */
    {
        int P = 100000;
        ranks_t r;
        ranks_alloc(&r, P, 1000);
        for (int i = 0; i < P; i++)
            r.first[i] = (1LL << 33) + (MPI_Offset)i * 65536, r.end[i] = r.first[i] + 65536;
        r.first[3] = -1;               /* a hole where rank 3 writes nothing */
        for (int k = 0; k < 4; k++) {
            weft_plan_input in = make_input(&r, kinds[k], 0, NULL, 16 << 20, 1 << 20, 8);
            snprintf(what, sizeof what, "1e5 ranks %s", kind_name(kinds[k]));
            CHECK(check_plan(&in, 0, what) == 1000, "%s: one aggregator per node", what);
            in = make_input(&r, kinds[k], 0, "*:4", 4 << 20, 1 << 20, 8);
            snprintf(what, sizeof what, "1e5 ranks *:4 %s", kind_name(kinds[k]));
            CHECK(check_plan(&in, 0, what) == 4000, "%s: four per node", what);
        }
        CHECK(weft_plan_interleaved(&(weft_plan_input){.nprocs = P, .first = r.first,
                                                        .end = r.end}) == 0, "1e5 interleaved");
        ranks_free(&r);
    }
    /* Domains > 2 GiB beyond 2^32: 4 ranks x 3 GiB, 2 aggregators. */
    {
        ranks_t r;
        ranks_alloc(&r, 4, 2);
        for (int i = 0; i < 4; i++)
            r.first[i] = (3LL << 32) + (MPI_Offset)i * (3LL << 30) + 7,
            r.end[i] = r.first[i] + (3LL << 30);
        for (int k = 0; k < 4; k++) {
            weft_plan_input in = make_input(&r, kinds[k], 0, NULL, 16 << 20, 4 << 20, 2);
            snprintf(what, sizeof what, "3 GiB x 4 %s", kind_name(kinds[k]));
            CHECK(check_plan(&in, 0, what) == 2, "%s", what);
        }
        weft_plan p;
        weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 16 << 20, 0, 0);
        CHECK(weft_plan_build(&in, &p) == 0, "build");
        CHECK(p.domain_end[0] - p.domain_start[0] == 6LL << 30 && p.ncycles == 384,
              "6 GiB domains, 384 cycles of 16 MiB: %lld %d",
              (long long)(p.domain_end[0] - p.domain_start[0]), p.ncycles);
        MPI_Offset o, l, re;
        CHECK(weft_plan_window(&p, 1, 383, &o, &l, 1) == 1 && o + l == p.end && l == 16 << 20,
              "last window");
        CHECK(weft_plan_owner(&p, p.end - 1, &re) == 1 && re == p.end, "owner at the end");
        weft_plan_free(&p);
        /* Single aggregator over 12 GiB with a 2 GiB buffer (cycle sizes above INT_MAX). */
        in = make_input(&r, WEFT_PARTITION_STATIC_CYCLIC, 1, NULL, 3LL << 30, 1LL << 30, 0);
        CHECK(check_plan(&in, 0, "12 GiB, one aggregator, 3 GiB cycles") == 1, "one");
        CHECK(weft_plan_build(&in, &p) == 0 && p.cycle_bytes == 3LL << 30 && p.ncycles == 5 &&
              weft_plan_window_max(&p) == 1, "3 GiB cycles: %d", p.ncycles);
        weft_plan_free(&p);
        ranks_free(&r);
    }
    /* Random large: a few hundred ranks, random sizes up to 2^36, sampled owners. */
    for (int it = 0; it < 40; it++) {
        int P = 1 + (int)test_rand_below(&rng, 500);
        int N = 1 + (int)test_rand_below(&rng, 64);
        ranks_t r;
        ranks_alloc(&r, P, N);
        for (int i = 0; i < P; i++) {
            if (test_rand_below(&rng, 8) == 0)
                continue;
            r.first[i] = (MPI_Offset)test_rand_below(&rng, 1ULL << 40);
            r.end[i] = r.first[i] + (MPI_Offset)test_rand_below(&rng, 1ULL << 36);
        }
        MPI_Offset su = (MPI_Offset)1 << (20 + test_rand_below(&rng, 8));
        weft_partition_kind k = kinds[test_rand_below(&rng, 4)];
        /* Keep the window count manageable: big buffers for big ranges. */
        weft_plan_input in = make_input(&r, k, (int)test_rand_below(&rng, 2 * P), NULL,
                                        1LL << 34, su, (int)test_rand_below(&rng, 9));
        snprintf(what, sizeof what, "random large #%d (P=%d %s su=%lld)", it, P, kind_name(k),
                 (long long)su);
        check_plan(&in, 0, what);
        ranks_free(&r);
    }
    if (!with_million)
        return;
    /* 10^6 ranks, 10^4 nodes, overlapping 1500-byte accesses 1000 bytes apart. */
    {
        int P = 1000000;
        ranks_t r;
        ranks_alloc(&r, P, 10000);
        for (int i = 0; i < P; i++)
            r.first[i] = (1LL << 35) + (MPI_Offset)i * 1000, r.end[i] = r.first[i] + 1500;
        weft_plan_input in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 16 << 20, 0, 0);
        double t0 = MPI_Wtime();
        CHECK(weft_plan_interleaved(&in) == 1, "1e6 interleaved");
        double t1 = MPI_Wtime();
        weft_plan p;
        CHECK(weft_plan_build(&in, &p) == 0, "1e6 build");
        double t2 = MPI_Wtime();
        weft_plan_free(&p);
        /* informational only: nothing is asserted about time */
        printf("coll_plan: 10^6 ranks: interleave test %.3f s, build %.3f s\n", t1 - t0, t2 - t1);
        for (int k = 0; k < 4; k++) {
            in = make_input(&r, kinds[k], 0, NULL, 16 << 20, 1 << 20, 16);
            snprintf(what, sizeof what, "1e6 ranks %s", kind_name(kinds[k]));
            int A = check_plan(&in, 0, what);
            /* 10^9 + 500 bytes: 954 one-MiB blocks; even wants a stripe unit each: 953 */
            CHECK(A == (kinds[k] == WEFT_PARTITION_EVEN ? 953 : 954), "%s: %d", what, A);
        }
        in = make_input(&r, WEFT_PARTITION_EVEN, 0, NULL, 16 << 20, 0, 0);
        CHECK(check_plan(&in, 0, "1e6 ranks even, no stripe") == 10000, "1e6 even");
        ranks_free(&r);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rng = run_seed = test_seed(20240611, "coll_plan");
    double t0 = MPI_Wtime();
    test_examples();
    test_counts();
    test_cap();
    test_empty();
    test_errors();
    test_config_lists();
    test_auto();
    test_cycle_size();
    test_random_small(3000);
    test_random_config(3000);
    test_large_config();
    test_interleaved();
    test_large(1);
    printf("coll_plan: %lld plans checked in %.1f s: PASS\n", nchecked_plans, MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
