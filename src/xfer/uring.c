/* The io_uring backend: one ring for the whole library, guarded by one mutex. Submissions
 * come from any thread; completions are reaped by whoever submits, tests or waits (a waiter
 * holds the mutex while it sleeps in the kernel, so the ring is never touched concurrently).
 *
 * An op is cut into slices of at most weft_xfer_max_bytes_ bytes and weft_xfer_max_iov_
 * entries (the same limits as the synchronous loop); every slice is one READV/WRITEV request,
 * and all slices of an op are in flight together. A short completion resubmits the slice's
 * remainder; -EINTR/-EAGAIN resubmit it unchanged; a read completing with 0 bytes is end of
 * file. At most RING_ENTRIES requests are in the ring at once (so the completion queue, twice
 * as large, never overflows); further slices wait in a FIFO. */
#include "xfer/internal.h"

#include <errno.h>
#include <string.h>

#if WEFT_HAVE_URING

#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define RING_ENTRIES 64

struct slice {
    struct slice *next; /* in the FIFO of slices waiting for room in the ring */
    weft_xfer_op *op;
    struct iovec *win;  /* what is left of the slice (private copy, advanced in place) */
    int n;
    int rc;
    MPI_Offset offset;  /* file offset of the slice's first byte */
    MPI_Count want, moved;
};

struct opmem {
    int nslices;
    struct slice s[]; /* then the iovec windows */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_err;
static char init_why[128];
static struct io_uring ring;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned inflight; /* requests in the ring or the kernel */
static struct slice *wq_head, *wq_tail;

/* Cut op's vector into slices (s and store NULL: only count). Returns the slice count;
 * *nent gets the iovec count. */
static int plan(weft_xfer_op *op, struct slice *s, struct iovec *store, int *nent)
{
    const MPI_Count max_bytes = weft_xfer_max_bytes_;
    const int max_iov = weft_xfer_max_iov_;
    int i = 0, nsl = 0, k = 0;
    size_t skip = 0;
    MPI_Offset pos = op->offset;
    for (;;) {
        int n = 0;
        MPI_Count bytes = 0;
        while (i < op->iovcnt && n < max_iov && bytes < max_bytes) {
            size_t len = op->iov[i].iov_len - skip;
            if (len == 0) {
                i++;
                skip = 0;
                continue;
            }
            if ((MPI_Count)len > max_bytes - bytes)
                len = (size_t)(max_bytes - bytes);
            if (store) {
                store[k].iov_base = (char *)op->iov[i].iov_base + skip;
                store[k].iov_len = len;
            }
            k++;
            n++;
            bytes += (MPI_Count)len;
            skip += len;
            if (skip == op->iov[i].iov_len) {
                i++;
                skip = 0;
            }
        }
        if (n == 0)
            break;
        if (s)
            s[nsl] = (struct slice){.op = op, .win = &store[k - n], .n = n, .offset = pos,
                                    .want = bytes};
        nsl++;
        pos += bytes;
    }
    *nent = k;
    return nsl;
}

/* Under mu: put the slice's remainder in the ring, or in the FIFO when the ring is full. */
static void push(struct slice *sl)
{
    struct io_uring_sqe *sqe = inflight < RING_ENTRIES ? io_uring_get_sqe(&ring) : NULL;
    if (!sqe) {
        sl->next = NULL;
        if (wq_tail)
            wq_tail->next = sl;
        else
            wq_head = sl;
        wq_tail = sl;
        return;
    }
    __u64 at = (__u64)(sl->offset + sl->moved);
    if (sl->op->write)
        io_uring_prep_writev(sqe, sl->op->fd, sl->win, (unsigned)sl->n, at);
    else
        io_uring_prep_readv(sqe, sl->op->fd, sl->win, (unsigned)sl->n, at);
    io_uring_sqe_set_data(sqe, sl);
    inflight++;
    sl->op->syscalls++;
}

/* Under mu: hand the prepared requests to the kernel. Errors other than EINTR leave them in
 * the submission queue; the next io_uring_submit_and_wait retries. */
static void flush(void)
{
    while (io_uring_submit(&ring) == -EINTR)
        ;
}

static void finish(struct slice *sl)
{
    weft_xfer_op *op = sl->op;
    if (--op->priv.pending > 0)
        return;
    struct opmem *m = op->priv.mem;
    MPI_Count done = 0;
    int rc = 0;
    for (int k = 0; k < m->nslices; k++) { /* the prefix that moved, as the sync loop reports */
        done += m->s[k].moved;
        if (m->s[k].rc) {
            rc = m->s[k].rc;
            break;
        }
        if (m->s[k].moved < m->s[k].want)
            break; /* end of file */
    }
    free(m);
    op->priv.mem = NULL;
    op->done = done;
    op->rc = rc;
    op->priv.state = WEFT_XFER_COMPLETE;
}

static void complete(struct io_uring_cqe *cqe)
{
    struct slice *sl = io_uring_cqe_get_data(cqe);
    int res = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
    inflight--;
    if (res == -EINTR || res == -EAGAIN) {
        push(sl);
    } else if (res < 0) {
        sl->rc = res;
        finish(sl);
    } else if (res == 0) {
        if (sl->op->write) /* no progress and no error: give up, as the sync loop does */
            sl->rc = -EIO;
        finish(sl);
    } else {
        sl->moved += res;
        if (sl->moved >= sl->want) {
            finish(sl);
        } else { /* short: resubmit the remainder */
            size_t left = (size_t)res;
            while (left >= sl->win[0].iov_len) {
                left -= sl->win[0].iov_len;
                sl->win++;
                sl->n--;
            }
            sl->win[0].iov_base = (char *)sl->win[0].iov_base + left;
            sl->win[0].iov_len -= left;
            push(sl);
        }
    }
    while (wq_head && inflight < RING_ENTRIES) {
        struct slice *next = wq_head;
        wq_head = next->next;
        if (!wq_head)
            wq_tail = NULL;
        push(next);
    }
}

/* Under mu: process every completion already posted, then submit what that queued. */
static void reap_ready(void)
{
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&ring, &cqe) == 0 && cqe)
        complete(cqe);
    flush();
}

