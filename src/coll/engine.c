/*
 * Two-phase collective I/O (DESIGN.md §3.1; seed 000 §2.2).
 *
 * 1. Plan: one allgather brings every rank's (error, first byte, end, view position, bytes,
 *    file size, flags); every rank builds the same plan from it (coll/plan.c).
 * 2. Views: each rank sends its file view (serialized compact layout + displacement) to the
 *    aggregators whose domains its range touches.  From (view, position, bytes) both sides
 *    compute, for any file window, which data positions of the rank fall in it (two O(depth)
 *    seeks), so the shuffle carries data only: no per-element offsets, no size messages.
 * 3. Cycles: for each cycle, ranks send each aggregator the data of their positions inside the
 *    aggregator's window (packed in file order); the aggregator scatters them into its cycle
 *    buffer, marking a bitmap of filled bytes, and writes the filled runs (holes are never
 *    read-modify-written, so they are never filled with stale bytes).  Reads: aggregators read
 *    their window (zeros past end of file) and send each rank its part.
 * 4. Errors: the communication pattern depends only on the plan, so a rank whose file access
 *    fails keeps exchanging data (skipping its file access) and the final agreement makes every
 *    rank return the error: nobody hangs.
 *
 * Shuffle primitives (weft_shuffle; DESIGN.md §3.3, seed 000 §3.1.2, seed 002).  The data
 * positions a rank has in an aggregator's window are known on both sides, and so is where each
 * piece lands in the aggregator's half: window.at[i] + (file offset - range lo).  The one-sided
 * primitives use that: a sender packs its stream (as for isend) and moves it with ONE MPI_Put
 * per aggregator and cycle whose target datatype is an hindexed list of those landing places
 * (contiguous fast path for one piece), straight into the half — no staging on the aggregator
 * and no offsets to exchange; the aggregator marks its `filled` bitmap by walking the same
 * pieces from the views, without data.  Reads mirror it with MPI_Get from the half.
 *  - isend: as above (packed streams into staging, scatter on arrival).  The default.
 *  - put-fence: the halves are two MPI_Win_allocate windows over the file's communicator
 *    (cycle_bytes on aggregators, 0 elsewhere), kept with the file.  shuffle_start opens an
 *    epoch on the half's window with MPI_Win_fence and puts; shuffle_finish closes it with a
 *    second fence.  A fence is blocking and collective, so it has no "test": the data-flow
 *    schedule write-comm-2 (whose order of starts and finishes depends on each rank's own
 *    MPI_Testall/backend results) could call the two windows' fences in different orders on
 *    different ranks and deadlock.  put-fence therefore degrades write-comm-2 to write-comm
 *    (the nearest fixed-order schedule with both phases non-blocking; counted in the stats as
 *    `degraded`).  Every other schedule calls starts and finishes in the same order everywhere.
 *  - put-lock: the same windows; puts inside MPI_Win_lock(SHARED)/MPI_Win_unlock per target
 *    (unlock completes them at the target).  Synchronisation, per cycle, on a communicator of
 *    the half (a dup of the file's): a blocking MPI_Barrier before the puts ("drained": every
 *    aggregator reached this cycle's start, which in every schedule comes after the file access
 *    of the half's previous cycle) and an MPI_Ibarrier after the unlocks ("full"), whose request
 *    joins the half's requests.  Why barriers rather than per-pair notification messages: a
 *    "drained" signal must reach every sender before it may put, which with messages is a
 *    rendezvous (clear-to-send, put, done: three messages per pair per cycle) costing more than
 *    isend itself; the barrier is one collective per cycle whatever the pair count, and the
 *    Ibarrier makes "full" testable, so write-comm-2 keeps its data flow (MPI_Testall sees it).
 *    Deadlock-free in any schedule: each half communicator sees barrier(c), ibarrier(c),
 *    barrier(c+2), ... in the same order on every rank, and the only blocking wait a rank
 *    enters before its puts is for others to reach the same cycle's start.
 *  - shm: ranks in the aggregator's shared-memory group (the virtual node of f->node_of_rank,
 *    split again with MPI_COMM_TYPE_SHARED) memcpy their pieces straight into its half, which
 *    lives in an MPI_Win_allocate_shared window over the group (pointers from
 *    MPI_Win_shared_query; the window stays in a lock_all epoch, MPI_Win_sync around every
 *    barrier); ranks of other groups use isend, exactly as the isend primitive.  Synchronisation
 *    as put-lock, over the group's half communicators, and only in groups holding an
 *    aggregator of the call.  Reads: group members copy out of the half, others get isend.
 * Windows and communicators are created by the first call that needs them, grown collectively
 * (decided from the plan alone, so identically on every rank, no extra messages) and freed at
 * close (weft_shuffle_release).  The primitive in use is rank 0's hint (it travels in the first
 * allgather), so ranks never disagree on the pattern.
 */
#include "coll/coll.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/plan.h"
#include "coll/shuffle.h"
#include "common/error.h"
#include "common/trace.h"
#include "xfer/xfer.h"

enum { TAG_VIEW = 0x5701, TAG_DATA = 0x5702 };

/* What every rank tells every other at the start of a call. */
enum { F_RC, F_FIRST, F_END, F_POSITION, F_BYTES, F_FILE_SIZE, F_FLAGS, F_SHUFFLE, F_COUNT };
enum { FLAG_INDEPENDENT = 1 }; /* this rank wants (or needs) the independent path */

typedef struct remote_view {
    const weft_dtype *filetype; /* NULL: the rank sends nothing to this aggregator */
    MPI_Offset disp;
} remote_view;

/* An aggregator's window for one cycle: ranges of the file, back to back in its buffer. */
typedef struct window {
    int n;
    MPI_Offset *offset, *length, *at;
} window;

/* Bytes of a half that received data: a bitmap and the range [lo, hi) its marks lie in, so
 * that clearing and scanning cost what was marked, not the half's size (a sparse access's
 * cycles are mostly empty). */
typedef struct filled_map {
    uint64_t *bits;
    MPI_Offset lo, hi;          /* lo >= hi: nothing marked */
} filled_map;

/* One half of the cycle buffer, with everything one cycle in flight needs.  With an overlap
 * schedule two cycles are in flight, one per half (seed 000 §3.1.1). */
typedef struct half {
    int index;                  /* 0 or 1: which half (and which window) */
    int cycle;                  /* the cycle this half holds */
    window win;                 /* the aggregator's own window of that cycle */
    unsigned char *buffer;      /* aggregator: cycle_bytes of the cycle buffer */
    filled_map filled;          /* aggregator: bytes received */
    unsigned char *staging;     /* packed streams: outgoing (per aggregator), then incoming */
    MPI_Count staging_size;
    MPI_Count *out_at;          /* A + 1 offsets of my outgoing streams */
    MPI_Count *in_at;           /* P + 1 offsets of the incoming streams (aggregator) */
    MPI_Request *requests;
    int nreq;
    MPI_Datatype *types;        /* datatypes of transfers in flight, freed at finish */
    int ntypes;
    char *in_place;             /* isend: P flags (aggregator: rank r's data moves straight
                                   between MPI and the half) then A flags (mine: straight
                                   between MPI and the user's buffer) */
    weft_xfer_op *ops;          /* file access in flight */
    struct iovec *iov;
    int nops, ops_cap;
    double file_began;          /* trace: when this half's file access was submitted */
} half;

typedef struct engine {
    weft_file *f;
    const weft_access *a;
    int64_t (*all)[F_COUNT];    /* per rank */
    weft_plan plan;
    int my_aggregator;          /* index in the plan, or -1 */
    remote_view *views;         /* aggregator: per rank */
    MPI_Offset file_size;       /* for reads: bytes past it do not exist */
    window scratch;             /* a window being looked at (sender side) */
    half halves[2];
    weft_xfer_backend *backend;
    int backend_async;          /* file access can run while this rank does something else */
    int overlap;                /* weft_overlap in effect for this call (never "auto") */
    double shuffle_time, file_time; /* this call, this rank: what auto measures */
    int rc;                     /* first local failure */
    int shuffle;                /* weft_shuffle_kind of this call (rank 0's hint) */
    weft_shuffle_state *S;      /* f->shuffle */
    unsigned char **shm_ptr;    /* shm: per aggregator, its segment if in my group, else NULL */
    MPI_Offset *shm_half;       /* shm: per aggregator, bytes of each half of its segment */
    int shm_sync;               /* shm: my group holds an aggregator and more than one rank */
    MPI_Offset *spans;          /* aggregator, reads: 2P offsets, the file spans ranks need
                                   in one window range */
    MPI_Aint *pdisp;            /* RMA: landing places of my pieces for one aggregator */
    int *plen;
    int npieces, pcap;
} engine;

/* MPI_STATUSES_IGNORE is (MPI_Status *)1 in MPICH, whose prototypes carry access attributes:
 * gcc 12 then warns of writing statuses into "a region of size 0".  One place says so. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
static void wait_all(int n, MPI_Request *requests)
{
    if (n > 0)
        MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
}

static int test_all(int n, MPI_Request *requests)
{
    int done = 1;
    if (n > 0)
        MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
    return done;
}
#pragma GCC diagnostic pop

/* ---- Nodes ----------------------------------------------------------------------------- */

/* Per-rank table of one call: the allgathered facts, then the plan input arrays and the
 * interleaving check's scratch.  Lives in f->coll_table, so a call allocates nothing before
 * its allgather. */
typedef struct call_table {
    int64_t (*all)[F_COUNT];
    MPI_Offset *first, *end;
    void *scratch;
} call_table;

static call_table table_of(const weft_file *f)
{
    size_t P = (size_t)f->nprocs;
    call_table t;
    t.all = f->coll_table;
    t.first = (MPI_Offset *)(t.all + P);
    t.end = t.first + P;
    t.scratch = t.end + P;
    return t;
}

/* Host name of every node, for cb_config_list: each node's first rank contributes its
 * processor name (one allgatherv of nnodes names); virtual node i is "vnode<i>".  Names live
 * in one block after the pointer array.  `counts`, `displs`: P ints of scratch each. */
static void gather_node_names(weft_file *f, int virtual_nodes, const char **names,
                              int *counts, int *displs)
{
    enum { LEN = MPI_MAX_PROCESSOR_NAME + 1 };
    char *block = (char *)(names + f->nnodes);
    if (virtual_nodes) {
        for (int n = 0; n < f->nnodes; n++) {
            names[n] = block + (size_t)n * LEN;
            snprintf(block + (size_t)n * LEN, LEN, "vnode%d", n);
        }
        return;
    }
    int seen = 0; /* nodes are numbered by their first rank, in rank order */
    for (int r = 0; r < f->nprocs; r++) {
        int first_of_node = f->node_of_rank[r] == seen;
        counts[r] = first_of_node ? LEN : 0;
        displs[r] = first_of_node ? seen * LEN : 0;
        seen += first_of_node;
    }
    char mine[LEN] = "";
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    MPI_Allgatherv(mine, counts[f->rank], MPI_CHAR, block, counts, displs, MPI_CHAR, f->comm);
    for (int n = 0; n < f->nnodes; n++) {
        names[n] = block + (size_t)n * LEN;
        block[(size_t)n * LEN + LEN - 1] = '\0';
    }
}

