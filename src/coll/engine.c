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
 */
#include "coll/coll.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/plan.h"
#include "common/error.h"
#include "xfer/xfer.h"

enum { TAG_VIEW = 0x5701, TAG_DATA = 0x5702 };

/* What every rank tells every other at the start of a call. */
enum { F_RC, F_FIRST, F_END, F_POSITION, F_BYTES, F_FILE_SIZE, F_FLAGS, F_COUNT };
enum { FLAG_INDEPENDENT = 1 }; /* this rank wants (or needs) the independent path */

typedef struct remote_view {
    const weft_dtype *filetype; /* NULL: the rank sends nothing to this aggregator */
    MPI_Offset disp;
} remote_view;

typedef struct engine {
    weft_file *f;
    const weft_access *a;
    int64_t (*all)[F_COUNT];    /* per rank */
    weft_plan plan;
    int my_aggregator;          /* index in the plan, or -1 */
    remote_view *views;         /* aggregator: per rank */
    MPI_Offset file_size;       /* for reads: bytes past it do not exist */
    /* per-cycle scratch */
    int window_max;
    MPI_Offset *window_offset, *window_length;
    MPI_Offset *window_at;      /* where each window range starts in the cycle buffer */
    unsigned char *buffer;      /* aggregator's cycle buffer */
    uint64_t *filled;           /* bitmap of buffer bytes received this cycle */
    unsigned char *staging;     /* packed streams, sent or received */
    MPI_Count staging_size;
    MPI_Request *requests;
    int rc;                     /* first local failure */
} engine;

/* ---- Nodes ----------------------------------------------------------------------------- */

/* Node index of every rank: ranks sharing memory (MPI_COMM_TYPE_SHARED) are a node, numbered
 * by their lowest rank; WEFT_VIRTUAL_NODES=k instead cuts the ranks into k consecutive blocks,
 * so per-node logic runs on one machine as on a cluster.  Computed once per file. */
static int ensure_node_map(weft_file *f)
{
    if (f->node_of_rank)
        return 0;
    int *map = malloc(sizeof *map * (size_t)f->nprocs);
    int *number = malloc(sizeof *number * (size_t)f->nprocs);
    if (!map || !number) {
        free(map);
        free(number);
        return -ENOMEM;
    }
    const char *virtual_nodes = getenv("WEFT_VIRTUAL_NODES");
    int k = virtual_nodes ? atoi(virtual_nodes) : 0;
    if (k > 0) {
        if (k > f->nprocs)
            k = f->nprocs;
        for (int r = 0; r < f->nprocs; r++)
            map[r] = (int)((long long)r * k / f->nprocs);
        f->nnodes = k;
    } else {
        MPI_Comm node;
        int leader = f->rank;
        MPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
        MPI_Allreduce(&f->rank, &leader, 1, MPI_INT, MPI_MIN, node);
        MPI_Comm_free(&node);
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
    free(number);
    f->node_of_rank = map;
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

/* Clip a window range to the bytes that exist (reads) or leave it (writes). */
static void range_of(const engine *e, int i, MPI_Offset *lo, MPI_Offset *hi)
{
    *lo = e->window_offset[i];
    *hi = *lo + e->window_length[i];
    if (!e->a->write) {
        if (*hi > e->file_size)
            *hi = e->file_size;
        if (*lo > *hi)
            *lo = *hi;
    }
}

/* Bytes of rank r's access inside the window currently loaded (n ranges). */
static MPI_Count stream_size(const engine *e, const weft_dtype *filetype, MPI_Offset disp, int r,
                             int n)
{
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        range_of(e, i, &lo, &hi);
        positions_in(filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES], lo, hi, &from, &to);
        total += to - from;
    }
    return total;
}

static int load_window(engine *e, int aggregator, int cycle)
{
    int n = weft_plan_window(&e->plan, aggregator, cycle, e->window_offset, e->window_length,
                             e->window_max);
    MPI_Offset at = 0;
    for (int i = 0; i < n; i++) {
        e->window_at[i] = at;
        at += e->window_length[i];
    }
    return n;
}

