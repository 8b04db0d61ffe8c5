/*
 * A cycle's shuffle phase, the same for every primitive (shuffle.h): streams packed, posted
 * and scattered here; what the primitive moves otherwise through its ops table.
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/trace.h"

const weft_shuffle_ops *weft_shuffle_ops_of(int kind)
{
    switch (kind) {
    case WEFT_SHUFFLE_PUT_FENCE: return &weft_shuffle_put_fence_ops;
    case WEFT_SHUFFLE_PUT_LOCK: return &weft_shuffle_put_lock_ops;
    case WEFT_SHUFFLE_SHM: return &weft_shuffle_shm_ops;
    default: return &weft_shuffle_isend_ops;
    }
}

weft_shuffle_state *weft_shuffle_state_of(engine *e)
{
    if (!e->cf->shuffle)
        e->cf->shuffle = calloc(1, sizeof *e->cf->shuffle);
    return e->S = e->cf->shuffle;
}

/* ---- isend in place ------------------------------------------------------------------------
 * Staging costs two copies (pack, scatter).  When rank r's pieces in the half are long enough
 * that MPI moves them well itself, the aggregator receives (or sends) them straight into (or
 * from) the half with an hindexed datatype built from r's view; when my memory is contiguous,
 * my data moves straight from (into) the user's buffer.  Short pieces keep the staging path,
 * where the datatype engine's copy loops beat a datatype of millions of entries. */
#define IN_PLACE_RUN 256

static int half_type(engine *e, half *h, int r, MPI_Count size, MPI_Datatype *type)
{
    if (!e->shuffle->in_place)
        return 0;
    piece_ctx ctx = {.e = e};
    e->npieces = 0;
    weft_walk_pieces(e, &h->win, e->views[r].filetype, e->views[r].disp, r, weft_piece_collect, &ctx);
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
    if (!e->shuffle->in_place || !weft_dtype_is_contiguous(a->memtype))
        return 0;
    char *data = (char *)a->buf + weft_dtype_lb(a->memtype); /* data byte k is data[k] */
    MPI_Aint *addresses = malloc(sizeof *addresses * (size_t)(w->n + 1));
    int *lengths = malloc(sizeof *lengths * (size_t)(w->n + 1));
    int n = 0;
    for (int i = 0; addresses && lengths && i < w->n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        weft_range_of(e, w, i, &lo, &hi);
        weft_positions_in(e->f->view.filetype_t, e->f->view.disp, a->view_position, a->bytes, lo, hi,
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

void weft_shuffle_post(engine *e, half *h, int cycle)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    double t0 = weft_now();
    weft_prepare_half(e, h, cycle);
    int tag = TAG_DATA + (cycle & 1);
    if (e->my_aggregator >= 0 && h->win.n > 0)
        weft_clear_marks(&h->filled);
    for (int r = 0; r < P && e->my_aggregator >= 0; r++) {
        h->in_place[r] = 0;
        if (weft_incoming(e, h, r) <= 0)
            continue;
        MPI_Datatype type;
        if (half_type(e, h, r, weft_incoming(e, h, r), &type)) {
            MPI_Irecv(h->buffer, 1, type, r, tag, f->comm, &h->requests[h->nreq++]);
            for (int k = 0; k < e->npieces; k++) /* what will be there once the wait returns */
                weft_mark(&h->filled, e->pdisp[k], e->plen[k]);
            h->in_place[r] = 1;
        } else {
            MPI_Irecv(h->staging + h->in_at[r], (int)weft_incoming(e, h, r), MPI_BYTE, r, tag, f->comm,
                      &h->requests[h->nreq++]);
        }
    }
    for (int ag = 0; ag < A; ag++) {
        MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
        if (size <= 0)
            continue;
        weft_load_window(e, &e->scratch, ag, cycle);
        void *buffer;
        int count;
        MPI_Datatype type;
        if (e->shuffle->streams_to(e, ag) && user_in_place(e, h, &e->scratch, size, &buffer, &count, &type)) {
            MPI_Isend(buffer, count, type, e->plan.aggregator_rank[ag], tag, f->comm,
                      &h->requests[h->nreq++]);
            continue;
        }
        weft_move_user_data(e, &e->scratch, h->staging + h->out_at[ag], 1);
        if (e->shuffle->streams_to(e, ag))
            MPI_Isend(h->staging + h->out_at[ag], (int)size, MPI_BYTE, e->plan.aggregator_rank[ag],
                      tag, f->comm, &h->requests[h->nreq++]);
    }
    if (e->shuffle->post)
        e->shuffle->post(e, h, 1);
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "shuffle post", "shuffle", WEFT_TRACE_LANE_MPI, cycle);
}

/* Write shuffle completion: wait, then scatter what arrived into the half's buffer and mark
 * what was put or copied there directly. */
void weft_shuffle_complete(engine *e, half *h)
{
    double t0 = weft_now();
    weft_requests_wait(h->nreq, h->requests);
    h->nreq = 0;
    if (e->shuffle->complete)
        e->shuffle->complete(e, h, 1);
    weft_free_types(h);
    if (e->my_aggregator >= 0 && h->win.n > 0) {
        piece_ctx ctx = {.e = e, .filled = &h->filled};
        for (int r = 0; r < e->f->nprocs; r++) {
            if (weft_incoming(e, h, r) > 0 && !h->in_place[r]) {
                weft_move_stream(e, h, r, h->staging + h->in_at[r], 1);
            } else if (e->views[r].filetype && !e->shuffle->streams_from(e, r)) {
                if (r == e->f->rank && e->shuffle->self_copies)
                    weft_self_move(e, h, 1);
                weft_walk_pieces(e, &h->win, e->views[r].filetype, e->views[r].disp, r, weft_piece_mark, &ctx);
            }
        }
    }
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "shuffle wait+scatter", "shuffle", WEFT_TRACE_LANE_MPI, h->cycle);
}