/* Set up, once per file and collectively, what every collective call needs: the node index
 * of every rank — ranks sharing memory (MPI_COMM_TYPE_SHARED) are a node, numbered by their
 * lowest rank; WEFT_VIRTUAL_NODES=k instead cuts the ranks into k consecutive blocks, so
 * per-node logic runs on one machine as on a cluster — the nodes' host names, and the call
 * table.  Allocation failures are agreed on here: a rank that skipped a collective would
 * leave the others waiting in it. */
static int ensure_file_state(weft_file *f)
{
    if (f->node_of_rank)
        return 0;
    size_t P = (size_t)f->nprocs;
    int *map = malloc(sizeof *map * P);
    int *number = malloc(sizeof *number * P * 2);
    void *table = malloc(P * (sizeof(int64_t[F_COUNT]) + 2 * sizeof(MPI_Offset)) +
                         weft_plan_interleaved_scratch_bytes(f->nprocs));
    int rc = weft_agree(f->comm, map && number && table ? 0 : -ENOMEM);
    if (rc < 0) {
        free(map);
        free(number);
        free(table);
        return rc;
    }
    const char *virtual_nodes = getenv("WEFT_VIRTUAL_NODES");
    int k = virtual_nodes ? atoi(virtual_nodes) : 0;
    MPI_Comm node;
    int leader = f->rank;
    MPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    int machine_ranks; /* real cores are shared by real ranks */
    MPI_Comm_size(node, &machine_ranks);
    f->auto_backend = (int)weft_xfer_auto_kind(machine_ranks);
    if (k <= 0) /* real nodes: named by their lowest rank */
        MPI_Allreduce(&f->rank, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (k > 0) {
        if (k > f->nprocs)
            k = f->nprocs;
        for (int r = 0; r < f->nprocs; r++)
            map[r] = (int)((long long)r * k / f->nprocs);
        f->nnodes = k;
    } else {
        MPI_Allgather(&leader, 1, MPI_INT, map, 1, MPI_INT, f->comm);
        for (int r = 0; r < f->nprocs; r++)
            number[r] = -1;
        f->nnodes = 0;
        for (int r = 0; r < f->nprocs; r++) {
            if (number[map[r]] < 0)
                number[map[r]] = f->nnodes++;
            map[r] = number[map[r]];
        }
    }
    const char **names = malloc((size_t)f->nnodes * (sizeof(char *) + MPI_MAX_PROCESSOR_NAME + 1));
    rc = weft_agree(f->comm, names ? 0 : -ENOMEM);
    if (rc < 0) {
        free(map);
        free(number);
        free(table);
        free(names);
        return rc;
    }
    f->node_of_rank = map;
    gather_node_names(f, k > 0, names, number, number + P);
    free(number);
    f->node_name = names;
    f->coll_table = table;
    return 0;
}

/* ---- Positions inside a window --------------------------------------------------------- */

/* The data positions [*from, *to) of an access (position, bytes) through a view
 * (filetype, disp) whose file bytes lie in [lo, hi).  Exact because collective views are
 * monotonic with copies in order: positions and file offsets grow together. */
static void positions_in(const weft_dtype *filetype, MPI_Offset disp, MPI_Count position,
                         MPI_Count bytes, MPI_Offset lo, MPI_Offset hi, MPI_Count *from,
                         MPI_Count *to)
{
    MPI_Count a = weft_layout_position_at(filetype, disp, lo);
    MPI_Count b = weft_layout_position_at(filetype, disp, hi);
    if (a < position)
        a = position;
    if (b > position + bytes)
        b = position + bytes;
    *from = a;
    *to = b > a ? b : a;
}

/* Range i of a window, clipped for reads to the bytes that exist. */
static void range_of(const engine *e, const window *w, int i, MPI_Offset *lo, MPI_Offset *hi)
{
    *lo = w->offset[i];
    *hi = *lo + w->length[i];
    if (!e->a->write) {
        if (*hi > e->file_size)
            *hi = e->file_size;
        if (*lo > *hi)
            *lo = *hi;
    }
}

/* The data positions [*from, *to) of an access through a view (filetype, disp) at (position,
 * bytes) that fall in range i of window w, whose first file byte is *lo; 0 when none do. */
static int positions_in_range(const engine *e, const window *w, int i, const weft_dtype *filetype,
                              MPI_Offset disp, MPI_Count position, MPI_Count bytes,
                              MPI_Offset *lo, MPI_Count *from, MPI_Count *to)
{
    MPI_Offset hi;
    range_of(e, w, i, lo, &hi);
    positions_in(filetype, disp, position, bytes, *lo, hi, from, to);
    return *to > *from;
}

/* A cursor at data position `from` of a view whose offsets are addresses in `buffer`: file
 * byte lo of range i lands at w->at[i] (the view's offsets shifted into the buffer). */
static void cursor_in_half(weft_cursor *c, const weft_dtype *filetype, MPI_Offset disp,
                           unsigned char *buffer, const window *w, int i, MPI_Offset lo,
                           MPI_Count from)
{
    weft_cursor_init(c, filetype, -1, (MPI_Offset)(intptr_t)buffer + w->at[i] - lo + disp);
    weft_cursor_seek(c, from);
}

/* Bytes of rank r's access (through its view) inside window w. */
static MPI_Count stream_size(const engine *e, const window *w, const weft_dtype *filetype,
                             MPI_Offset disp, int r)
{
    MPI_Count total = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        range_of(e, w, i, &lo, &hi);
        positions_in(filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES], lo, hi, &from, &to);
        total += to - from;
    }
    return total;
}

static int window_alloc(window *w, int max)
{
    w->offset = malloc(sizeof(MPI_Offset) * (size_t)max);
    w->length = malloc(sizeof(MPI_Offset) * (size_t)max);
    w->at = malloc(sizeof(MPI_Offset) * (size_t)max);
    return w->offset && w->length && w->at ? 0 : -ENOMEM;
}

static void window_free(window *w)
{
    free(w->offset);
    free(w->length);
    free(w->at);
}

static void load_window(const engine *e, window *w, int aggregator, int cycle)
{
    w->n = weft_plan_window(&e->plan, aggregator, cycle, w->offset, w->length,
                            weft_plan_window_max(&e->plan));
    MPI_Offset at = 0;
    for (int i = 0; i < w->n; i++) {
        w->at[i] = at;
        at += w->length[i];
    }
}


/* ---- Bitmap of filled bytes -------------------------------------------------------------- */

static void mark(filled_map *m, MPI_Offset from, MPI_Offset len)
{
    MPI_Offset to = from + len;
    uint64_t *bits = m->bits;
    if (len <= 0)
        return;
    if (from < m->lo)
        m->lo = from;
    if (to > m->hi)
        m->hi = to;
    while (from < to && (from & 63)) {
        bits[from >> 6] |= 1ull << (from & 63);
        from++;
    }
    for (; from + 64 <= to; from += 64)
        bits[from >> 6] = ~0ull;
    for (; from < to; from++)
        bits[from >> 6] |= 1ull << (from & 63);
}

static void clear_marks(filled_map *m)
{
    if (m->lo < m->hi)
        memset(m->bits + (m->lo >> 6), 0,
               sizeof(uint64_t) * (size_t)(((m->hi + 63) >> 6) - (m->lo >> 6)));
    m->lo = INT64_MAX;
    m->hi = 0;
}

static int is_set(const uint64_t *bits, MPI_Offset i) { return (bits[i >> 6] >> (i & 63)) & 1; }

/* Next run of set bits in [from, limit): returns 1 with [*start, *end), or 0. */
static int next_run(const uint64_t *bits, MPI_Offset from, MPI_Offset limit, MPI_Offset *start,
                    MPI_Offset *end)
{
    MPI_Offset i = from;
    while (i < limit) {
        if ((i & 63) == 0 && i + 64 <= limit && bits[i >> 6] == 0) {
            i += 64;
            continue;
        }
        if (is_set(bits, i))
            break;
        i++;
    }
    if (i >= limit)
        return 0;
    MPI_Offset j = i;
    while (j < limit) {
        if ((j & 63) == 0 && j + 64 <= limit && bits[j >> 6] == ~0ull) {
            j += 64;
            continue;
        }
        if (!is_set(bits, j))
            break;
        j++;
    }
    *start = i;
    *end = j;
    return 1;
}

/* ---- Setup ------------------------------------------------------------------------------- */

static weft_partition_kind partition_of(const weft_hints *h)
{
    static const weft_partition_kind kinds[] = {WEFT_PARTITION_EVEN, WEFT_PARTITION_EVEN_ALIGNED,
                                                WEFT_PARTITION_STATIC_CYCLIC,
                                                WEFT_PARTITION_GROUP_CYCLIC};
    return kinds[h->value[WEFT_HINT_WEFT_PARTITION]];
}

/* Send my view to the aggregators my range touches; receive the views of the ranks whose
 * ranges touch mine (aggregators).  Both sides enumerate the same pairs. */