static int uring_submit(weft_xfer_op *op)
{
    int nent, nsl = plan(op, NULL, NULL, &nent);
    struct opmem *m = malloc(sizeof *m + (size_t)nsl * sizeof(struct slice) +
                             (size_t)nent * sizeof(struct iovec));
    if (!m)
        return -ENOMEM;
    m->nslices = nsl;
    plan(op, m->s, (struct iovec *)(m->s + nsl), &nent);
    op->priv.mem = m;
    op->priv.pending = nsl;
    pthread_mutex_lock(&mu);
    for (int k = 0; k < nsl; k++)
        push(&m->s[k]);
    reap_ready();
    pthread_mutex_unlock(&mu);
    return 0;
}

static int uring_wait(weft_xfer_op *op)
{
    pthread_mutex_lock(&mu);
    reap_ready();
    while (op->priv.state != WEFT_XFER_COMPLETE) {
        /* the op is not complete, so at least one request is in the ring or the kernel */
        int ret = io_uring_submit_and_wait(&ring, 1);
        if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
            /* the ring itself is broken (a bug): requests may still be in the kernel, so
             * neither returning nor retrying is safe */
            fprintf(stderr, "weft: io_uring_enter failed (%s) with transfers in flight\n",
                    strerror(-ret));
            abort();
        }
        reap_ready();
    }
    pthread_mutex_unlock(&mu);
    return op->rc;
}

static int uring_test(weft_xfer_op *op, int *complete_)
{
    pthread_mutex_lock(&mu);
    reap_ready();
    *complete_ = op->priv.state == WEFT_XFER_COMPLETE;
    pthread_mutex_unlock(&mu);
    return *complete_ ? op->rc : 0;
}

static weft_xfer_backend uring_backend = {WEFT_XFER_URING, uring_submit, uring_wait, uring_test};

static void init_once(void)
{
    int rc = io_uring_queue_init(RING_ENTRIES, &ring, 0);
    if (rc < 0) {
        init_err = rc;
        snprintf(init_why, sizeof init_why, "%s", strerror(-rc));
    }
}

int weft_xfer_uring_get_(weft_xfer_backend **b, const char **why)
{
    pthread_once(&once, init_once);
    if (init_err) {
        *why = init_why;
        return init_err;
    }
    *b = &uring_backend;
    return 0;
}

#else /* !WEFT_HAVE_URING */

int weft_xfer_uring_get_(weft_xfer_backend **b, const char **why)
{
    (void)b;
    *why = "weft was built without liburing";
    return -ENOSYS;
}

#endif
