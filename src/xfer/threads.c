/* The thread pool backend: one pool for the whole library, a FIFO of ops, a few workers that
 * run weft_xfer_pwritev_all/preadv_all. Workers make no MPI calls and block all signals. */
#include "xfer/internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#define MAX_WORKERS 64

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* workers: the queue has an op */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* waiters: some op completed */
static weft_xfer_op *head, *tail;
static pthread_t workers[MAX_WORKERS];
static int wanted = 2, running, stopping;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!head && !stopping)
            pthread_cond_wait(&work_cv, &mu);
        if (stopping) /* at exit: ops still queued have no one left to wait for them */
            break;
        weft_xfer_op *op = head;
        head = op->priv.next;
        if (!head)
            tail = NULL;
        pthread_mutex_unlock(&mu);
        weft_xfer_run_(op); /* writes done/rc/syscalls: the waiter reads them only after state */
        pthread_mutex_lock(&mu);
        op->priv.state = WEFT_XFER_COMPLETE;
        pthread_cond_broadcast(&done_cv);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* At exit: let every worker finish the op it is running (if any), then join it. */
static void shutdown_pool(void)
{
    pthread_mutex_lock(&mu);
    int n = running;
    stopping = 1;
    pthread_cond_broadcast(&work_cv);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++)
        pthread_join(workers[i], NULL);
    pthread_mutex_lock(&mu);
    running = 0;
    head = tail = NULL;
    pthread_mutex_unlock(&mu);
}

/* A forked child has none of the parent's threads: start afresh (ops queued in the parent are
 * not the child's). */
static void after_fork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&work_cv, NULL);
    pthread_cond_init(&done_cv, NULL);
    head = tail = NULL;
    running = 0;
    stopping = 0;
}

static void init_once(void)
{
    const char *s = getenv("WEFT_XFER_THREADS");
    if (s && *s) {
        long n = strtol(s, NULL, 10);
        wanted = n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : (int)n;
    }
    atexit(shutdown_pool);
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* Under mu: start the workers not yet running. 0 when at least one runs. */
static int start_workers(void)
{
    if (running >= wanted || stopping)
        return running > 0 ? 0 : -ESHUTDOWN;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the workers inherit an all-blocked mask */
    int err = 0;
    while (running < wanted) {
        err = pthread_create(&workers[running], NULL, worker, NULL);
        if (err)
            break;
        running++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return running > 0 ? 0 : -err;
}

static int threads_submit(weft_xfer_op *op)
{
    pthread_mutex_lock(&mu);
    if (start_workers() == 0) {
        op->priv.next = NULL;
        if (tail)
            tail->priv.next = op;
        else
            head = op;
        tail = op;
        pthread_cond_signal(&work_cv);
        pthread_mutex_unlock(&mu);
        return 0;
    }
    pthread_mutex_unlock(&mu);
    /* No worker (the pool was shut down at exit, or no thread could be created): the op
     * runs here and now, so a late close in another exit handler still writes its data. */
    weft_xfer_run_(op);
    pthread_mutex_lock(&mu);
    op->priv.state = WEFT_XFER_COMPLETE;
    pthread_mutex_unlock(&mu);
    return 0;
}

static int threads_wait(weft_xfer_op *op)
{
    pthread_mutex_lock(&mu);
    while (op->priv.state != WEFT_XFER_COMPLETE)
        pthread_cond_wait(&done_cv, &mu);
    pthread_mutex_unlock(&mu);
    return op->rc;
}

static int threads_test(weft_xfer_op *op, int *complete)
{
    pthread_mutex_lock(&mu);
    *complete = op->priv.state == WEFT_XFER_COMPLETE;
    pthread_mutex_unlock(&mu);
    return *complete ? op->rc : 0;
}

static weft_xfer_backend threads_backend = {WEFT_XFER_THREADS, threads_submit, threads_wait,
                                            threads_test};

int weft_xfer_threads_get_(weft_xfer_backend **b)
{
    pthread_once(&once, init_once);
    *b = &threads_backend;
    return 0;
}