static int exchange_views(engine *e)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    int rc = 0;
    void *blob = NULL;
    size_t blob_len = 0;
    unsigned char *message = NULL;
    MPI_Request *sends = calloc((size_t)A + 1, sizeof *sends);
    char *touches = calloc((size_t)A + 1, 1);
    if (!sends || !touches)
        rc = -ENOMEM;
    int nsends = 0;
    if (rc == 0 && e->all[f->rank][F_BYTES] > 0) {
        rc = weft_dtype_serialize(f->view.filetype_t, &blob, &blob_len);
        message = rc == 0 ? malloc(blob_len + sizeof(MPI_Offset)) : NULL;
        if (rc == 0 && !message)
            rc = -ENOMEM;
        if (rc == 0) {
            memcpy(message, &f->view.disp, sizeof(MPI_Offset));
            memcpy(message + sizeof(MPI_Offset), blob, blob_len);
            /* Which aggregators own some byte of my range: walk the owner runs. */
            MPI_Offset at = e->all[f->rank][F_FIRST], end = e->all[f->rank][F_END];
            int seen = 0;
            while (at < end && seen < A) {
                MPI_Offset run_end;
                int owner = weft_plan_owner(&e->plan, at, &run_end);
                if (!touches[owner]) {
                    touches[owner] = 1;
                    seen++;
                }
                at = run_end > at ? run_end : end;
            }
            for (int a = 0; a < A; a++)
                if (touches[a])
                    MPI_Isend(message, (int)(blob_len + sizeof(MPI_Offset)), MPI_BYTE,
                              e->plan.aggregator_rank[a], TAG_VIEW, f->comm, &sends[nsends++]);
        }
    }
    if (e->my_aggregator >= 0) {
        e->views = calloc((size_t)P, sizeof *e->views);
        if (!e->views && rc == 0)
            rc = -ENOMEM;
        for (int r = 0; e->views && r < P; r++) {
            if (e->all[r][F_BYTES] <= 0)
                continue;
            /* Does r's range touch my domain?  The same walk as the sender's, from r's side. */
            MPI_Offset at = e->all[r][F_FIRST], end = e->all[r][F_END];
            int hit = 0, seen = 0;
            char *mine_seen = touches; /* reuse as scratch: reset per rank */
            memset(mine_seen, 0, (size_t)A);
            while (at < end && seen < A && !hit) {
                MPI_Offset run_end;
                int owner = weft_plan_owner(&e->plan, at, &run_end);
                if (!mine_seen[owner]) {
                    mine_seen[owner] = 1;
                    seen++;
                }
                hit = owner == e->my_aggregator;
                at = run_end > at ? run_end : end;
            }
            if (!hit)
                continue;
            MPI_Message msg;
            MPI_Status st;
            int count = 0;
            MPI_Mprobe(r, TAG_VIEW, f->comm, &msg, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            unsigned char *in = malloc((size_t)count + 1);
            MPI_Mrecv(in, count, MPI_BYTE, &msg, &st);
            if (!in || count < (int)sizeof(MPI_Offset)) {
                if (rc == 0)
                    rc = in ? WEFT_MPI_ERR(MPI_ERR_INTERN) : -ENOMEM;
            } else {
                memcpy(&e->views[r].disp, in, sizeof(MPI_Offset));
                int err = weft_dtype_deserialize(in + sizeof(MPI_Offset),
                                                 (size_t)count - sizeof(MPI_Offset),
                                                 &e->views[r].filetype);
                if (err && rc == 0)
                    rc = err;
            }
            free(in);
        }
    }
    wait_all(nsends, sends);
    free(sends);
    free(touches);
    free(message);
    free(blob);
    return rc;
}

static void engine_free(engine *e)
{
    if (e->views) {
        for (int r = 0; r < e->f->nprocs; r++)
            if (e->views[r].filetype)
                weft_dtype_put(e->views[r].filetype);
        free(e->views);
    }
    for (int k = 0; k < 2; k++) {
        half *h = &e->halves[k];
        /* Staging stays with the file for the next call (no page faults on every call). */
        if (h->staging) {
            e->f->coll_staging[k] = h->staging;
            e->f->coll_staging_size[k] = h->staging_size;
        }
        window_free(&h->win);
        free(h->filled.bits);
        free(h->out_at);
        free(h->in_at);
        free(h->requests);
        free(h->types);
        free(h->in_place);
        free(h->ops);
        free(h->iov);
    }
    window_free(&e->scratch);
    free(e->shm_ptr);
    free(e->shm_half);
    free(e->spans);
    free(e->pdisp);
    free(e->plen);
    weft_plan_free(&e->plan);
}

/* ---- One cycle's pieces ------------------------------------------------------------------- */

static void note_failure(engine *e, int rc)
{
    if (rc < 0 && e->rc == 0)
        e->rc = rc;
}

static int grow(void **p, size_t *have, size_t need)
{
    if (need <= *have)
        return 0;
    void *grown = realloc(*p, need);
    if (!grown)
        return -ENOMEM;
    *p = grown;
    *have = need;
    return 0;
}

/* Rank r's packed stream <-> its pieces in the half's buffer; to_buffer=1 scatters a received
 * stream and marks the bitmap (defined after walk_pieces, below). */
static void move_stream(engine *e, half *h, const weft_dtype *filetype, MPI_Offset disp, int r,
                        unsigned char *stream, int to_buffer);

/* This rank's data inside window w, packed from (pack=1) or unpacked into the user's buffer;
 * with stream == NULL only counts.  Returns the bytes. */
static MPI_Count move_user_data(engine *e, const window *w, unsigned char *stream, int pack)
{
    weft_file *f = e->f;
    const weft_access *a = e->a;
    MPI_Count at = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        range_of(e, w, i, &lo, &hi);
        positions_in(f->view.filetype_t, f->view.disp, a->view_position, a->bytes, lo, hi, &from, &to);
        if (to <= from)
            continue;
        if (stream && pack)
            weft_pack(a->buf, a->count, a->memtype, from - a->view_position, to - from, stream + at);
        else if (stream)
            weft_unpack(stream + at, to - from, a->buf, a->count, a->memtype, from - a->view_position);
        at += to - from;
    }
    return at;
}

/* ---- Pieces without streams (RMA and shm) ------------------------------------------------ */

typedef struct piece_ctx {
    engine *e;
    unsigned char *half_buffer; /* shm: the aggregator's half; NULL for other uses */
    unsigned char *stream;      /* shm: my packed stream for that aggregator */
    filled_map *filled;         /* bytes to mark (mark-only walks; scatters of streams) */
    int to_half;                /* shm: 1 stream -> half (write), 0 half -> stream (read) */
} piece_ctx;

typedef void (*piece_fn)(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at);

/* Rank r's pieces in window w, in stream order: where each lands in the aggregator's half
 * (in_buffer), its length, and its place in r's packed stream (at).  move_stream's walk. */
static void walk_pieces(const engine *e, const window *w, const weft_dtype *filetype,
                        MPI_Offset disp, int r, piece_fn fn, piece_ctx *ctx)
{
    MPI_Count at = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo;
        MPI_Count from, to;
        if (!positions_in_range(e, w, i, filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES],
                                &lo, &from, &to))
            continue;
        weft_cursor c;
        weft_cursor_init(&c, filetype, -1, disp);
        weft_cursor_seek(&c, from);
        MPI_Count left = to - from;
        MPI_Offset offset;
        MPI_Count length;
        while (left > 0 && weft_cursor_next(&c, &offset, &length, left)) {
            fn(ctx, w->at[i] + (offset - lo), length, at);
            at += length;
            left -= length;
        }
    }
}

static void piece_mark(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at)
{
    (void)at;
    mark(ctx->filled, in_buffer, length);
}

static void piece_copy(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at)
{
    if (ctx->to_half) {
        memcpy(ctx->half_buffer + in_buffer, ctx->stream + at, (size_t)length);
        if (ctx->filled)
            mark(ctx->filled, in_buffer, length);
    } else {
        memcpy(ctx->stream + at, ctx->half_buffer + in_buffer, (size_t)length);
    }
}

static void move_stream(engine *e, half *h, const weft_dtype *filetype, MPI_Offset disp, int r,
                        unsigned char *stream, int to_buffer)
{
    if (to_buffer) { /* one walk copies and marks the bitmap */
        piece_ctx ctx = {.e = e, .half_buffer = h->buffer, .stream = stream, .to_half = 1,
                         .filled = &h->filled};
        walk_pieces(e, &h->win, filetype, disp, r, piece_copy, &ctx);
        return;
    }
    /* Gathering needs no marks: the datatype engine's copy loops (fast paths for small
     * fixed-size blocks) pack from the half, through r's view, into the stream. */
    const window *w = &h->win;
    MPI_Count at = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo;
        MPI_Count from, to;
        if (!positions_in_range(e, w, i, filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES],
                                &lo, &from, &to))
            continue;
        weft_cursor in_half;
        cursor_in_half(&in_half, filetype, disp, h->buffer, w, i, lo, from);
        weft_pack_cursor(&in_half, to - from, stream + at);
        at += to - from;
    }
}

/* isend, on an aggregator: its own data in the half's window moves between the user's
 * buffer and the half with one two-cursor copy (to_half=1 for writes), instead of being
 * packed, sent to itself and scattered — three copies. */
static void self_move(engine *e, half *h, int to_half)
{
    const weft_access *a = e->a;
    const weft_view *v = &e->f->view;
    const window *w = &h->win;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo;
        MPI_Count from, to;
        if (!positions_in_range(e, w, i, v->filetype_t, v->disp, a->view_position, a->bytes, &lo,
                                &from, &to))
            continue;
        weft_cursor in_half, in_user;
        cursor_in_half(&in_half, v->filetype_t, v->disp, h->buffer, w, i, lo, from);
        weft_cursor_init(&in_user, a->memtype, a->count, (MPI_Offset)(intptr_t)a->buf);
        weft_cursor_seek(&in_user, from - a->view_position);
        if (to_half)
            weft_copy(&in_half, &in_user, to - from);
        else
            weft_copy(&in_user, &in_half, to - from);
    }
}

static void piece_collect(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at)
{
    (void)at;
    engine *e = ctx->e;
    if (e->npieces < 0)
        return; /* out of memory earlier in this walk */
    if (e->npieces > 0 && e->pdisp[e->npieces - 1] + e->plen[e->npieces - 1] == in_buffer) {
        e->plen[e->npieces - 1] += (int)length; /* adjacent in the half: one block */
        return;
    }
    if (e->npieces == e->pcap) {
        int cap = e->pcap ? 2 * e->pcap : 64;
        MPI_Aint *d = realloc(e->pdisp, sizeof *d * (size_t)cap);
        if (d)
            e->pdisp = d;
        int *l = realloc(e->plen, sizeof *l * (size_t)cap);
        if (l)
            e->plen = l;
        if (!d || !l) {
            e->npieces = -1;
            return;
        }
        e->pcap = cap;
    }
    e->pdisp[e->npieces] = (MPI_Aint)in_buffer;
    e->plen[e->npieces] = (int)length;
    e->npieces++;
}

/* Does rank r's data reach my half through a packed stream (isend), rather than by RMA or
 * a copy through shared memory?  (Aggregator side.) */
static int streams_from(const engine *e, int r)
{
    if (e->shuffle == WEFT_SHUFFLE_ISEND)
        return r != e->f->rank; /* my own data: self_move */
    if (e->shuffle == WEFT_SHUFFLE_SHM)
        return e->S->shm_rank_of[r] < 0;
    return 0;
}

/* Does my data for aggregator ag travel as a packed stream message?  (Sender side.) */
static int streams_to(const engine *e, int ag)
{
    if (e->shuffle == WEFT_SHUFFLE_ISEND)
        return ag != e->my_aggregator; /* my own window: self_move */
    if (e->shuffle == WEFT_SHUFFLE_SHM)
        return e->shm_ptr[ag] == NULL;
    return 0;
}

