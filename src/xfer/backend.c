/* The submit/wait interface: argument checks, backend choice and the synchronous backend. */
#include "xfer/internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

static int sync_submit(weft_xfer_op *op)
{
    weft_xfer_run_(op);
    return 0;
}

static int sync_wait(weft_xfer_op *op)
{
    return op->rc;
}

static int sync_test(weft_xfer_op *op, int *complete)
{
    *complete = 1;
    return op->rc;
}

static weft_xfer_backend sync_backend = {WEFT_XFER_SYNC, sync_submit, sync_wait, sync_test};

static pthread_once_t notice_once = PTHREAD_ONCE_INIT;
static const char *uring_why = "unknown";

static void print_notice(void)
{
    fprintf(stderr, "weft: io_uring unavailable (%s), using the thread pool\n", uring_why);
    fflush(stderr);
}

int weft_xfer_backend_get(weft_xfer_kind kind, weft_xfer_backend **b, weft_xfer_kind *actual)
{
    *b = NULL;
    if (kind == WEFT_XFER_SYNC) {
        *b = &sync_backend;
    } else if (kind == WEFT_XFER_URING && weft_xfer_uring_get_(b, &uring_why) == 0) {
        /* the ring */
    } else if (kind == WEFT_XFER_URING || kind == WEFT_XFER_THREADS) {
        if (kind == WEFT_XFER_URING)
            pthread_once(&notice_once, print_notice);
        int rc = weft_xfer_threads_get_(b);
        if (rc < 0)
            return rc;
    } else {
        return -EINVAL;
    }
    if (actual)
        *actual = (*b)->kind;
    return 0;
}

int weft_xfer_submit(weft_xfer_backend *b, weft_xfer_op *op)
{
    if (!b || !op || op->iovcnt < 0 || (op->iovcnt > 0 && !op->iov) || op->offset < 0)
        return -EINVAL;
    if (op->priv.phase == WEFT_XFER_INFLIGHT)
        return -EBUSY;
    MPI_Count total = 0;
    for (int i = 0; i < op->iovcnt; i++)
        total += (MPI_Count)op->iov[i].iov_len;
    op->done = 0;
    op->rc = 0;
    op->syscalls = 0;
    op->priv.next = NULL;
    op->priv.mem = NULL;
    op->priv.pending = 0;
    op->priv.state = WEFT_XFER_INFLIGHT;
    if (total == 0) {
        op->priv.state = op->priv.phase = WEFT_XFER_COMPLETE;
        return 0;
    }
    op->priv.phase = WEFT_XFER_INFLIGHT;
    int rc = b->submit(op); /* from here on, op->priv.state belongs to the backend */
    if (rc < 0)
        op->priv.phase = WEFT_XFER_IDLE;
    else if (b->kind == WEFT_XFER_SYNC)
        op->priv.phase = WEFT_XFER_COMPLETE;
    return rc;
}

int weft_xfer_wait(weft_xfer_backend *b, weft_xfer_op *op)
{
    if (op->priv.phase == WEFT_XFER_COMPLETE) /* zero bytes, sync, or already tested */
        return op->rc;
    if (op->priv.phase != WEFT_XFER_INFLIGHT)
        return -EINVAL;
    int rc = b->wait(op);
    op->priv.phase = WEFT_XFER_COMPLETE;
    return rc;
}

int weft_xfer_test(weft_xfer_backend *b, weft_xfer_op *op, int *complete)
{
    *complete = 0;
    if (op->priv.phase == WEFT_XFER_COMPLETE) {
        *complete = 1;
        return op->rc;
    }
    if (op->priv.phase != WEFT_XFER_INFLIGHT)
        return -EINVAL;
    int rc = b->test(op, complete);
    if (*complete)
        op->priv.phase = WEFT_XFER_COMPLETE;
    return rc;
}

weft_xfer_kind weft_xfer_auto_pick(int ranks_on_machine, int online_cpus, int affinity_cpus)
{
    if (affinity_cpus <= 1 || ranks_on_machine >= online_cpus)
        return WEFT_XFER_SYNC;
    return WEFT_XFER_THREADS;
}

weft_xfer_kind weft_xfer_auto_kind(int ranks_on_machine)
{
    cpu_set_t mask;
    int affinity = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (affinity <= 0) /* unknown: as if unbound */
        affinity = online > 0 ? (int)online : 1;
    return weft_xfer_auto_pick(ranks_on_machine, online > 0 ? (int)online : 1, affinity);
}

const char *weft_xfer_kind_name(weft_xfer_kind k)
{
    switch (k) {
    case WEFT_XFER_SYNC: return "sync";
    case WEFT_XFER_THREADS: return "threads";
    case WEFT_XFER_URING: return "uring";
    }
    return "unknown";
}

int weft_xfer_kind_parse(const char *s, weft_xfer_kind *k)
{
    static const weft_xfer_kind kinds[] = {WEFT_XFER_SYNC, WEFT_XFER_THREADS, WEFT_XFER_URING};
    for (unsigned i = 0; s && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(s, weft_xfer_kind_name(kinds[i])) == 0) {
            *k = kinds[i];
            return 0;
        }
    return -EINVAL;
}
