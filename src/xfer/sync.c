/* Synchronous transfer: pwritev/preadv loops that never stop short except at end of file. */
#include "xfer/internal.h"

#include <errno.h>
#include <unistd.h>

MPI_Count weft_xfer_max_bytes_ = WEFT_XFER_MAX_PER_CALL;
static int injected_write_error; /* tests only: errno every write fails with (0: none) */

void weft_xfer_inject_write_error(int err)
{
    injected_write_error = err;
}
int weft_xfer_max_iov_ = IOV_MAX;

void weft_xfer_set_test_limits(MPI_Count max_per_call, int max_iov)
{
    weft_xfer_max_bytes_ = max_per_call > 0 && max_per_call < WEFT_XFER_MAX_PER_CALL
                               ? max_per_call
                               : WEFT_XFER_MAX_PER_CALL;
    weft_xfer_max_iov_ = max_iov > 0 && max_iov < IOV_MAX ? max_iov : IOV_MAX;
}

/* Build, in `window`, the slice of (iov, iovcnt) that starts `skip` bytes in and holds at most
 * WEFT_XFER_MAX_PER_CALL bytes and IOV_MAX entries (or the lower test limits).  Returns the
 * entry count; *bytes gets the slice's size. */
static int slice(const struct iovec *iov, int iovcnt, MPI_Count skip, struct iovec *window,
                 MPI_Count *bytes)
{
    int i = 0;
    while (i < iovcnt && skip >= (MPI_Count)iov[i].iov_len) {
        skip -= (MPI_Count)iov[i].iov_len;
        i++;
    }
    int n = 0;
    MPI_Count total = 0;
    const MPI_Count max_bytes = weft_xfer_max_bytes_;
    const int max_iov = weft_xfer_max_iov_;
    for (; i < iovcnt && n < max_iov && total < max_bytes; i++) {
        MPI_Count len = (MPI_Count)iov[i].iov_len - skip;
        if (len > max_bytes - total)
            len = max_bytes - total;
        if (len == 0) {
            skip = 0;
            continue;
        }
        window[n].iov_base = (char *)iov[i].iov_base + skip;
        window[n].iov_len = (size_t)len;
        total += len;
        n++;
        skip = 0;
    }
    *bytes = total;
    return n;
}

static int transfer(int write, int fd, const struct iovec *iov, int iovcnt, MPI_Offset offset,
                    MPI_Count *done, unsigned long long *syscalls)
{
    static __thread struct iovec window[IOV_MAX];
    MPI_Count moved = 0;
    int rc = 0;
    if (write && injected_write_error) {
        *done = 0;
        return -injected_write_error;
    }
    for (;;) {
        MPI_Count want;
        int n = slice(iov, iovcnt, moved, window, &want);
        if (n == 0)
            break;
        ssize_t got = write ? pwritev(fd, window, n, (off_t)(offset + moved))
                            : preadv(fd, window, n, (off_t)(offset + moved));
        if (syscalls)
            (*syscalls)++;
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            rc = -errno;
            break;
        }
        if (got == 0) {
            if (write) /* a write that makes no progress and reports no error: give up */
                rc = -EIO;
            break; /* read: end of file */
        }
        moved += got;
    }
    *done = moved;
    return rc;
}

int weft_xfer_pwritev_all(int fd, const struct iovec *iov, int iovcnt, MPI_Offset offset,
                          MPI_Count *done, unsigned long long *syscalls)
{
    return transfer(1, fd, iov, iovcnt, offset, done, syscalls);
}

int weft_xfer_preadv_all(int fd, const struct iovec *iov, int iovcnt, MPI_Offset offset,
                         MPI_Count *done, unsigned long long *syscalls)
{
    return transfer(0, fd, iov, iovcnt, offset, done, syscalls);
}

void weft_xfer_run_(weft_xfer_op *op)
{
    unsigned long long calls = 0;
    MPI_Count done = 0;
    int rc = transfer(op->write ? 1 : 0, op->fd, op->iov, op->iovcnt, op->offset, &done, &calls);
    op->done = done;
    op->rc = rc;
    op->syscalls = calls;
}
