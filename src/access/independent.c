/*
 * Independent list I/O.  The file view and the memory layout are walked together: each file
 * piece is filled from one or more memory pieces, consecutive file pieces that touch are
 * gathered into one iovec array, and each such run is one pwritev/preadv.  Memory for the
 * vector is fixed (no allocation per call).
 */
#include "access/access.h"
#include "common/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "common/hints.h"
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
    __atomic_add_fetch(&f->stats.syscalls, syscalls, __ATOMIC_RELAXED); /* nonblocking calls
                                                                       run here on a thread */
    *done += moved;
    if (rc == 0 && !write && moved < r->bytes)
        *eof = 1;
    if (rc != 0 && offset_out)
        *offset_out = r->start + moved;
    r->entries = 0;
    r->bytes = 0;
    return rc;
}

/* Move `bytes` bytes of view data starting at view position `position` between the file and
 * the memory walked by `mem_cursor`. */
static int list_io(weft_file *f, int write, MPI_Count position, weft_cursor *mem_cursor,
                   MPI_Count bytes, MPI_Count *done, MPI_Offset *offset_out)
{
    weft_cursor file_cursor;
    weft_cursor_init(&file_cursor, f->view.filetype_t, -1, f->view.disp);
    int rc = weft_cursor_seek(&file_cursor, position);
    if (rc)
        return rc;

    static __thread run r;
    r.entries = 0;
    r.bytes = 0;
    MPI_Count remaining = bytes;
    MPI_Offset file_offset = 0, mem_offset = 0;
    MPI_Count file_left = 0, mem_left = 0;
    int eof = 0;
    while (remaining > 0 && !eof) {
        if (file_left == 0 && !weft_cursor_next(&file_cursor, &file_offset, &file_left, remaining))
            break;
        if (mem_left == 0 && !weft_cursor_next(mem_cursor, &mem_offset, &mem_left, remaining))
            break;
        MPI_Count piece = file_left < mem_left ? file_left : mem_left;
        int touches = r.entries > 0 && r.start + r.bytes == file_offset;
        if (!touches || r.entries == RUN_MAX_ENTRIES) {
            rc = flush_run(f, write, &r, done, &eof, offset_out);
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
        rc = flush_run(f, write, &r, done, &eof, offset_out);
    return rc;
}

/* Memory layouts of many short runs (guard cells stripped by a subarray, strided elements)
 * go through a bounce buffer: the kernel copies iovec entries one by one, while the datatype
 * engine packs short runs several times faster, and the file then sees one vector per file
 * run.  Decided from the first pieces of the layout. */
#define BOUNCE_BYTES ((MPI_Count)4 << 20)
#define SHORT_RUN 2048

static int fragmented(const weft_access *a)
{
    if (weft_dtype_is_contiguous(a->memtype))
        return 0;
    weft_cursor c;
    weft_cursor_init(&c, a->memtype, a->count, (MPI_Offset)(intptr_t)a->buf);
    MPI_Offset offsets[16];
    MPI_Count lengths[16], covered = 0;
    size_t n = weft_cursor_flatten(&c, a->bytes, offsets, lengths, 16, &covered);
    return n > 1 && covered / (MPI_Count)n < SHORT_RUN;
}

static int bounced_io(weft_file *f, const weft_access *a, MPI_Count *done, MPI_Offset *offset_out)
{
    static const weft_dtype *bytes_type;
    if (!bytes_type) {
        int rc = weft_dtype_get(MPI_BYTE, &bytes_type);
        if (rc)
            return rc;
    }
    MPI_Count chunk_max = a->bytes < BOUNCE_BYTES ? a->bytes : BOUNCE_BYTES;
    unsigned char *bounce = malloc((size_t)chunk_max);
    if (!bounce)
        return -ENOMEM;
    int rc = 0;
    for (MPI_Count at = 0; at < a->bytes && rc == 0;) {
        MPI_Count chunk = a->bytes - at < chunk_max ? a->bytes - at : chunk_max;
        if (a->write)
            weft_pack(a->buf, a->count, a->memtype, at, chunk, bounce);
        weft_cursor mem;
        weft_cursor_init(&mem, bytes_type, chunk, (MPI_Offset)(intptr_t)bounce);
        MPI_Count moved = 0;
        rc = list_io(f, a->write, a->view_position + at, &mem, chunk, &moved, offset_out);
        if (!a->write && moved > 0)
            weft_unpack(bounce, moved, a->buf, a->count, a->memtype, at);
        *done += moved;
        at += moved;
        if (moved < chunk)
            break; /* end of file (reads) or an error */
    }
    free(bounce);
    return rc;
}

/* ---- Data sieving for reads (seed 003 §5.2.2) ------------------------------------------
 * A noncontiguous file view with small pieces and small holes costs one system call per piece
 * with list I/O.  Instead read the covering extent in chunks of ind_rd_buffer_size and copy the
 * pieces out.  Only reads: a sieving write must read-modify-write the holes, which would lose a
 * concurrent write of another process to those holes unless every writer took the same lock.
 * Used when the first pieces are short (< SIEVE_PIECE) and at least 1/SIEVE_DENSITY of their
 * span is data. */
#define SIEVE_PIECE 16384
#define SIEVE_DENSITY 8

static int worth_sieving(weft_file *f, const weft_access *a)
{
    if (a->write || f->hints.value[WEFT_HINT_ROMIO_DS_READ] == WEFT_CB_DISABLE ||
        weft_dtype_is_contiguous(f->view.filetype_t))
        return 0;
    weft_cursor c;
    weft_cursor_init(&c, f->view.filetype_t, -1, f->view.disp);
    if (weft_cursor_seek(&c, a->view_position))
        return 0;
    MPI_Offset offsets[32];
    MPI_Count lengths[32], covered = 0;
    size_t n = weft_cursor_flatten(&c, a->bytes, offsets, lengths, 32, &covered);
    if (n < 2)
        return 0;
    MPI_Offset span = offsets[n - 1] + lengths[n - 1] - offsets[0];
    if (f->hints.value[WEFT_HINT_ROMIO_DS_READ] == WEFT_CB_ENABLE)
        return 1;
    return covered / (MPI_Count)n < SIEVE_PIECE && covered * SIEVE_DENSITY >= span;
}

static int sieved_read(weft_file *f, const weft_access *a, MPI_Count *done, MPI_Offset *offset_out)
{
    MPI_Count chunk_max = f->hints.value[WEFT_HINT_IND_RD_BUFFER_SIZE];
    unsigned char *chunk = malloc((size_t)chunk_max);
    if (!chunk)
        return -ENOMEM;
    weft_cursor file_cursor, mem_cursor;
    weft_cursor_init(&file_cursor, f->view.filetype_t, -1, f->view.disp);
    int rc = weft_cursor_seek(&file_cursor, a->view_position);
    weft_cursor_init(&mem_cursor, a->memtype, a->count, (MPI_Offset)(intptr_t)a->buf);
    MPI_Offset chunk_start = 0;
    MPI_Count chunk_got = -1; /* nothing read yet */
    MPI_Count remaining = a->bytes;
    MPI_Offset offset;
    MPI_Count length;
    int eof = 0;
    while (rc == 0 && !eof && remaining > 0 &&
           weft_cursor_next(&file_cursor, &offset, &length, remaining)) {
        while (length > 0) {
            if (chunk_got < 0 || offset < chunk_start || offset >= chunk_start + chunk_max) {
                /* The piece starts outside the chunk: read the next chunk from it. */
                struct iovec iov = {.iov_base = chunk, .iov_len = (size_t)chunk_max};
                unsigned long long calls = 0;
                chunk_start = offset;
                rc = weft_xfer_preadv_all(f->fd, &iov, 1, chunk_start, &chunk_got, &calls);
                __atomic_add_fetch(&f->stats.syscalls, calls, __ATOMIC_RELAXED);
                if (rc) {
                    if (offset_out)
                        *offset_out = chunk_start;
                    break;
                }
            }
            MPI_Count in_chunk = chunk_start + chunk_max - offset;
            MPI_Count exists = chunk_start + chunk_got - offset;
            MPI_Count take = length < in_chunk ? length : in_chunk;
            if (take > exists) { /* end of file inside this piece */
                take = exists > 0 ? exists : 0;
                eof = 1;
            }
            for (MPI_Count moved = 0; moved < take;) {
                MPI_Offset address;
                MPI_Count n;
                if (!weft_cursor_next(&mem_cursor, &address, &n, take - moved))
                    break;
                memcpy((void *)(intptr_t)address, chunk + (offset + moved - chunk_start), (size_t)n);
                moved += n;
            }
            *done += take;
            remaining -= take;
            offset += take;
            length -= take;
            if (eof)
                break;
        }
    }
    free(chunk);
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
    if (worth_sieving(f, a))
        return sieved_read(f, a, done, offset_out);
    if (fragmented(a))
        return bounced_io(f, a, done, offset_out);
    weft_cursor mem_cursor;
    weft_cursor_init(&mem_cursor, a->memtype, a->count, (MPI_Offset)(intptr_t)a->buf);
    return list_io(f, a->write, a->view_position, &mem_cursor, a->bytes, done, offset_out);
}
