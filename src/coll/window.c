/*
 * Windows of a cycle and the data positions inside them (DESIGN.md §3.1).  A window is the
 * file ranges an aggregator handles in one cycle, back to back in its half of the cycle
 * buffer.  Collective views are monotonic with copies in order, so positions and file offsets
 * grow together: the data positions of any view inside any range follow from two O(depth)
 * cursor seeks, on both sides, without offset lists.  Also the filled-bytes bitmap.
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The data positions [*from, *to) of an access (position, bytes) through a view
 * (filetype, disp) whose file bytes lie in [lo, hi).  Exact because collective views are
 * monotonic with copies in order: positions and file offsets grow together. */
void weft_positions_in(const weft_dtype *filetype, MPI_Offset disp, MPI_Count position,
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
void weft_range_of(const engine *e, const window *w, int i, MPI_Offset *lo, MPI_Offset *hi)
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
int weft_positions_in_range(const engine *e, const window *w, int i, const weft_dtype *filetype,
                              MPI_Offset disp, MPI_Count position, MPI_Count bytes,
                              MPI_Offset *lo, MPI_Count *from, MPI_Count *to)
{
    MPI_Offset hi;
    weft_range_of(e, w, i, lo, &hi);
    weft_positions_in(filetype, disp, position, bytes, *lo, hi, from, to);
    return *to > *from;
}

/* A cursor at data position `from` of a view whose offsets are addresses in `buffer`: file
 * byte lo of range i lands at w->at[i] (the view's offsets shifted into the buffer). */
void weft_cursor_in_half(weft_cursor *c, const weft_dtype *filetype, MPI_Offset disp,
                           unsigned char *buffer, const window *w, int i, MPI_Offset lo,
                           MPI_Count from)
{
    weft_cursor_init(c, filetype, -1, (MPI_Offset)(intptr_t)buffer + w->at[i] - lo + disp);
    weft_cursor_seek(c, from);
}

/* Bytes of rank r's access (through its view) inside window w. */
MPI_Count weft_stream_size(const engine *e, const window *w, const weft_dtype *filetype,
                             MPI_Offset disp, int r)
{
    MPI_Count total = 0;
    for (int i = 0; i < w->n; i++) {
        MPI_Offset lo, hi;
        MPI_Count from, to;
        weft_range_of(e, w, i, &lo, &hi);
        weft_positions_in(filetype, disp, e->all[r][F_POSITION], e->all[r][F_BYTES], lo, hi, &from, &to);
        total += to - from;
    }
    return total;
}

int weft_window_alloc(window *w, int max)
{
    w->offset = malloc(sizeof(MPI_Offset) * (size_t)max);
    w->length = malloc(sizeof(MPI_Offset) * (size_t)max);
    w->at = malloc(sizeof(MPI_Offset) * (size_t)max);
    return w->offset && w->length && w->at ? 0 : -ENOMEM;
}

void weft_window_free(window *w)
{
    free(w->offset);
    free(w->length);
    free(w->at);
}

void weft_load_window(const engine *e, window *w, int aggregator, int cycle)
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

void weft_mark(filled_map *m, MPI_Offset from, MPI_Offset len)
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

void weft_clear_marks(filled_map *m)
{
    if (m->lo < m->hi)
        memset(m->bits + (m->lo >> 6), 0,
               sizeof(uint64_t) * (size_t)(((m->hi + 63) >> 6) - (m->lo >> 6)));
    m->lo = INT64_MAX;
    m->hi = 0;
}

static int is_set(const uint64_t *bits, MPI_Offset i) { return (bits[i >> 6] >> (i & 63)) & 1; }

/* Next run of set bits in [from, limit): returns 1 with [*start, *end), or 0. */
int weft_next_run(const uint64_t *bits, MPI_Offset from, MPI_Offset limit, MPI_Offset *start,
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