/* Where this cycle's streams lie in a half's staging buffer (my outgoing ones per aggregator,
 * then, on an aggregator, the incoming ones per rank); returns the bytes that takes.
 * `bound`: count every rank's data as a stream (shm decides which are streams only once its
 * window is set up, after the staging is sized). */
static MPI_Count stage_layout(engine *e, half *h, int cycle, int bound)
{
    int P = e->f->nprocs, A = e->plan.naggregators, me = e->f->rank;
    MPI_Count total = 0;
    for (int ag = 0; ag < A; ag++) {
        h->out_at[ag] = total;
        int moved_directly = e->shuffle == WEFT_SHUFFLE_ISEND && ag == e->my_aggregator;
        if (e->all[me][F_BYTES] > 0 && !moved_directly) { /* self_move needs no staging */
            load_window(e, &e->scratch, ag, cycle);
            total += move_user_data(e, &e->scratch, NULL, 0);
        }
    }
    h->out_at[A] = total;
    if (e->my_aggregator >= 0) {
        load_window(e, &e->scratch, e->my_aggregator, cycle);
        for (int r = 0; r < P; r++) {
            h->in_at[r] = total;
            if (e->views[r].filetype && (bound || streams_from(e, r)))
                total += stream_size(e, &e->scratch, e->views[r].filetype, e->views[r].disp, r);
        }
        h->in_at[P] = total;
    }
    return total;
}

static int injected_alloc_failure; /* tests: WEFT_TEST_INJECT=ENOMEM@R */

void weft_coll_inject_alloc_failure(int on) { injected_alloc_failure = on; }

/* Both halves' staging sized for the largest cycle of the call, before any message flies:
 * growing it inside the cycle loop could fail on one rank after the others had matched
 * messages to it.  (A second pass over the cycles' windows: O(depth) seeks per stream.) */
static int size_staging(engine *e)
{
    if (injected_alloc_failure && e->plan.ncycles > 0)
        return -ENOMEM;
    MPI_Count most = 0;
    for (int c = 0; c < e->plan.ncycles; c++) {
        MPI_Count total = stage_layout(e, &e->halves[0], c, 1);
        if (total > most)
            most = total;
    }
    for (int k = 0; k < 2; k++) {
        half *h = &e->halves[k];
        size_t have = (size_t)h->staging_size;
        if (grow((void **)&h->staging, &have, (size_t)most + 1) < 0)
            return -ENOMEM;
        h->staging_size = (MPI_Count)have;
    }
    return 0;
}

/* A cycle's layout in the half; its staging is large enough (size_staging). */
static void prepare(engine *e, half *h, int cycle)
{
    h->cycle = cycle;
    h->nreq = 0;
    h->win.n = 0;
    if (e->my_aggregator >= 0)
        load_window(e, &h->win, e->my_aggregator, cycle);
    stage_layout(e, h, cycle, 0);
}

static MPI_Count incoming(const engine *e, const half *h, int r)
{
    return e->my_aggregator >= 0 ? h->in_at[r + 1] - h->in_at[r] : 0;
}

/* ---- Shuffle primitives ------------------------------------------------------------------- */

/* RMA: my data for aggregator ag in the half's cycle, as one MPI_Put (or MPI_Get) between my
 * packed stream and the landing places in the aggregator's half window. */
static void rma_move(engine *e, half *h, int ag, MPI_Win win, int get)
{
    weft_file *f = e->f;
    MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
    unsigned char *origin = h->staging + h->out_at[ag];
    int target = e->plan.aggregator_rank[ag];
    piece_ctx ctx = {.e = e};
    load_window(e, &e->scratch, ag, h->cycle);
    e->npieces = 0;
    walk_pieces(e, &e->scratch, f->view.filetype_t, f->view.disp, f->rank, piece_collect, &ctx);
    if (e->npieces < 0) { /* out of memory: skip the transfer; the final agreement reports it */
        note_failure(e, -ENOMEM);
        return;
    }
    if (e->npieces == 1) {
        if (get)
            MPI_Get(origin, (int)size, MPI_BYTE, target, e->pdisp[0], (int)size, MPI_BYTE, win);
        else
            MPI_Put(origin, (int)size, MPI_BYTE, target, e->pdisp[0], (int)size, MPI_BYTE, win);
        return;
    }
    MPI_Datatype type;
    MPI_Type_create_hindexed(e->npieces, e->plen, e->pdisp, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    if (get)
        MPI_Get(origin, (int)size, MPI_BYTE, target, 0, 1, type, win);
    else
        MPI_Put(origin, (int)size, MPI_BYTE, target, 0, 1, type, win);
    /* Kept until the epoch closes (freeing now is allowed, but costs nothing to avoid). */
    h->types[h->ntypes++] = type;
}

static void free_types(half *h)
{
    for (int k = 0; k < h->ntypes; k++)
        MPI_Type_free(&h->types[k]);
    h->ntypes = 0;
}

/* MPI_Win_sync on my own half window: my loads/stores and the window's public copy agree. */
static void rma_sync_self(engine *e, half *h)
{
    MPI_Win win = e->S->rma_win[h->index];
    MPI_Win_lock(MPI_LOCK_SHARED, e->f->rank, 0, win);
    MPI_Win_sync(win);
    MPI_Win_unlock(e->f->rank, win);
}

/* put-lock/shm: lock, move, unlock to every aggregator I have data for (RMA), or copy through
 * shared memory (shm, aggregators of my group). */
static void direct_moves(engine *e, half *h, int get)
{
    int A = e->plan.naggregators;
    for (int ag = 0; ag < A; ag++) {
        MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
        if (size <= 0 || streams_to(e, ag))
            continue;
        if (e->shuffle == WEFT_SHUFFLE_SHM) {
            piece_ctx ctx = {.e = e, .half_buffer = e->shm_ptr[ag] + h->index * e->shm_half[ag],
                             .stream = h->staging + h->out_at[ag], .to_half = !get};
            load_window(e, &e->scratch, ag, h->cycle);
            walk_pieces(e, &e->scratch, e->f->view.filetype_t, e->f->view.disp, e->f->rank,
                        piece_copy, &ctx);
        } else if (e->shuffle == WEFT_SHUFFLE_PUT_LOCK) {
            MPI_Win win = e->S->rma_win[h->index];
            int target = e->plan.aggregator_rank[ag];
            MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
            rma_move(e, h, ag, win, get);
            MPI_Win_unlock(target, win);
            free_types(h);
        } else {
            rma_move(e, h, ag, e->S->rma_win[h->index], get);
        }
    }
}

/* The "drained" barrier of put-lock and shm (blocking; see the header), then my moves, then
 * the "full" Ibarrier whose request joins the half's requests. */
static void barrier_moves(engine *e, half *h, int get)
{
    if (e->shuffle == WEFT_SHUFFLE_PUT_LOCK) {
        MPI_Comm c = e->S->rma_half_comm[h->index];
        if (e->my_aggregator >= 0 && get)
            rma_sync_self(e, h); /* the file data read into my half is public */
        MPI_Barrier(c);
        direct_moves(e, h, get);
        MPI_Ibarrier(c, &h->requests[h->nreq++]);
    } else if (e->shm_sync) {
        MPI_Comm c = e->S->shm_half_comm[h->index];
        MPI_Win_sync(e->S->shm_win);
        MPI_Barrier(c);
        MPI_Win_sync(e->S->shm_win);
        direct_moves(e, h, get);
        MPI_Win_sync(e->S->shm_win);
        MPI_Ibarrier(c, &h->requests[h->nreq++]);
    } else {
        direct_moves(e, h, get); /* shm group of one (or without aggregator): all local */
    }
}

/* Write shuffle: post receives (aggregator), pack and send to every aggregator. */
/* ---- isend in place ------------------------------------------------------------------------
 * Staging costs two copies (pack, scatter).  When rank r's pieces in the half are long enough
 * that MPI moves them well itself, the aggregator receives (or sends) them straight into (or
 * from) the half with an hindexed datatype built from r's view; when my memory is contiguous,
 * my data moves straight from (into) the user's buffer.  Short pieces keep the staging path,
 * where the datatype engine's copy loops beat a datatype of millions of entries. */
#define IN_PLACE_RUN 256

static int half_type(engine *e, half *h, int r, MPI_Count size, MPI_Datatype *type)
{
    if (e->shuffle != WEFT_SHUFFLE_ISEND)
        return 0;
    piece_ctx ctx = {.e = e};
    e->npieces = 0;
    walk_pieces(e, &h->win, e->views[r].filetype, e->views[r].disp, r, piece_collect, &ctx);
    if (e->npieces <= 0 || size / e->npieces < IN_PLACE_RUN)
        return 0;
    MPI_Type_create_hindexed(e->npieces, e->plen, e->pdisp, MPI_BYTE, type);
    MPI_Type_commit(type);
    h->types[h->ntypes++] = *type;
    return 1;
}

/* My data inside window w as (buffer, count, type) over the user's contiguous memory. */
static int user_in_place(engine *e, half *h, const window *w, MPI_Count size, void **buffer,
                         int *count, MPI_Datatype *type)
{
    const weft_access *a = e->a;
    if (e->shuffle != WEFT_SHUFFLE_ISEND || !weft_dtype_is_contiguous(a->memtype))
        return 0;
    char *data = (char *)a->buf + weft_dtype_lb(a->memtype); /* data byte k is data[k] */
    MPI_Aint *addresses = malloc(sizeof *addresses * (size_t)(w->n + 1));
    int *lengths = malloc(sizeof *lengths * (size_t)(w->n + 1));
    int n = 0;
    for (int i = 0; addresses && lengths && i < w->n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        range_of(e, w, i, &lo, &hi);
        positions_in(e->f->view.filetype_t, e->f->view.disp, a->view_position, a->bytes, lo, hi,
                     &from, &to);
        if (to <= from)
            continue;
        MPI_Get_address(data + (from - a->view_position), &addresses[n]);
        lengths[n++] = (int)(to - from);
    }
    int ok = addresses && lengths && n > 0;
    if (ok) {
        *buffer = MPI_BOTTOM; /* addresses are absolute (MPI_Get_address) */
        MPI_Type_create_hindexed(n, lengths, addresses, MPI_BYTE, type);
    }
    if (ok) {
        MPI_Type_commit(type);
        h->types[h->ntypes++] = *type;
        *count = 1;
    }
    (void)size;
    free(addresses);
    free(lengths);
    return ok;
}

static void shuffle_start(engine *e, half *h, int cycle)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    double t0 = weft_now();
    prepare(e, h, cycle);
    int tag = TAG_DATA + (cycle & 1);
    if (e->my_aggregator >= 0 && h->win.n > 0)
        clear_marks(&h->filled);
    for (int r = 0; r < P && e->my_aggregator >= 0; r++) {
        h->in_place[r] = 0;
        if (incoming(e, h, r) <= 0)
            continue;
        MPI_Datatype type;
        if (half_type(e, h, r, incoming(e, h, r), &type)) {
            MPI_Irecv(h->buffer, 1, type, r, tag, f->comm, &h->requests[h->nreq++]);
            for (int k = 0; k < e->npieces; k++) /* what will be there once the wait returns */
                mark(&h->filled, e->pdisp[k], e->plen[k]);
            h->in_place[r] = 1;
        } else {
            MPI_Irecv(h->staging + h->in_at[r], (int)incoming(e, h, r), MPI_BYTE, r, tag, f->comm,
                      &h->requests[h->nreq++]);
        }
    }
    for (int ag = 0; ag < A; ag++) {
        MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
        if (size <= 0)
            continue;
        load_window(e, &e->scratch, ag, cycle);
        void *buffer;
        int count;
        MPI_Datatype type;
        if (streams_to(e, ag) && user_in_place(e, h, &e->scratch, size, &buffer, &count, &type)) {
            MPI_Isend(buffer, count, type, e->plan.aggregator_rank[ag], tag, f->comm,
                      &h->requests[h->nreq++]);
            continue;
        }
        move_user_data(e, &e->scratch, h->staging + h->out_at[ag], 1);
        if (streams_to(e, ag))
            MPI_Isend(h->staging + h->out_at[ag], (int)size, MPI_BYTE, e->plan.aggregator_rank[ag],
                      tag, f->comm, &h->requests[h->nreq++]);
    }
    if (e->shuffle == WEFT_SHUFFLE_PUT_FENCE) {
        MPI_Win_fence(0, e->S->rma_win[h->index]); /* opens the epoch */
        direct_moves(e, h, 0);
    } else if (e->shuffle != WEFT_SHUFFLE_ISEND) {
        barrier_moves(e, h, 0);
    }
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "shuffle post", "shuffle", WEFT_TRACE_LANE_MPI, cycle);
}

