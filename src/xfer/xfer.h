/*
 * Transfer backends (DESIGN.md §2 layer 4): move bytes between memory and a descriptor.
 * Backends never see MPI datatypes, only (memory address, length) vectors at a file offset.
 * The synchronous backend below is what independent I/O uses; asynchronous backends (thread
 * pool, io_uring) come with the collective engine behind the same vectors.
 */
#ifndef WEFT_XFER_H
#define WEFT_XFER_H

#include <mpi.h>
#include <sys/uio.h>

/* Linux moves at most this many bytes per read/write family call (Open MPI issues 2399,
 * 7045 lost data by assuming otherwise): larger requests are split and looped. */
#define WEFT_XFER_MAX_PER_CALL ((MPI_Count)0x7ffff000)

/* Write every byte of iov[0..iovcnt) at `offset`, retrying short writes, EINTR and EAGAIN.
 * Returns 0 or -errno; *done is the number of bytes written either way. *syscalls (may be
 * NULL) is incremented per system call. */
int weft_xfer_pwritev_all(int fd, const struct iovec *iov, int iovcnt, MPI_Offset offset,
                          MPI_Count *done, unsigned long long *syscalls);

/* Read into iov[0..iovcnt) from `offset`; stops early only at end of file (then *done is
 * less than the total) or on error. */
int weft_xfer_preadv_all(int fd, const struct iovec *iov, int iovcnt, MPI_Offset offset,
                         MPI_Count *done, unsigned long long *syscalls);

#endif