/* Read scatter: aggregator sends each rank its part of the half's buffer; everyone posts
 * receives for its parts (or gets/copies them directly, with the other primitives). */
void weft_scatter_post(engine *e, half *h)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    double t0 = weft_now();
    int tag = TAG_DATA + (h->cycle & 1);
    for (int ag = 0; ag < A; ag++) {
        MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
        h->in_place[P + ag] = 0;
        if (size <= 0 || !e->shuffle->streams_to(e, ag))
            continue;
        weft_load_window(e, &e->scratch, ag, h->cycle);
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
        if (weft_incoming(e, h, r) <= 0)
            continue;
        MPI_Datatype type;
        if (half_type(e, h, r, weft_incoming(e, h, r), &type)) {
            MPI_Isend(h->buffer, 1, type, r, tag, f->comm, &h->requests[h->nreq++]);
            continue;
        }
        weft_move_stream(e, h, r, h->staging + h->in_at[r], 0);
        MPI_Isend(h->staging + h->in_at[r], (int)weft_incoming(e, h, r), MPI_BYTE, r, tag, f->comm,
                  &h->requests[h->nreq++]);
    }
    if (e->my_aggregator >= 0 && e->shuffle->self_copies && e->all[f->rank][F_BYTES] > 0)
        weft_self_move(e, h, 0);
    if (e->shuffle->post)
        e->shuffle->post(e, h, 0);
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "scatter post", "shuffle", WEFT_TRACE_LANE_MPI, h->cycle);
}

void weft_scatter_complete(engine *e, half *h)
{
    double t0 = weft_now();
    weft_requests_wait(h->nreq, h->requests);
    h->nreq = 0;
    if (e->shuffle->complete)
        e->shuffle->complete(e, h, 0);
    weft_free_types(h);
    for (int ag = 0; ag < e->plan.naggregators; ag++) {
        if (h->out_at[ag + 1] - h->out_at[ag] <= 0 || h->in_place[e->f->nprocs + ag])
            continue;
        weft_load_window(e, &e->scratch, ag, h->cycle);
        weft_move_user_data(e, &e->scratch, h->staging + h->out_at[ag], 0);
    }
    e->shuffle_time += weft_now() - t0;
    weft_trace_end(t0, "scatter wait+unpack", "shuffle", WEFT_TRACE_LANE_MPI, h->cycle);
}

/* The one-sided and shared-memory primitives: my data for every aggregator I have data for
 * and do not stream to, moved by `move_one` (a put or get, or a copy through shared memory). */
void weft_direct_moves(engine *e, half *h, int get,
                       void (*move_one)(engine *e, half *h, int ag, int get))
{
    for (int ag = 0; ag < e->plan.naggregators; ag++) {
        MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
        if (size > 0 && !e->shuffle->streams_to(e, ag))
            move_one(e, h, ag, get);
    }
}

void weft_drained_post(engine *e, half *h, MPI_Comm comm,
                       void (*moves)(engine *e, half *h, int write), int write)
{
    /* Always the nonblocking barrier, waited on at once by calls that may wait: a rank
     * polling (with nonblocking calls pending) and one waiting must post matching ones. */
    MPI_Ibarrier(comm, &h->drained);
    h->moves_pending = 1;
    if (e->blocking) {
        weft_requests_wait(1, &h->drained);
        h->moves_pending = 0;
        moves(e, h, write);
    }
}

int weft_drained_advance(engine *e, half *h, void (*moves)(engine *e, half *h, int write),
                         int write)
{
    if (!h->moves_pending)
        return 1;
    if (!weft_requests_test(1, &h->drained))
        return 0;
    h->moves_pending = 0;
    moves(e, h, write);
    return 1;
}

int weft_shuffle_ready(engine *e, half *h)
{
    if (e->shuffle->advance && !e->shuffle->advance(e, h, e->a->write))
        return 0;
    return weft_requests_test(h->nreq, h->requests);
}