/* Write shuffle completion: wait, then scatter what arrived into the half's buffer and mark
 * what was put or copied there directly. */
static void shuffle_finish(engine *e, half *h)
{
    double t0 = weft_now();
    wait_all(h->nreq, h->requests);
    h->nreq = 0;
    if (e->shuffle == WEFT_SHUFFLE_PUT_FENCE) {
        MPI_Win_fence(0, e->S->rma_win[h->index]); /* closes it: every put is in place */
        free_types(h);
    } else if (e->shuffle == WEFT_SHUFFLE_PUT_LOCK && e->my_aggregator >= 0) {
        rma_sync_self(e, h);
    } else if (e->shuffle == WEFT_SHUFFLE_SHM && e->shm_sync) {
        MPI_Win_sync(e->S->shm_win);
    }
    free_types(h);
    if (e->my_aggregator >= 0 && h->win.n > 0) {
        piece_ctx ctx = {.e = e, .filled = &h->filled};
        for (int r = 0; r < e->f->nprocs; r++) {
            if (incoming(e, h, r) > 0 && !h->in_place[r]) {
                move_stream(e, h, e->views[r].filetype, e->views[r].disp, r, h->staging + h->in_at[r], 1);
            } else if (e->views[r].filetype && !streams_from(e, r)) {
                if (r == e->f->rank && e->shuffle == WEFT_SHUFFLE_ISEND)
                    self_move(e, h, 1);
                walk_pieces(e, &h->win, e->views[r].filetype, e->views[r].disp, r, piece_mark, &ctx);
            }
        }
    }
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "shuffle wait+scatter", "shuffle", WEFT_TRACE_LANE_MPI, h->cycle);
}

static int add_op(engine *e, half *h, int write, MPI_Offset offset, unsigned char *data,
                  MPI_Count length)
{
    if (h->nops == h->ops_cap) {
        int cap = h->ops_cap ? 2 * h->ops_cap : 16;
        weft_xfer_op *ops = realloc(h->ops, sizeof *ops * (size_t)cap);
        if (ops)
            h->ops = ops;
        struct iovec *iov = realloc(h->iov, sizeof *iov * (size_t)cap);
        if (iov)
            h->iov = iov;
        if (!ops || !iov)
            return -ENOMEM;
        h->ops_cap = cap;
    }
    /* op.iov is set when the list is complete: the array may still move. */
    h->iov[h->nops] = (struct iovec){.iov_base = data, .iov_len = (size_t)length};
    h->ops[h->nops] = (weft_xfer_op){.fd = e->f->fd, .write = write, .offset = offset, .iovcnt = 1};
    h->nops++;
    e->f->stats.aggregator_bytes += (uint64_t)length;
    return 0;
}

/* The file bytes [*start, *end) from data position `from` to the last byte before `to` of a
 * view (monotonic: offsets grow with positions); one cursor seeks to both ends. */
static void span_of(const weft_dtype *filetype, MPI_Offset disp, MPI_Count from, MPI_Count to,
                    MPI_Offset *start, MPI_Offset *end)
{
    weft_cursor c;
    MPI_Count length;
    *start = *end = 0;
    weft_cursor_init(&c, filetype, -1, disp);
    weft_cursor_seek(&c, from);
    weft_cursor_peek(&c, start, &length, 1);
    weft_cursor_seek(&c, to - 1);
    weft_cursor_peek(&c, end, &length, 1);
    *end += 1;
}

static int span_order(const void *x, const void *y)
{
    MPI_Offset a = *(const MPI_Offset *)x, b = *(const MPI_Offset *)y;
    return (a > b) - (a < b);
}

/* Holes up to this size between spans some rank needs are read through rather than skipped:
 * reading 64 KiB of page cache costs about what one more system call does. */
#define READ_GAP ((MPI_Offset)64 << 10)

/* Reads of range i [lo, hi) of the half's window: only the spans ranks need (from each rank's
 * first to its last byte in the range, holes inside a rank's span read through, as ROMIO's
 * sieving does), not the whole range: a sparse access (one variable of many, a corner of a
 * large array) would otherwise read every byte of the aggregator's domain.  Bytes of the
 * buffer left unread are needed by nobody. */
static int add_needed_reads(engine *e, half *h, int i, MPI_Offset lo, MPI_Offset hi)
{
    int n = 0;
    for (int r = 0; r < e->f->nprocs; r++) {
        const weft_dtype *filetype = e->views[r].filetype;
        MPI_Count from, to;
        if (!filetype)
            continue;
        positions_in(filetype, e->views[r].disp, e->all[r][F_POSITION], e->all[r][F_BYTES], lo,
                     hi, &from, &to);
        if (to <= from)
            continue;
        span_of(filetype, e->views[r].disp, from, to, &e->spans[2 * n], &e->spans[2 * n + 1]);
        n++;
    }
    qsort(e->spans, (size_t)n, 2 * sizeof(MPI_Offset), span_order);
    MPI_Offset base = h->win.at[i];
    for (int k = 0; k < n;) {
        MPI_Offset start = e->spans[2 * k], end = e->spans[2 * k + 1];
        for (k++; k < n && e->spans[2 * k] <= end + READ_GAP; k++)
            if (e->spans[2 * k + 1] > end)
                end = e->spans[2 * k + 1];
        start = start < lo ? lo : start;
        end = end > hi ? hi : end;
        if (end > start) {
            int rc = add_op(e, h, 0, start, h->buffer + base + (start - lo), end - start);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* The aggregator's file access for the half's cycle, submitted to the transfer backend.
 * Writes: the filled runs, range by range (ranges are back to back in the buffer, not in the
 * file).  Reads: each range.  Nothing is submitted after a failure. */
static void file_start(engine *e, half *h)
{
    double t0 = weft_now();
    h->nops = 0;
    if (e->my_aggregator < 0 || e->rc < 0)
        return;
    /* Build the whole list first: add_op may reallocate the arrays the backend reads. */
    for (int i = 0; i < h->win.n && e->rc == 0; i++) {
        MPI_Offset lo, hi;
        range_of(e, &h->win, i, &lo, &hi);
        MPI_Offset base = h->win.at[i];
        if (e->a->write) {
            MPI_Offset start, end;
            MPI_Offset from = base > h->filled.lo ? base : h->filled.lo;
            MPI_Offset limit = base + (hi - lo) < h->filled.hi ? base + (hi - lo) : h->filled.hi;
            while (e->rc == 0 && next_run(h->filled.bits, from, limit, &start, &end)) {
                note_failure(e, add_op(e, h, 1, lo + (start - base), h->buffer + start, end - start));
                from = end;
            }
        } else if (hi > lo) {
            note_failure(e, add_needed_reads(e, h, i, lo, hi));
        }
    }
    h->file_began = weft_now();
    for (int k = 0; k < h->nops; k++) {
        h->ops[k].iov = &h->iov[k];
        int rc = weft_xfer_submit(e->backend, &h->ops[k]);
        if (rc < 0) { /* not submitted: run it here so the op is complete either way */
            note_failure(e, rc);
            h->nops = k;
            break;
        }
    }
    e->file_time += weft_now() - t0;
}

static void file_finish(engine *e, half *h)
{
    double t0 = weft_now();
    for (int k = 0; k < h->nops; k++) {
        weft_xfer_op *op = &h->ops[k];
        note_failure(e, weft_xfer_wait(e->backend, op));
        e->f->stats.syscalls += op->syscalls;
        MPI_Count want = (MPI_Count)op->iov[0].iov_len;
        if (!op->write && op->rc == 0 && op->done < want) /* shrank under us: reads as zeros */
            memset((unsigned char *)op->iov[0].iov_base + op->done, 0, (size_t)(want - op->done));
    }
    if (h->nops > 0) {
        weft_trace_end(h->file_began, e->a->write ? "file write" : "file read", "file",
                       WEFT_TRACE_LANE_BACKEND, h->cycle);
        weft_trace_end(t0, "file wait", "wait", WEFT_TRACE_LANE_MPI, h->cycle);
    }
    h->nops = 0;
    e->file_time += weft_now() - t0;
}

/* Read scatter: aggregator sends each rank its part of the half's buffer; everyone posts
 * receives for its parts (or gets/copies them directly, with the other primitives). */
static void scatter_start(engine *e, half *h)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    double t0 = weft_now();
    int tag = TAG_DATA + (h->cycle & 1);
    for (int ag = 0; ag < A; ag++) {
        MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
        h->in_place[P + ag] = 0;
        if (size <= 0 || !streams_to(e, ag))
            continue;
        load_window(e, &e->scratch, ag, h->cycle);
        void *buffer;
        int count;
        MPI_Datatype type;
        if (user_in_place(e, h, &e->scratch, size, &buffer, &count, &type)) {
            MPI_Irecv(buffer, count, type, e->plan.aggregator_rank[ag], tag, f->comm,
                      &h->requests[h->nreq++]);
            h->in_place[P + ag] = 1;
        } else {
            MPI_Irecv(h->staging + h->out_at[ag], (int)size, MPI_BYTE, e->plan.aggregator_rank[ag],
                      tag, f->comm, &h->requests[h->nreq++]);
        }
    }
    for (int r = 0; r < P && e->my_aggregator >= 0; r++) {
        if (incoming(e, h, r) <= 0)
            continue;
        MPI_Datatype type;
        if (half_type(e, h, r, incoming(e, h, r), &type)) {
            MPI_Isend(h->buffer, 1, type, r, tag, f->comm, &h->requests[h->nreq++]);
            continue;
        }
        move_stream(e, h, e->views[r].filetype, e->views[r].disp, r, h->staging + h->in_at[r], 0);
        MPI_Isend(h->staging + h->in_at[r], (int)incoming(e, h, r), MPI_BYTE, r, tag, f->comm,
                  &h->requests[h->nreq++]);
    }
    if (e->my_aggregator >= 0 && e->shuffle == WEFT_SHUFFLE_ISEND && e->all[f->rank][F_BYTES] > 0)
        self_move(e, h, 0);
    if (e->shuffle == WEFT_SHUFFLE_PUT_FENCE) {
        MPI_Win_fence(0, e->S->rma_win[h->index]); /* the read data is exposed */
        direct_moves(e, h, 1);
    } else if (e->shuffle != WEFT_SHUFFLE_ISEND) {
        barrier_moves(e, h, 1);
    }
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "scatter post", "shuffle", WEFT_TRACE_LANE_MPI, h->cycle);
}

static void scatter_finish(engine *e, half *h)
{
    double t0 = weft_now();
    wait_all(h->nreq, h->requests);
    h->nreq = 0;
    if (e->shuffle == WEFT_SHUFFLE_PUT_FENCE)
        MPI_Win_fence(0, e->S->rma_win[h->index]); /* every get is done: the half is free */
    free_types(h);
    for (int ag = 0; ag < e->plan.naggregators; ag++) {
        if (h->out_at[ag + 1] - h->out_at[ag] <= 0 || h->in_place[e->f->nprocs + ag])
            continue;
        load_window(e, &e->scratch, ag, h->cycle);
        move_user_data(e, &e->scratch, h->staging + h->out_at[ag], 0);
    }
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "scatter wait+unpack", "shuffle", WEFT_TRACE_LANE_MPI, h->cycle);
}