static int grow_staging(engine *e, MPI_Count size)
{
    if (size <= e->staging_size)
        return 0;
    unsigned char *grown = realloc(e->staging, (size_t)size);
    if (!grown)
        return -ENOMEM;
    e->staging = grown;
    e->staging_size = size;
    return 0;
}

/* ---- Bitmap of filled bytes -------------------------------------------------------------- */

static void mark(uint64_t *bits, MPI_Offset from, MPI_Offset len)
{
    MPI_Offset to = from + len;
    while (from < to && (from & 63)) {
        bits[from >> 6] |= 1ull << (from & 63);
        from++;
    }
    for (; from + 64 <= to; from += 64)
        bits[from >> 6] = ~0ull;
    for (; from < to; from++)
        bits[from >> 6] |= 1ull << (from & 63);
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
    if (nsends)
        MPI_Waitall(nsends, sends, MPI_STATUSES_IGNORE);
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
    weft_plan_free(&e->plan);
    free(e->all);
    free(e->window_offset);
    free(e->window_length);
    free(e->window_at);
    free(e->filled);
    free(e->staging);
    free(e->requests);
}

/* ---- Cycles ------------------------------------------------------------------------------ */

static void note_failure(engine *e, int rc)
{
    if (rc < 0 && e->rc == 0)
        e->rc = rc;
}

/* The aggregator's file access for one cycle.  Writes: the filled runs, each range apart
 * (ranges are back to back in the buffer, not in the file).  Reads: each range. */
static void aggregator_file_access(engine *e, int n)
{
    weft_file *f = e->f;
    for (int i = 0; i < n && e->rc == 0; i++) {
        MPI_Offset lo, hi;
        range_of(e, i, &lo, &hi);
        MPI_Offset base = e->window_at[i];
        unsigned long long calls = 0;
        if (e->a->write) {
            MPI_Offset start, end, from = base;
            while (e->rc == 0 && next_run(e->filled, from, base + (hi - lo), &start, &end)) {
                struct iovec iov = {.iov_base = e->buffer + start, .iov_len = (size_t)(end - start)};
                MPI_Count moved;
                note_failure(e, weft_xfer_pwritev_all(f->fd, &iov, 1, lo + (start - base), &moved, &calls));
                from = end;
            }
        } else if (hi > lo) {
            struct iovec iov = {.iov_base = e->buffer + base, .iov_len = (size_t)(hi - lo)};
            MPI_Count moved = 0;
            note_failure(e, weft_xfer_preadv_all(f->fd, &iov, 1, lo, &moved, &calls));
            if (moved < hi - lo) /* the file shrank under us: what is not there reads as 0 */
                memset(e->buffer + base + moved, 0, (size_t)(hi - lo - moved));
        }
        f->stats.syscalls += calls;
    }
}

/* Walk rank r's pieces in the loaded window and copy between the cycle buffer and its packed
 * stream: to_buffer=1 scatters a received stream (and marks the bitmap). */
static void move_stream(engine *e, const weft_dtype *filetype, MPI_Offset disp, int r, int n,
                        unsigned char *stream, int to_buffer)
{
    MPI_Count at = 0;
    for (int i = 0; i < n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        range_of(e, i, &lo, &hi);
        positions_in(filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES], lo, hi, &from, &to);
        if (to <= from)
            continue;
        weft_cursor c;
        weft_cursor_init(&c, filetype, -1, disp);
        weft_cursor_seek(&c, from);
        MPI_Count left = to - from;
        MPI_Offset offset;
        MPI_Count length;
        while (left > 0 && weft_cursor_next(&c, &offset, &length, left)) {
            MPI_Offset in_buffer = e->window_at[i] + (offset - lo);
            if (to_buffer) {
                memcpy(e->buffer + in_buffer, stream + at, (size_t)length);
                mark(e->filled, in_buffer, length);
            } else {
                memcpy(stream + at, e->buffer + in_buffer, (size_t)length);
            }
            at += length;
            left -= length;
        }
    }
}

