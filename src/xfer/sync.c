/* Synchronous transfer: pwritev/preadv loops that never stop short except at end of file. */
#include "xfer/xfer.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* Build, in `window`, the slice of (iov, iovcnt) that starts `skip` bytes in and holds at most
 * WEFT_XFER_MAX_PER_CALL bytes and IOV_MAX entries.  Returns the entry count; *bytes gets the
 * slice's size. */
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
    for (; i < iovcnt && n < IOV_MAX && total < WEFT_XFER_MAX_PER_CALL; i++) {
        MPI_Count len = (MPI_Count)iov[i].iov_len - skip;
        if (len > WEFT_XFER_MAX_PER_CALL - total)
            len = WEFT_XFER_MAX_PER_CALL - total;
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