/* ---- Schedules ----------------------------------------------------------------------------
 * Writes (seed 000 §3.1.1, Algorithms 1-4).  Each cycle c uses half c % 2; a half is reused
 * only after its previous cycle's file access has finished. */

enum { OVERLAP_NONE, OVERLAP_COMM, OVERLAP_WRITE, OVERLAP_WRITE_COMM, OVERLAP_WRITE_COMM_2,
       OVERLAP_AUTO };

static void write_cycles(engine *e, int first, int count)
{
    half *H = e->halves;
    int C = first + count;
    if (count <= 0)
        return;
    switch (e->overlap) {
    case OVERLAP_NONE:
        for (int c = first; c < C; c++) {
            shuffle_start(e, &H[0], c);
            shuffle_finish(e, &H[0]);
            file_start(e, &H[0]);
            file_finish(e, &H[0]);
        }
        break;
    case OVERLAP_COMM: /* Algorithm 1: the next shuffle flies while this cycle is written */
        shuffle_start(e, &H[first % 2], first);
        for (int c = first; c < C; c++) {
            half *now = &H[c % 2], *next = &H[(c + 1) % 2];
            shuffle_finish(e, now);
            if (c + 1 < C)
                shuffle_start(e, next, c + 1);
            file_start(e, now);
            file_finish(e, now);
        }
        break;
    case OVERLAP_WRITE: /* Algorithm 2: blocking shuffle, asynchronous write */
        for (int c = first; c < C; c++) {
            half *now = &H[c % 2];
            if (c - first >= 2)
                file_finish(e, now);
            shuffle_start(e, now, c);
            shuffle_finish(e, now);
            file_start(e, now);
        }
        for (int c = C - 2 > first ? C - 2 : first; c < C; c++)
            file_finish(e, &H[c % 2]);
        break;
    case OVERLAP_WRITE_COMM: /* Algorithm 3: write c and shuffle c+1 in flight, waited together */
        shuffle_start(e, &H[first % 2], first);
        shuffle_finish(e, &H[first % 2]);
        for (int c = first; c < C; c++) {
            half *now = &H[c % 2], *next = &H[(c + 1) % 2];
            file_start(e, now);
            if (c + 1 < C) {
                shuffle_start(e, next, c + 1);
                shuffle_finish(e, next);
            }
            file_finish(e, now);
        }
        break;
    default: { /* Algorithm 4: data flow — each completion posts its follow-up at once */
        int shuffled = first, written = first, posted = first;
        int shuffling[2] = {0, 0}, writing[2] = {0, 0};
        while (written < C) {
            int progressed = 0;
            /* A free half takes the next cycle's shuffle. */
            if (posted < C && !shuffling[posted % 2] && !writing[posted % 2] &&
                (posted == shuffled || posted == shuffled + 1)) {
                shuffle_start(e, &H[posted % 2], posted);
                shuffling[posted % 2] = 1;
                posted++;
                progressed = 1;
            }
            /* The oldest shuffle done: scatter and start writing it. */
            if (shuffled < posted && shuffling[shuffled % 2]) {
                half *h = &H[shuffled % 2];
                if (test_all(h->nreq, h->requests)) {
                    shuffle_finish(e, h);
                    shuffling[shuffled % 2] = 0;
                    file_start(e, h);
                    writing[shuffled % 2] = 1;
                    shuffled++;
                    progressed = 1;
                }
            }
            /* The oldest write done: its half is free again. */
            if (written < shuffled && writing[written % 2]) {
                half *h = &H[written % 2];
                int done = 1;
                for (int k = 0; k < h->nops && done; k++)
                    weft_xfer_test(e->backend, &h->ops[k], &done);
                if (done || (posted == shuffled && !shuffling[(written + 1) % 2])) {
                    file_finish(e, h); /* nothing else to overlap with: block */
                    writing[written % 2] = 0;
                    written++;
                    progressed = 1;
                }
            }
            if (!progressed && shuffled < posted) {
                half *h = &H[shuffled % 2]; /* nothing ready: block on the oldest shuffle */
                shuffle_finish(e, h);
                shuffling[shuffled % 2] = 0;
                file_start(e, h);
                writing[shuffled % 2] = 1;
                shuffled++;
            }
        }
        break;
    }
    }
}

/* Reads: with any overlap the next cycle's file read is in flight while this cycle's data
 * is scattered (prefetch); without, read then scatter. */
static void read_cycles(engine *e, int first, int count)
{
    half *H = e->halves;
    int C = first + count;
    if (count <= 0)
        return;
    if (e->overlap == OVERLAP_NONE) {
        for (int c = first; c < C; c++) {
            prepare(e, &H[0], c);
            file_start(e, &H[0]);
            file_finish(e, &H[0]);
            scatter_start(e, &H[0]);
            scatter_finish(e, &H[0]);
        }
        return;
    }
    prepare(e, &H[first % 2], first);
    file_start(e, &H[first % 2]);
    for (int c = first; c < C; c++) {
        half *now = &H[c % 2], *next = &H[(c + 1) % 2];
        file_finish(e, now);
        if (c + 1 < C) {
            prepare(e, next, c + 1);
            file_start(e, next);
        }
        scatter_start(e, now);
        scatter_finish(e, now);
    }
}

/* auto, step 1: the first cycle, run without overlap, measured; all ranks agree (max over
 * ranks) on shuffle and file time: overlap only pays when both phases take real time.
 * *all_async tells whether every rank's transfer backend is asynchronous (same on all ranks:
 * backends are chosen per rank, schedules must not be). */
static int overlap_pays(engine *e, int *all_async)
{
    double mine[3] = {e->shuffle_time, e->file_time, e->backend_async ? 0 : 1}, most[3];
    MPI_Allreduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, e->f->comm);
    double shuffle = most[0], file = most[1];
    double small = shuffle < file ? shuffle : file, large = shuffle < file ? file : shuffle;
    *all_async = most[2] == 0;
    return !(large < 50e-6 || small < 0.1 * large);
}

/* auto, step 2 (writes): which overlap schedule wins depends on the MPI's progress, the
 * backend and the cores left over (seed 000 table 1), so each runs AUTO_TRIAL_CYCLES cycles
 * of the call, timed from its first start to its last completion, and the one whose slowest
 * rank was fastest (one allreduce) takes the rest.  Through a synchronous backend a write
 * blocks wherever it is started, so write and write-comm are none with half-size cycles:
 * the candidates are then none, comm and write-comm-2 (the schedules that differ).  Every
 * rank runs the same cycles in the same schedules, so the shuffles' collective
 * synchronisation stays matched.  Returns -1,
 * running nothing, when the trials would take more than half of the cycles left: a poor
 * candidate should cost little. */
enum { AUTO_TRIAL_CYCLES = 3 };
static const char *const trial_span[] = {"auto trial: none", "auto trial: comm",
                                         "auto trial: write", "auto trial: write-comm",
                                         "auto trial: write-comm-2"};

static int try_overlap_schedules(engine *e, int *first, int all_async)
{
    int candidates[4], n = 0;
    candidates[n++] = all_async ? OVERLAP_WRITE_COMM : OVERLAP_NONE;
    if (e->shuffle != WEFT_SHUFFLE_PUT_FENCE) /* put-fence runs write-comm-2 as write-comm */
        candidates[n++] = OVERLAP_WRITE_COMM_2;
    if (all_async)
        candidates[n++] = OVERLAP_WRITE;
    candidates[n++] = OVERLAP_COMM;
    if (e->plan.ncycles - *first < 2 * n * AUTO_TRIAL_CYCLES)
        return -1;
    double took[4], slowest[4];
    for (int k = 0; k < n; k++) {
        e->overlap = candidates[k];
        double t0 = weft_now();
        write_cycles(e, *first, AUTO_TRIAL_CYCLES);
        took[k] = weft_now() - t0;
        weft_trace_end(t0, trial_span[candidates[k]], "overlap", WEFT_TRACE_LANE_MPI, *first);
        *first += AUTO_TRIAL_CYCLES;
    }
    MPI_Allreduce(took, slowest, n, MPI_DOUBLE, MPI_MAX, e->f->comm);
    e->f->stats.auto_trials++;
    int best = 0;
    for (int k = 1; k < n; k++)
        if (slowest[k] < slowest[best])
            best = k;
    return candidates[best];
}