/* This rank's data positions for aggregator `ag`'s loaded window, packed (write) or
 * unpacked (read) between the user's buffer and `stream`. */
static MPI_Count move_user_data(engine *e, int n, unsigned char *stream, int pack)
{
    weft_file *f = e->f;
    const weft_access *a = e->a;
    MPI_Count at = 0;
    for (int i = 0; i < n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        range_of(e, i, &lo, &hi);
        positions_in(f->view.filetype_t, f->view.disp, a->view_position, a->bytes, lo, hi, &from, &to);
        if (to <= from)
            continue;
        if (stream) {
            if (pack)
                weft_pack(a->buf, a->count, a->memtype, from - a->view_position, to - from, stream + at);
            else
                weft_unpack(stream + at, to - from, a->buf, a->count, a->memtype, from - a->view_position);
        }
        at += to - from;
    }
    return at;
}

static int run_cycles(engine *e)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators, me = f->rank;
    int write = e->a->write;
    e->window_max = weft_plan_window_max(&e->plan);
    e->window_offset = malloc(sizeof(MPI_Offset) * (size_t)e->window_max);
    e->window_length = malloc(sizeof(MPI_Offset) * (size_t)e->window_max);
    e->window_at = malloc(sizeof(MPI_Offset) * (size_t)e->window_max);
    e->requests = malloc(sizeof(MPI_Request) * (size_t)(P + A));
    MPI_Count *offsets = malloc(sizeof(MPI_Count) * (size_t)(P + A + 1));
    if (!e->window_offset || !e->window_length || !e->window_at || !e->requests || !offsets) {
        free(offsets);
        return -ENOMEM;
    }
    if (e->my_aggregator >= 0) {
        MPI_Offset need = e->plan.cycle_bytes;
        if (f->cycle_buffer_size < need) {
            free(f->cycle_buffer);
            f->cycle_buffer = malloc((size_t)need);
            f->cycle_buffer_size = f->cycle_buffer ? need : 0;
        }
        e->buffer = f->cycle_buffer;
        e->filled = calloc((size_t)(need / 64 + 2), sizeof(uint64_t));
        if (!e->buffer || !e->filled) {
            free(offsets);
            return -ENOMEM;
        }
    }

    for (int cycle = 0; cycle < e->plan.ncycles; cycle++) {
        int nreq = 0;
        double t0 = weft_now();
        /* My side as a contributor: one stream per aggregator. */
        MPI_Count mine_total = 0;
        for (int ag = 0; ag < A; ag++) {
            int n = load_window(e, ag, cycle);
            offsets[ag] = mine_total;
            mine_total += e->all[me][F_BYTES] > 0 ? move_user_data(e, n, NULL, 0) : 0;
        }
        offsets[A] = mine_total;
        /* The aggregator's side: one stream per contributing rank, staged after mine. */
        int n_mine = 0;
        MPI_Count theirs_total = 0;
        MPI_Count *their_at = offsets + A + 1; /* reuses the tail: P entries fit (P + A + 1) */
        if (e->my_aggregator >= 0) {
            n_mine = load_window(e, e->my_aggregator, cycle);
            for (int r = 0; r < P; r++) {
                their_at[r] = theirs_total;
                if (e->views[r].filetype)
                    theirs_total += stream_size(e, e->views[r].filetype, e->views[r].disp, r, n_mine);
            }
        }
        if (grow_staging(e, mine_total + theirs_total + 1) < 0) {
            free(offsets);
            return -ENOMEM;
        }
        unsigned char *outgoing = e->staging, *incoming = e->staging + mine_total;

        if (write) {
            /* Post receives, pack and send, wait; then scatter and write. */
            if (e->my_aggregator >= 0)
                for (int r = 0; r < P; r++) {
                    MPI_Count size = (r + 1 < P ? their_at[r + 1] : theirs_total) - their_at[r];
                    if (size > 0)
                        MPI_Irecv(incoming + their_at[r], (int)size, MPI_BYTE, r, TAG_DATA, f->comm,
                                  &e->requests[nreq++]);
                }
            for (int ag = 0; ag < A; ag++) {
                MPI_Count size = offsets[ag + 1] - offsets[ag];
                if (size <= 0)
                    continue;
                int n = load_window(e, ag, cycle);
                move_user_data(e, n, outgoing + offsets[ag], 1);
                MPI_Isend(outgoing + offsets[ag], (int)size, MPI_BYTE, e->plan.aggregator_rank[ag],
                          TAG_DATA, f->comm, &e->requests[nreq++]);
            }
            if (nreq > 0)
                MPI_Waitall(nreq, e->requests, MPI_STATUSES_IGNORE);
            double t1 = weft_now();
            f->stats.shuffle_seconds += t1 - t0;
            if (e->my_aggregator >= 0 && n_mine > 0) {
                n_mine = load_window(e, e->my_aggregator, cycle);
                memset(e->filled, 0, sizeof(uint64_t) * (size_t)(e->plan.cycle_bytes / 64 + 2));
                for (int r = 0; r < P; r++)
                    if (e->views[r].filetype && their_at[r] < (r + 1 < P ? their_at[r + 1] : theirs_total))
                        move_stream(e, e->views[r].filetype, e->views[r].disp, r, n_mine,
                                    incoming + their_at[r], 1);
                aggregator_file_access(e, n_mine);
            }
            f->stats.file_seconds += weft_now() - t1;
        } else {
            /* Aggregators read their window, then everyone exchanges. */
            if (e->my_aggregator >= 0 && n_mine > 0) {
                n_mine = load_window(e, e->my_aggregator, cycle);
                aggregator_file_access(e, n_mine);
                for (int r = 0; r < P; r++) {
                    MPI_Count size = (r + 1 < P ? their_at[r + 1] : theirs_total) - their_at[r];
                    if (size <= 0)
                        continue;
                    move_stream(e, e->views[r].filetype, e->views[r].disp, r, n_mine,
                                incoming + their_at[r], 0);
                    MPI_Isend(incoming + their_at[r], (int)size, MPI_BYTE, r, TAG_DATA, f->comm,
                              &e->requests[nreq++]);
                }
            }
            double t1 = weft_now();
            f->stats.file_seconds += t1 - t0;
            for (int ag = 0; ag < A; ag++) {
                MPI_Count size = offsets[ag + 1] - offsets[ag];
                if (size > 0)
                    MPI_Irecv(outgoing + offsets[ag], (int)size, MPI_BYTE, e->plan.aggregator_rank[ag],
                              TAG_DATA, f->comm, &e->requests[nreq++]);
            }
            if (nreq > 0)
                MPI_Waitall(nreq, e->requests, MPI_STATUSES_IGNORE);
            for (int ag = 0; ag < A; ag++) {
                if (offsets[ag + 1] - offsets[ag] <= 0)
                    continue;
                int n = load_window(e, ag, cycle);
                move_user_data(e, n, outgoing + offsets[ag], 0);
            }
            f->stats.shuffle_seconds += weft_now() - t1;
        }
    }
    free(offsets);
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

