/*
 * Moving a rank's pieces (DESIGN.md §3.1): its data inside a window packed from or unpacked
 * into the user's buffer, a packed stream scattered into (or gathered from) an aggregator's
 * half through the sender's view, the pieces walked one by one for the one-sided primitives,
 * and where each cycle's streams lie in a half's staging buffer.
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void weft_note_failure(engine *e, int rc)
{
    if (rc < 0 && e->rc == 0)
        e->rc = rc;
}

int weft_grow(void **p, size_t *have, size_t need)
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


/* This rank's data inside window w, packed from (pack=1) or unpacked into the user's buffer;
 * with stream == NULL only counts.  Returns the bytes. */
MPI_Count weft_move_user_data(engine *e, const window *w, unsigned char *stream, int pack)
{
    weft_file *f = e->f;
    const weft_access *a = e->a;
    MPI_Count at = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        weft_range_of(e, w, i, &lo, &hi);
        weft_positions_in(f->view.filetype_t, f->view.disp, a->view_position, a->bytes, lo, hi, &from, &to);
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


/* Rank r's pieces in window w, in stream order: where each lands in the aggregator's half
 * (in_buffer), its length, and its place in r's packed stream (at).  move_stream's walk. */
void weft_walk_pieces(const engine *e, const window *w, const weft_dtype *filetype,
                        MPI_Offset disp, int r, piece_fn fn, piece_ctx *ctx)
{
    MPI_Count at = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo;
        MPI_Count from, to;
        if (!weft_positions_in_range(e, w, i, filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES],
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

void weft_piece_mark(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at)
{
    (void)at;
    weft_mark(ctx->filled, in_buffer, length);
}

void weft_piece_copy(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at)
{
    if (ctx->to_half) {
        memcpy(ctx->half_buffer + in_buffer, ctx->stream + at, (size_t)length);
        if (ctx->filled)
            weft_mark(ctx->filled, in_buffer, length);
    } else {
        memcpy(ctx->stream + at, ctx->half_buffer + in_buffer, (size_t)length);
    }
}

void weft_move_stream(engine *e, half *h, int r, unsigned char *stream, int to_buffer)
{
    const weft_dtype *filetype = e->views[r].filetype;
    MPI_Offset disp = e->views[r].disp;
    if (to_buffer) { /* one walk copies and marks the bitmap */
        piece_ctx ctx = {.e = e, .half_buffer = h->buffer, .stream = stream, .to_half = 1,
                         .filled = &h->filled};
        weft_walk_pieces(e, &h->win, filetype, disp, r, weft_piece_copy, &ctx);
        return;
    }
    /* Gathering needs no marks: the datatype engine's copy loops (fast paths for small
     * fixed-size blocks) pack from the half, through r's view, into the stream. */
    const window *w = &h->win;
    MPI_Count at = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo;
        MPI_Count from, to;
        if (!weft_positions_in_range(e, w, i, filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES],
                                &lo, &from, &to))
            continue;
        weft_cursor in_half;
        weft_cursor_in_half(&in_half, filetype, disp, h->buffer, w, i, lo, from);
        weft_pack_cursor(&in_half, to - from, stream + at);
        at += to - from;
    }
}

/* isend, on an aggregator: its own data in the half's window moves between the user's
 * buffer and the half with one two-cursor copy (to_half=1 for writes), instead of being
 * packed, sent to itself and scattered — three copies. */
void weft_self_move(engine *e, half *h, int to_half)
{
    const weft_access *a = e->a;
    const weft_view *v = &e->f->view;
    const window *w = &h->win;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo;
        MPI_Count from, to;
        if (!weft_positions_in_range(e, w, i, v->filetype_t, v->disp, a->view_position, a->bytes, &lo,
                                &from, &to))
            continue;
        weft_cursor in_half, in_user;
        weft_cursor_in_half(&in_half, v->filetype_t, v->disp, h->buffer, w, i, lo, from);
        weft_cursor_init(&in_user, a->memtype, a->count, (MPI_Offset)(intptr_t)a->buf);
        weft_cursor_seek(&in_user, from - a->view_position);
        if (to_half)
            weft_copy(&in_half, &in_user, to - from);
        else
            weft_copy(&in_user, &in_half, to - from);
    }
}

void weft_piece_collect(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at)
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
        int moved_directly = e->shuffle->self_copies && ag == e->my_aggregator;
        if (e->all[me][F_BYTES] > 0 && !moved_directly) { /* self_move needs no staging */
            weft_load_window(e, &e->scratch, ag, cycle);
            total += weft_move_user_data(e, &e->scratch, NULL, 0);
        }
    }
    h->out_at[A] = total;
    if (e->my_aggregator >= 0) {
        weft_load_window(e, &e->scratch, e->my_aggregator, cycle);
        for (int r = 0; r < P; r++) {
            h->in_at[r] = total;
            if (e->views[r].filetype && (bound || e->shuffle->streams_from(e, r)))
                total += weft_stream_size(e, &e->scratch, e->views[r].filetype, e->views[r].disp, r);
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
int weft_size_staging(engine *e)
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
        if (weft_grow((void **)&h->staging, &have, (size_t)most + 1) < 0)
            return -ENOMEM;
        h->staging_size = (MPI_Count)have;
    }
    return 0;
}

/* A cycle's layout in the half; its staging is large enough (size_staging). */
void weft_prepare_half(engine *e, half *h, int cycle)
{
    h->cycle = cycle;
    h->nreq = 0;
    h->win.n = 0;
    if (e->my_aggregator >= 0)
        weft_load_window(e, &h->win, e->my_aggregator, cycle);
    stage_layout(e, h, cycle, 0);
}

MPI_Count weft_incoming(const engine *e, const half *h, int r)
{
    return e->my_aggregator >= 0 ? h->in_at[r + 1] - h->in_at[r] : 0;
}


void weft_free_types(half *h)
{
    for (int k = 0; k < h->ntypes; k++)
        MPI_Type_free(&h->types[k]);
    h->ntypes = 0;
}