/* weft_overlap=auto: the schedule for the rest of this call (cycles from *first on), and,
 * once measured, for the file's later calls in the same direction (a read's measurement says
 * nothing about the write schedules).
 * A read prefetches (write-comm) only when every backend is asynchronous: a synchronous
 * backend reads the next window before this one is scattered, which overlaps nothing and
 * keeps two windows in cache (2 ranks, tmpfs and ext4: reads of 8 to 512-byte pieces 4-15 %
 * faster without).  A write too short for the trials uses write-comm-2, which keeps two
 * shuffles in flight whatever the backend (the fastest fixed schedule, or within the spread
 * of it, on every small-piece case measured; see docs/COLLECTIVE.md), and remembers nothing,
 * so a later, longer write still measures. */
static int choose_overlap(engine *e, int *first)
{
    int *chosen = &e->f->overlap_chosen[e->a->write ? 1 : 0];
    if (*chosen >= 0)
        return *chosen;
    e->overlap = OVERLAP_NONE;
    if (e->a->write)
        write_cycles(e, 0, 1);
    else
        read_cycles(e, 0, 1);
    *first = 1;
    int all_async;
    int pays = overlap_pays(e, &all_async);
    /* Tests make the trials run whatever the first cycle measured (WEFT_TEST_AUTO_TRIAL=1,
     * set on every rank), since tiny test cycles rarely take real time. */
    if (!pays && !getenv("WEFT_TEST_AUTO_TRIAL"))
        return *chosen = OVERLAP_NONE;
    if (!e->a->write) /* every overlap schedule prefetches reads the same way */
        return *chosen = all_async ? OVERLAP_WRITE_COMM : OVERLAP_NONE;
    int best = try_overlap_schedules(e, first, all_async);
    if (best >= 0)
        return *chosen = best;
    /* put-fence has no testable completion: write-comm-2 would run as write-comm */
    return e->shuffle == WEFT_SHUFFLE_PUT_FENCE ? OVERLAP_WRITE_COMM : OVERLAP_WRITE_COMM_2;
}

/* ---- Windows and communicators of the shuffle primitives ------------------------------------ */

/* The local part (no MPI): the file's state object and arrays.  Agreed on before setup. */
static int shuffle_prepare(engine *e)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    if (e->shuffle == WEFT_SHUFFLE_ISEND)
        return 0;
    if (!f->shuffle)
        f->shuffle = calloc(1, sizeof *f->shuffle);
    if (!f->shuffle)
        return -ENOMEM;
    weft_shuffle_state *S = e->S = f->shuffle;
    if (e->shuffle == WEFT_SHUFFLE_SHM) {
        e->shm_ptr = calloc((size_t)A + 1, sizeof *e->shm_ptr);
        e->shm_half = calloc((size_t)A + 1, sizeof *e->shm_half);
        if (!S->shm_group)
            S->shm_group = malloc(sizeof(int) * (size_t)P);
        if (!S->shm_rank_of)
            S->shm_rank_of = malloc(sizeof(int) * (size_t)P);
        if (!S->shm_have)
            S->shm_have = calloc((size_t)P, sizeof(MPI_Offset));
        return e->shm_ptr && e->shm_half && S->shm_group && S->shm_rank_of && S->shm_have ? 0
                                                                                        : -ENOMEM;
    }
    if (!S->rma_have)
        S->rma_have = calloc((size_t)P, sizeof(MPI_Offset));
    return S->rma_have ? 0 : -ENOMEM;
}

/* The collective part: create or grow the windows the plan needs.  Whether to grow is decided
 * from the plan and the sizes every rank keeps of every window segment, so all members of a
 * window decide alike without a message.  Sets the aggregator's half buffers. */
static void shuffle_setup(engine *e)
{
    weft_file *f = e->f;
    weft_shuffle_state *S = e->S;
    int A = e->plan.naggregators;
    MPI_Offset need = e->plan.cycle_bytes;
    if (e->shuffle == WEFT_SHUFFLE_PUT_FENCE || e->shuffle == WEFT_SHUFFLE_PUT_LOCK) {
        int grow = !S->rma_windows;
        for (int ag = 0; ag < A; ag++)
            if (S->rma_have[e->plan.aggregator_rank[ag]] < need)
                grow = 1;
        if (grow) {
            for (int k = 0; k < 2 && S->rma_windows; k++)
                MPI_Win_free(&S->rma_win[k]);
            for (int ag = 0; ag < A; ag++)
                if (S->rma_have[e->plan.aggregator_rank[ag]] < need)
                    S->rma_have[e->plan.aggregator_rank[ag]] = need;
            for (int k = 0; k < 2; k++)
                MPI_Win_allocate((MPI_Aint)S->rma_have[f->rank], 1, MPI_INFO_NULL, f->comm,
                                 &S->rma_base[k], &S->rma_win[k]);
            S->rma_windows = 1;
        }
        if (e->shuffle == WEFT_SHUFFLE_PUT_LOCK && !S->rma_comms) {
            MPI_Comm_dup(f->comm, &S->rma_half_comm[0]);
            MPI_Comm_dup(f->comm, &S->rma_half_comm[1]);
            S->rma_comms = 1;
        }
        for (int k = 0; k < 2 && e->my_aggregator >= 0; k++)
            e->halves[k].buffer = S->rma_base[k];
        return;
    }
    /* shm */
    if (!S->shm_comms) {
        int P = f->nprocs;
        MPI_Comm node;
        MPI_Comm_split(f->comm, f->node_of_rank[f->rank], f->rank, &node);
        MPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &S->shm_comm);
        MPI_Comm_free(&node);
        MPI_Comm_rank(S->shm_comm, &S->shm_rank);
        MPI_Comm_size(S->shm_comm, &S->shm_size);
        int leader = f->rank;
        MPI_Allreduce(&f->rank, &leader, 1, MPI_INT, MPI_MIN, S->shm_comm);
        MPI_Allgather(&leader, 1, MPI_INT, S->shm_group, 1, MPI_INT, f->comm);
        for (int r = 0; r < P; r++)
            S->shm_rank_of[r] = -1;
        /* My group's members are the file ranks with my leader, in file-rank order, which is
         * their order in shm_comm (both splits keep the file's order). */
        for (int r = 0, n = 0; r < P; r++)
            if (S->shm_group[r] == leader)
                S->shm_rank_of[r] = n++;
        MPI_Comm_dup(S->shm_comm, &S->shm_half_comm[0]);
        MPI_Comm_dup(S->shm_comm, &S->shm_half_comm[1]);
        S->shm_comms = 1;
    }
    int grow = 0, any = 0;
    for (int ag = 0; ag < A; ag++) {
        int sr = S->shm_rank_of[e->plan.aggregator_rank[ag]];
        if (sr >= 0) {
            any = 1;
            if (S->shm_have[sr] < need)
                grow = 1;
        }
    }
    if (grow) {
        if (S->shm_window) {
            MPI_Win_unlock_all(S->shm_win);
            MPI_Win_free(&S->shm_win);
        }
        for (int ag = 0; ag < A; ag++) {
            int sr = S->shm_rank_of[e->plan.aggregator_rank[ag]];
            if (sr >= 0 && S->shm_have[sr] < need)
                S->shm_have[sr] = need;
        }
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each segment near its owner */
        void *base = NULL;
        MPI_Win_allocate_shared((MPI_Aint)(2 * S->shm_have[S->shm_rank]), 1, info, S->shm_comm,
                                &base, &S->shm_win);
        MPI_Info_free(&info);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, S->shm_win); /* for MPI_Win_sync, until freed */
        S->shm_window = 1;
    }
    e->shm_sync = any && S->shm_size > 1;
    for (int ag = 0; ag < A; ag++) {
        int sr = S->shm_rank_of[e->plan.aggregator_rank[ag]];
        if (sr < 0)
            continue;
        MPI_Aint size;
        int unit;
        void *ptr;
        MPI_Win_shared_query(S->shm_win, sr, &size, &unit, &ptr);
        e->shm_ptr[ag] = ptr;
        e->shm_half[ag] = S->shm_have[sr];
    }
    for (int k = 0; k < 2 && e->my_aggregator >= 0; k++)
        e->halves[k].buffer = e->shm_ptr[e->my_aggregator] + k * e->shm_half[e->my_aggregator];
}

void weft_shuffle_release(weft_file *f)
{
    weft_shuffle_state *S = f->shuffle;
    if (!S)
        return;
    /* The same objects in the same order on every rank (created by the same calls). */
    for (int k = 0; k < 2 && S->rma_windows; k++)
        MPI_Win_free(&S->rma_win[k]);
    for (int k = 0; k < 2 && S->rma_comms; k++)
        MPI_Comm_free(&S->rma_half_comm[k]);
    if (S->shm_window) {
        MPI_Win_unlock_all(S->shm_win);
        MPI_Win_free(&S->shm_win);
    }
    if (S->shm_comms) {
        MPI_Comm_free(&S->shm_half_comm[0]);
        MPI_Comm_free(&S->shm_half_comm[1]);
        MPI_Comm_free(&S->shm_comm);
    }
    free(S->rma_have);
    free(S->shm_group);
    free(S->shm_rank_of);
    free(S->shm_have);
    free(S);
    f->shuffle = NULL;
}

static int run_cycles(engine *e)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    int rc = window_alloc(&e->scratch, weft_plan_window_max(&e->plan));
    MPI_Offset half_bytes = e->plan.cycle_bytes;
    if (e->my_aggregator >= 0 && rc == 0 && e->shuffle == WEFT_SHUFFLE_ISEND) {
        MPI_Offset need = 2 * half_bytes;
        if (f->cycle_buffer_size < need) {
            free(f->cycle_buffer);
            f->cycle_buffer = malloc((size_t)need);
            f->cycle_buffer_size = f->cycle_buffer ? need : 0;
        }
        if (!f->cycle_buffer)
            rc = -ENOMEM;
    }
    if (e->my_aggregator >= 0 && rc == 0 && !e->a->write &&
        !(e->spans = malloc(sizeof(MPI_Offset) * 2 * (size_t)P)))
        rc = -ENOMEM;
    for (int k = 0; k < 2 && rc == 0; k++) {
        half *h = &e->halves[k];
        h->out_at = malloc(sizeof(MPI_Count) * (size_t)(A + 1));
        h->in_at = malloc(sizeof(MPI_Count) * (size_t)(P + 1));
        h->index = k;
        h->requests = malloc(sizeof(MPI_Request) * (size_t)(P + A + 1)); /* + a barrier */
        h->types = malloc(sizeof(MPI_Datatype) * (size_t)(P + A + 1));
        h->in_place = calloc((size_t)(P + A), 1);
        if (!h->out_at || !h->in_at || !h->requests || !h->types || !h->in_place ||
            window_alloc(&h->win, weft_plan_window_max(&e->plan)))
            rc = -ENOMEM;
        if (e->my_aggregator >= 0 && rc == 0) {
            if (e->shuffle == WEFT_SHUFFLE_ISEND)
                h->buffer = (unsigned char *)f->cycle_buffer + k * half_bytes;
            h->filled.bits = calloc((size_t)(half_bytes / 64 + 2), sizeof(uint64_t));
            clear_marks(&h->filled); /* all zero already: sets the empty range */
            if (!h->filled.bits)
                rc = -ENOMEM;
        }
    }
    /* The staging buffers of the last call, kept by the file (engine_free hands them back). */
    for (int k = 0; k < 2; k++) {
        e->halves[k].staging = f->coll_staging[k];
        e->halves[k].staging_size = f->coll_staging_size[k];
        f->coll_staging[k] = NULL;
        f->coll_staging_size[k] = 0;
    }
    if (rc == 0)
        rc = size_staging(e);
    if (rc == 0)
        rc = shuffle_prepare(e);
    /* Allocation failures are agreed on before any message flies; the caller's agreement
     * then tells every rank which failed. */
    if (weft_agree(f->comm, rc) < 0)
        return rc;
    if (e->shuffle != WEFT_SHUFFLE_ISEND)
        shuffle_setup(e); /* collective: windows created or grown */
    int first = 0;
    if (e->overlap == OVERLAP_AUTO)
        e->overlap = choose_overlap(e, &first);
    if (e->a->write)
        write_cycles(e, first, e->plan.ncycles - first);
    else
        read_cycles(e, first, e->plan.ncycles - first);
    return 0;
}