int weft_coll_access(weft_file *f, const weft_access *a, MPI_Count *done, int local_rc,
                     int *agreed_out)
{
    *done = 0;
    *agreed_out = 0;
    engine e = {.f = f, .a = a, .my_aggregator = -1};
    int rc = ensure_node_map(f);
    if (local_rc < 0)
        rc = local_rc;
    double t0 = weft_now();

    /* What I access, and whether I can go through aggregation at all. */
    int64_t mine[F_COUNT] = {rc, -1, -1, a->view_position, a->bytes, 0, 0};
    const weft_dtype *ft = f->view.filetype_t;
    if (a->bytes > 0) {
        mine[F_FIRST] = weft_view_byte_offset(&f->view, a->view_position);
        mine[F_END] = weft_view_byte_offset(&f->view, a->view_position + a->bytes - 1) + 1;
        if (!weft_dtype_is_monotonic(ft) || !weft_dtype_tiles_in_order(ft))
            mine[F_FLAGS] |= FLAG_INDEPENDENT; /* positions and offsets do not grow together */
    }
    int hint = a->write ? WEFT_HINT_ROMIO_CB_WRITE : WEFT_HINT_ROMIO_CB_READ;
    if (f->hints.value[hint] == WEFT_CB_DISABLE)
        mine[F_FLAGS] |= FLAG_INDEPENDENT;
    if (!a->write) {
        MPI_Offset size = 0;
        int err = f->fs->get_size(f->fd, &size);
        if (err && mine[F_RC] == 0)
            mine[F_RC] = err;
        mine[F_FILE_SIZE] = size;
    }
    e.all = malloc(sizeof *e.all * (size_t)f->nprocs);
    if (!e.all) {
        *agreed_out = weft_agree(f->comm, -ENOMEM); /* everyone learns of it */
        return -ENOMEM;
    }
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
        free(e.all);
        *agreed_out = agreed;
        return (int)mine[F_RC];
    }

    MPI_Offset *first = malloc(sizeof *first * (size_t)f->nprocs);
    MPI_Offset *end = malloc(sizeof *end * (size_t)f->nprocs);
    weft_plan_input in = {
        .nprocs = f->nprocs,
        .first = first,
        .end = end,
        .node_of_rank = f->node_of_rank,
        .nnodes = f->nnodes,
        .cb_nodes = (int)f->hints.value[WEFT_HINT_CB_NODES],
        .cb_config_list = f->hints.text[WEFT_HINT_CB_CONFIG_LIST],
        .cb_buffer_size = f->hints.value[WEFT_HINT_CB_BUFFER_SIZE],
        .partition = partition_of(&f->hints),
        .stripe_unit = f->hints.value[WEFT_HINT_STRIPING_UNIT],
        .stripe_count = (int)f->hints.value[WEFT_HINT_STRIPING_FACTOR],
    };
    if (!first || !end) {
        rc = -ENOMEM;
    } else {
        for (int r = 0; r < f->nprocs; r++) {
            first[r] = e.all[r][F_BYTES] > 0 ? e.all[r][F_FIRST] : -1;
            end[r] = e.all[r][F_BYTES] > 0 ? e.all[r][F_END] : -1;
        }
        /* automatic: aggregation pays when accesses interleave; otherwise each rank's own
         * contiguous-ish range goes straight to the file. */
        if (!independent && f->hints.value[hint] == WEFT_CB_AUTOMATIC && !weft_plan_interleaved(&in))
            independent = 1;
        if (!independent)
            rc = weft_plan_build(&in, &e.plan);
    }
    free(first);
    free(end);
    /* Everyone computed the same plan from the same input; a failure to build it (memory) is
     * agreed on before any data moves. */
    agreed = weft_agree(f->comm, rc);
    if (agreed < 0 || independent) {
        free(e.all);
        weft_plan_free(&e.plan);
        f->stats.plan_seconds += weft_now() - t0;
        if (agreed < 0) {
            *agreed_out = agreed;
            return rc;
        }
        f->stats.collective_independent++;
        return independent_fallback(f, a, done, agreed_out);
    }
    for (int ag = 0; ag < e.plan.naggregators; ag++)
        if (e.plan.aggregator_rank[ag] == f->rank)
            e.my_aggregator = ag;
    f->stats.aggregators = e.plan.naggregators;
    f->stats.partition = (int)f->hints.value[WEFT_HINT_WEFT_PARTITION];

    note_failure(&e, exchange_views(&e));
    f->stats.plan_seconds += weft_now() - t0;
    agreed = weft_agree(f->comm, e.rc);
    if (agreed == 0) {
        note_failure(&e, run_cycles(&e));
        agreed = weft_agree(f->comm, e.rc);
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
