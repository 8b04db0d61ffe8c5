/*
 * Independent list I/O.  The file view and the memory layout are walked together: each file
 * piece is filled from one or more memory pieces, consecutive file pieces that touch are
 * gathered into one iovec array, and each such run is one pwritev/preadv.  Memory for the
 * vector is fixed (no allocation per call).
 */
#include "access/access.h"
#include "common/error.h"

#include <stdint.h>
#include <sys/uio.h>

#include "xfer/xfer.h"

#define RUN_MAX_ENTRIES 1024

typedef struct run {
    struct iovec iov[RUN_MAX_ENTRIES];
    int entries;
    MPI_Offset start;     /* file offset of the run */
    MPI_Count bytes;
} run;

/* Issue the run; returns 0 or -errno, adds bytes moved to *done; *eof set on a short read. */
static int flush_run(weft_file *f, int write, run *r, MPI_Count *done, int *eof,
                     MPI_Offset *offset_out)
{
    if (r->entries == 0)
        return 0;
    MPI_Count moved = 0;
    unsigned long long syscalls = 0;
    int rc = write ? weft_xfer_pwritev_all(f->fd, r->iov, r->entries, r->start, &moved, &syscalls)
                   : weft_xfer_preadv_all(f->fd, r->iov, r->entries, r->start, &moved, &syscalls);
    f->stats.syscalls += syscalls;
    *done += moved;
    if (rc == 0 && !write && moved < r->bytes)
        *eof = 1;
    if (rc != 0 && offset_out)
        *offset_out = r->start + moved;
    r->entries = 0;
    r->bytes = 0;
    return rc;
}

int weft_access_independent(weft_file *f, const weft_access *a, MPI_Count *done,
                            MPI_Offset *offset_out)
{
    *done = 0;
    if (a->bytes == 0)
        return 0;
    if (weft_dtype_size(f->view.filetype_t) == 0)
        return WEFT_MPI_ERR(MPI_ERR_TYPE); /* checked by the API layer; never loop forever */

    weft_cursor file_cursor, mem_cursor;
    weft_cursor_init(&file_cursor, f->view.filetype_t, -1, f->view.disp);
    int rc = weft_cursor_seek(&file_cursor, a->view_position);
    if (rc)
        return rc;
    weft_cursor_init(&mem_cursor, a->memtype, a->count, (MPI_Offset)(intptr_t)a->buf);

    static __thread run r;
    r.entries = 0;
    r.bytes = 0;
    MPI_Count remaining = a->bytes;
    MPI_Offset file_offset = 0, mem_offset = 0;
    MPI_Count file_left = 0, mem_left = 0;
    int eof = 0;
    while (remaining > 0 && !eof) {
        if (file_left == 0 && !weft_cursor_next(&file_cursor, &file_offset, &file_left, remaining))
            break;
        if (mem_left == 0 && !weft_cursor_next(&mem_cursor, &mem_offset, &mem_left, remaining))
            break;
        MPI_Count piece = file_left < mem_left ? file_left : mem_left;
        int touches = r.entries > 0 && r.start + r.bytes == file_offset;
        if (!touches || r.entries == RUN_MAX_ENTRIES) {
            rc = flush_run(f, a->write, &r, done, &eof, offset_out);
            if (rc || eof)
                break;
            r.start = file_offset;
        }
        r.iov[r.entries].iov_base = (void *)(intptr_t)mem_offset;
        r.iov[r.entries].iov_len = (size_t)piece;
        r.entries++;
        r.bytes += piece;
        file_offset += piece;
        file_left -= piece;
        mem_offset += piece;
        mem_left -= piece;
        remaining -= piece;
    }
    if (rc == 0 && !eof)
        rc = flush_run(f, a->write, &r, done, &eof, offset_out);
    return rc;
}