/* ---- Entry ------------------------------------------------------------------------------- */



static int independent_fallback(weft_file *f, const weft_access *a, MPI_Count *done, int *agreed)
{
    MPI_Offset failed_at;
    int rc = weft_access_independent(f, a, done, &failed_at);
    *agreed = weft_agree(f->comm, rc);
    return rc;
}

/*
 * A call costs two collectives when it goes straight to the file (the allgather, then the
 * agreement on the outcome) and a few more when it aggregates.  The allgather doubles as the
 * agreement on arguments (local_rc), so nothing before it may fail on one rank alone: the
 * per-rank table is the file's, and the interleaving check needs no allocation.
 */
int weft_coll_access(weft_file *f, const weft_access *a, MPI_Count *done, int local_rc,
                     int *agreed_out)
{
    *done = 0;
    *agreed_out = 0;
    engine e = {.f = f, .a = a, .my_aggregator = -1};
    weft_trace_enabled(); /* starts recording on first use when WEFT_TRACE is set */
    e.overlap = (int)f->hints.value[WEFT_HINT_WEFT_OVERLAP];
    int rc = ensure_file_state(f);
    if (rc < 0) { /* agreed inside */
        *agreed_out = rc;
        return local_rc < 0 ? local_rc : rc;
    }
    if (local_rc < 0)
        rc = local_rc;
    double t0 = weft_now();

    /* What I access, and whether I can go through aggregation at all. */
    int64_t mine[F_COUNT] = {rc, -1, -1, a->view_position, a->bytes, 0, 0,
                             f->hints.value[WEFT_HINT_WEFT_SHUFFLE]};
    if (rc == 0 && a->bytes > 0) {
        const weft_dtype *ft = f->view.filetype_t;
        mine[F_FIRST] = weft_view_byte_offset(&f->view, a->view_position);
        mine[F_END] = weft_view_byte_offset(&f->view, a->view_position + a->bytes - 1) + 1;
        if (!weft_dtype_is_monotonic(ft) || !weft_dtype_tiles_in_order(ft))
            mine[F_FLAGS] |= FLAG_INDEPENDENT; /* positions and offsets do not grow together */
    }
    int hint = a->write ? WEFT_HINT_ROMIO_CB_WRITE : WEFT_HINT_ROMIO_CB_READ;
    if (f->hints.value[hint] == WEFT_CB_DISABLE)
        mine[F_FLAGS] |= FLAG_INDEPENDENT;
    if (!a->write && rc == 0) {
        MPI_Offset size = 0;
        int err = f->fs->get_size(f->fd, &size);
        if (err)
            mine[F_RC] = err;
        mine[F_FILE_SIZE] = size;
    }
    call_table t = table_of(f);
    e.all = t.all;
    MPI_Allgather(mine, F_COUNT, MPI_INT64_T, e.all, F_COUNT, MPI_INT64_T, f->comm);

    int agreed = 0, independent = 0;
    for (int r = 0; r < f->nprocs; r++) {
        if (e.all[r][F_RC] < agreed)
            agreed = (int)e.all[r][F_RC];
        if (e.all[r][F_FLAGS] & FLAG_INDEPENDENT)
            independent = 1;
        if (e.all[r][F_FILE_SIZE] > e.file_size)
            e.file_size = e.all[r][F_FILE_SIZE];
    }
    if (agreed < 0) {
        *agreed_out = agreed;
        return (int)mine[F_RC];
    }

    MPI_Offset total_bytes = 0;
    int senders = 0;
    for (int r = 0; r < f->nprocs; r++) {
        t.first[r] = e.all[r][F_BYTES] > 0 ? e.all[r][F_FIRST] : -1;
        t.end[r] = e.all[r][F_BYTES] > 0 ? e.all[r][F_END] : -1;
        total_bytes += e.all[r][F_BYTES];
        senders += e.all[r][F_BYTES] > 0;
    }
    /* With an overlap schedule two cycles are in flight, each in its share of the buffer. */
    MPI_Offset share = f->hints.value[WEFT_HINT_CB_BUFFER_SIZE] / (e.overlap == OVERLAP_NONE ? 1 : 2);
    weft_plan_input in = {
        .nprocs = f->nprocs,
        .first = t.first,
        .end = t.end,
        .node_of_rank = f->node_of_rank,
        .nnodes = f->nnodes,
        .cb_nodes = (int)f->hints.value[WEFT_HINT_CB_NODES],
        .cb_config_list = f->hints.text[WEFT_HINT_CB_CONFIG_LIST],
        .node_name = f->node_name,
        /* auto keeps as many of the list's aggregators as the data fills cycles for (an
         * explicit cb_nodes is kept as given) */
        .aggregators_auto = f->hints.value[WEFT_HINT_WEFT_AGGREGATORS] == WEFT_AGGREGATORS_AUTO &&
                            f->hints.value[WEFT_HINT_CB_NODES] == 0,
        .total_bytes = total_bytes,
        .cb_buffer_size = weft_plan_cycle_size(share, f->hints.value[WEFT_HINT_WEFT_CYCLE_SIZE],
                                               senders),
        .auto_bytes = 0, /* the cycle size */
        .partition = partition_of(&f->hints),
        .stripe_unit = f->hints.value[WEFT_HINT_STRIPING_UNIT],
        .stripe_count = (int)f->hints.value[WEFT_HINT_STRIPING_FACTOR],
    };
    /* automatic: aggregation pays when accesses interleave; otherwise each rank's own
     * contiguous-ish range goes straight to the file.  Every rank decides the same from the
     * same table, and the check cannot fail: no agreement needed before going. */
    if (!independent && f->hints.value[hint] == WEFT_CB_AUTOMATIC &&
        !weft_plan_interleaved_in(&in, t.scratch))
        independent = 1;
    if (independent) {
        f->stats.plan_seconds += weft_now() - t0;
        f->stats.collective_independent++;
        return independent_fallback(f, a, done, agreed_out);
    }
    rc = weft_plan_build(&in, &e.plan);
    if (rc == 0 && e.plan.config_fallback && !f->warned_config && f->rank == 0)
        fprintf(stderr, "weft: %s: cb_config_list \"%s\" %s; using \"*:1\"\n", f->path,
                in.cb_config_list,
                e.plan.config_fallback == WEFT_PLAN_CONFIG_MALFORMED ? "is malformed"
                                                                     : "names no host of this job");
    f->warned_config |= rc == 0 && e.plan.config_fallback;
    /* Everyone computed the same plan from the same input; a failure to build it (memory) is
     * agreed on before any data moves. */
    agreed = weft_agree(f->comm, rc);
    if (agreed < 0) {
        weft_plan_free(&e.plan);
        f->stats.plan_seconds += weft_now() - t0;
        *agreed_out = agreed;
        return rc;
    }
    for (int ag = 0; ag < e.plan.naggregators; ag++)
        if (e.plan.aggregator_rank[ag] == f->rank)
            e.my_aggregator = ag;
    /* The primitive is rank 0's hint, so every rank follows the same pattern.  put-fence has
     * no testable completion: write-comm-2 runs as write-comm (see the header). */
    e.shuffle = (int)e.all[0][F_SHUFFLE];
    int degraded = 0;
    if (e.shuffle == WEFT_SHUFFLE_PUT_FENCE && e.overlap == OVERLAP_WRITE_COMM_2) {
        e.overlap = OVERLAP_WRITE_COMM;
        degraded = a->write; /* reads prefetch the same way under both */
    }
    f->stats.aggregators = e.plan.naggregators;
    f->stats.cycle_bytes = e.plan.cycle_bytes;
    f->stats.partition = (int)f->hints.value[WEFT_HINT_WEFT_PARTITION];

    note_failure(&e, exchange_views(&e));
    weft_xfer_kind actual = WEFT_XFER_SYNC;
    weft_xfer_kind kind = f->hints.value[WEFT_HINT_WEFT_BACKEND] == WEFT_BACKEND_AUTO
                              ? (weft_xfer_kind)f->auto_backend
                              : (weft_xfer_kind)f->hints.value[WEFT_HINT_WEFT_BACKEND];
    note_failure(&e, weft_xfer_backend_get(kind, &e.backend, &actual));
    e.backend_async = actual != WEFT_XFER_SYNC;
    f->stats.plan_seconds += weft_now() - t0;
    weft_trace_end(t0, "plan + views", "plan", WEFT_TRACE_LANE_MPI, -1);
    agreed = weft_agree(f->comm, e.rc);
    if (agreed == 0) {
        note_failure(&e, run_cycles(&e));
        agreed = weft_agree(f->comm, e.rc);
        f->stats.shuffle_seconds += e.shuffle_time;
        f->stats.file_seconds += e.file_time;
        f->stats.overlap[a->write ? 1 : 0] = e.overlap;
        f->stats.backend = (int)actual;
        f->stats.shuffle = e.shuffle;
        f->stats.degraded += (uint64_t)degraded;
    }
    *agreed_out = agreed;
    if (agreed == 0) {
        f->stats.collective_aggregated++;
        *done = a->bytes;
        if (!a->write) {
            MPI_Count exists = weft_view_position_at(&f->view, e.file_size) - a->view_position;
            *done = exists < 0 ? 0 : exists < a->bytes ? exists : a->bytes;
        }
    }
    engine_free(&e);
    return e.rc;
}
