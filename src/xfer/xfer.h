/*
 * Transfer backends (DESIGN.md §2 layer 4): move bytes between memory and a descriptor.
 * Backends never see MPI datatypes, only (memory address, length) vectors at a file offset.
 * The synchronous loops below are what independent I/O uses; the asynchronous submit/wait
 * interface further down (sync, thread pool, io_uring) is what the collective engine uses.
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

/* ---------------------------------------------------------------------------------------
 * Asynchronous transfers: one submit/wait interface over three backends (hint weft_backend).
 *
 *   sync     the op runs to completion inside weft_xfer_submit (weft_xfer_pwritev_all/...).
 *   threads  one library-wide pool (WEFT_XFER_THREADS workers, default 2) runs the same
 *            functions; ops complete in any order. Workers make no MPI calls.
 *   uring    one library-wide io_uring (liburing), guarded by a mutex; completions are
 *            reaped by weft_xfer_wait/test/submit. Falls back to threads (one notice on
 *            stderr) when liburing is not built in or the kernel refuses the ring.
 *
 * Every backend gives exactly the semantics of weft_xfer_pwritev_all/preadv_all: the whole
 * transfer or an error, short transfers and EINTR/EAGAIN retried, at most
 * WEFT_XFER_MAX_PER_CALL bytes and IOV_MAX entries per system call / request, reads stop
 * short only at end of file.
 *
 * Usage:   weft_xfer_op op = {.fd = fd, .write = 1, .offset = off, .iov = iov, .iovcnt = n};
 *          rc = weft_xfer_submit(b, &op);      (if rc < 0 the op was not started)
 *          ... communicate ...
 *          rc = weft_xfer_wait(b, &op);        (op.done, op.rc valid)
 * The op must start zeroed (a designated initializer as above does it); after completion it
 * may be resubmitted with new fields. Between submit and the wait (or a test that reported completion) the op, its iov array
 * and the buffers belong to the backend: do not touch, move or free them. Every submitted
 * op must be waited (or tested to completion) on the backend it was submitted to, and may
 * then be submitted again. Any thread may submit/wait; one op is waited by one thread.
 * ------------------------------------------------------------------------------------- */

typedef enum { WEFT_XFER_SYNC = 0, WEFT_XFER_THREADS = 1, WEFT_XFER_URING = 2 } weft_xfer_kind;

typedef struct weft_xfer_op {
    /* set by the caller before submit */
    int fd;
    int write;                 /* 1 write, 0 read */
    MPI_Offset offset;
    const struct iovec *iov;   /* kept alive, unchanged, by the caller until completion */
    int iovcnt;
    /* results, valid after completion */
    MPI_Count done;            /* bytes moved; reads: less than the total only at EOF */
    int rc;                    /* 0 or -errno (first error in file order) */
    unsigned long long syscalls; /* system calls (sync/threads) or io_uring requests (uring) */
    /* backend-private: set up by submit, never touched by the caller */
    struct {
        struct weft_xfer_op *next;
        int phase;             /* caller side: 0 idle, 1 submitted, 2 finished */
        int state;             /* backend side, under the backend's lock */
        void *mem;             /* uring: per-op slices and iovec windows (one allocation) */
        int pending;           /* uring: slices not yet finished */
    } priv;
} weft_xfer_op;

typedef struct weft_xfer_backend weft_xfer_backend;

/* The backend of that kind: a process-wide singleton created on first use (thread safe).
 * *actual (may be NULL) tells which kind you got (uring may fall back to threads).
 * Returns 0, or -errno when even the fallback cannot start (e.g. pthread_create failed). */
int weft_xfer_backend_get(weft_xfer_kind kind, weft_xfer_backend **b, weft_xfer_kind *actual);

/* Start an op. 0, or -errno (-EINVAL bad op, -ENOMEM): then the op was not started and
 * must not be waited. A zero-byte op completes at once. */
int weft_xfer_submit(weft_xfer_backend *b, weft_xfer_op *op);

/* Block (no busy spin) until the op is complete; returns op->rc. */
int weft_xfer_wait(weft_xfer_backend *b, weft_xfer_op *op);

/* Never blocks on I/O. *complete = 1 when the op is done (then returns op->rc; the op
 * counts as waited), else *complete = 0 and returns 0. */
int weft_xfer_test(weft_xfer_backend *b, weft_xfer_op *op, int *complete);

/* weft_backend=auto: the thread pool when a core is left over for its workers, else sync.
 * Buffered file access (tmpfs, the page cache) is CPU work, so asynchronous transfers overlap
 * the shuffle only on an idle core: a worker sharing its rank's core (a rank bound to one
 * core, Open MPI's default at few ranks), or a node with a rank on every core, only adds
 * switches (2 ranks on 2 cores: reads up to 25 % slower than sync).  Pure: tests call it with
 * any numbers; weft_xfer_auto_kind reads the process's own. */
weft_xfer_kind weft_xfer_auto_pick(int ranks_on_machine, int online_cpus, int affinity_cpus);
weft_xfer_kind weft_xfer_auto_kind(int ranks_on_machine);

/* "sync", "threads", "uring" */
const char *weft_xfer_kind_name(weft_xfer_kind k);
/* Parse a weft_backend hint value ("sync", "threads", "uring"). 0 or -EINVAL. */
int weft_xfer_kind_parse(const char *s, weft_xfer_kind *k);

/* Tests only: lower the per-call byte limit and entry limit (0 restores the defaults,
 * WEFT_XFER_MAX_PER_CALL and IOV_MAX; max_iov is clamped to IOV_MAX). Call only while no
 * transfer of any backend is in flight. */
void weft_xfer_set_test_limits(MPI_Count max_per_call, int max_iov);

/* Tests only (fault shim): from now on every write of the sync and threads backends fails
 * with -err (0 turns it off).  The API layer sets it from WEFT_TEST_INJECT=ERRNO@RANK. */
void weft_xfer_inject_write_error(int err);

#endif
