/*
 * The aggregator's file access for one cycle (DESIGN.md §3.1, §2 layer 4): the filled runs of
 * a write, the spans ranks need of a read, submitted to the transfer backend and collected.
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"

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
        weft_positions_in(filetype, e->views[r].disp, e->all[r][F_POSITION], e->all[r][F_BYTES], lo,
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
void weft_file_start(engine *e, half *h)
{
    double t0 = weft_now();
    h->nops = 0;
    if (e->my_aggregator < 0 || e->rc < 0)
        return;
    /* Build the whole list first: add_op may reallocate the arrays the backend reads. */
    for (int i = 0; i < h->win.n && e->rc == 0; i++) {
        MPI_Offset lo, hi;
        weft_range_of(e, &h->win, i, &lo, &hi);
        MPI_Offset base = h->win.at[i];
        if (e->a->write) {
            MPI_Offset start, end;
            MPI_Offset from = base > h->filled.lo ? base : h->filled.lo;
            MPI_Offset limit = base + (hi - lo) < h->filled.hi ? base + (hi - lo) : h->filled.hi;
            while (e->rc == 0 && weft_next_run(h->filled.bits, from, limit, &start, &end)) {
                weft_note_failure(e, add_op(e, h, 1, lo + (start - base), h->buffer + start, end - start));
                from = end;
            }
        } else if (hi > lo) {
            weft_note_failure(e, add_needed_reads(e, h, i, lo, hi));
        }
    }
    h->file_began = weft_now();
    for (int k = 0; k < h->nops; k++) {
        h->ops[k].iov = &h->iov[k];
        int rc = weft_xfer_submit(e->backend, &h->ops[k]);
        if (rc < 0) { /* not submitted: run it here so the op is complete either way */
            weft_note_failure(e, rc);
            h->nops = k;
            break;
        }
    }
    e->file_time += weft_now() - t0;
}

/* Every op of the half complete?  Never blocks; a completed op counts as waited, and
 * weft_file_finish then collects it. */
int weft_file_ready(engine *e, half *h)
{
    int done = 1;
    for (int k = 0; k < h->nops && done; k++)
        weft_xfer_test(e->backend, &h->ops[k], &done);
    return done;
}

void weft_file_finish(engine *e, half *h)
{
    double t0 = weft_now();
    for (int k = 0; k < h->nops; k++) {
        weft_xfer_op *op = &h->ops[k];
        weft_note_failure(e, weft_xfer_wait(e->backend, op));
        __atomic_add_fetch(&e->f->stats.syscalls, op->syscalls, __ATOMIC_RELAXED);
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
