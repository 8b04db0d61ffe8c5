/*
 * Nonblocking collective calls (coll.h): a queue per file, one list of every pending call in
 * start order, and the progress that advances them; blocking calls, which complete the file's
 * pending calls first.  Only the oldest pending call of a file moves, so the calls of a file
 * run in start order and their collectives match on every rank; calls on different files
 * advance side by side.  A lock (recursive) serialises progress between the application's
 * threads and weft's progress thread.
 */
#include "coll/engine.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "common/trace.h"


static pthread_mutex_t progress_lock;
static pthread_once_t progress_lock_once = PTHREAD_ONCE_INIT;
static weft_coll_call *pending_first, *pending_last; /* every pending call, in start order */
static int pending_count;

static void progress_lock_init(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&progress_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

void weft_coll_lock(void)
{
    pthread_once(&progress_lock_once, progress_lock_init);
    pthread_mutex_lock(&progress_lock);
}

void weft_coll_unlock(void) { pthread_mutex_unlock(&progress_lock); }

int weft_coll_pending(void) { return __atomic_load_n(&pending_count, __ATOMIC_RELAXED); }

int weft_coll_done(const weft_coll_call *call) { return !call->pending; }

/* A call is complete: off the lists, and its owner told (which may free it). */
static void complete(weft_coll_call *c)
{
    weft_coll_file *cf = c->e.cf;
    cf->pending_head = c->next_in_file;
    if (!cf->pending_head)
        __atomic_store_n(&cf->pending_tail, NULL, __ATOMIC_RELEASE); /* drain reads it unlocked */
    if (c->prev_pending)
        c->prev_pending->next_pending = c->next_pending;
    else
        pending_first = c->next_pending;
    if (c->next_pending)
        c->next_pending->prev_pending = c->prev_pending;
    else
        pending_last = c->prev_pending;
    __atomic_store_n(&c->pending, 0, __ATOMIC_RELEASE); /* weft_coll_wait reads it unlocked */
    __atomic_sub_fetch(&pending_count, 1, __ATOMIC_RELAXED);
    if (c->on_complete)
        c->on_complete(c->arg);
}

int weft_coll_start(weft_file *f, const weft_access *a, int local_rc,
                    void (*on_complete)(void *arg), void *arg, weft_coll_call **out)
{
    weft_coll_call *c = malloc(sizeof *c);
    *out = c;
    if (!c)
        return -ENOMEM;
    weft_call_init(c, f, a, local_rc, 1);
    c->on_complete = on_complete;
    c->arg = arg;
    weft_coll_lock();
    weft_trace_enabled();
    weft_coll_file *cf = f->coll;
    c->pending = 1;
    if (cf->pending_tail)
        cf->pending_tail->next_in_file = c;
    else
        cf->pending_head = c;
    __atomic_store_n(&cf->pending_tail, c, __ATOMIC_RELEASE);
    c->prev_pending = pending_last;
    if (pending_last)
        pending_last->next_pending = c;
    else
        pending_first = c;
    pending_last = c;
    __atomic_add_fetch(&pending_count, 1, __ATOMIC_RELAXED);
    /* The head of its file's queue begins at once: its first messages fly before the
     * application computes. */
    if (cf->pending_head == c && weft_call_advance(c) == STEP_DONE)
        complete(c);
    weft_coll_unlock();
    return 0;
}

int weft_coll_progress(void)
{
    /* A completion callback may reach weft again (an error handler calling MPI_File_*):
     * no pass inside a pass. */
    static __thread int inside;
    if (weft_coll_pending() == 0 || inside)
        return 0;
    int completed = 0;
    weft_coll_lock();
    inside = 1;
    weft_coll_call *c = pending_first;
    while (c) {
        weft_coll_call *next = c->next_pending;
        /* Only the oldest call of a file moves; the next begins once it completes (the list
         * is in start order, so it comes later in this pass).  The owner may free c. */
        if (c->e.cf->pending_head == c && weft_call_advance(c) == STEP_DONE) {
            complete(c);
            completed++;
        }
        c = next;
    }
    inside = 0;
    weft_coll_unlock();
    return completed;
}

void weft_coll_wait(weft_coll_call *call)
{
    while (__atomic_load_n(&call->pending, __ATOMIC_ACQUIRE))
        if (weft_coll_progress() == 0)
            sched_yield(); /* let the ranks sharing this core run (oversubscribed) */
}

void weft_coll_drain(weft_file *f)
{
    weft_coll_file *cf = f->coll;
    while (cf && __atomic_load_n(&cf->pending_tail, __ATOMIC_ACQUIRE))
        if (weft_coll_progress() == 0)
            sched_yield();
}

int weft_coll_result(const weft_coll_call *call, MPI_Count *done, int *agreed)
{
    *done = call->done;
    *agreed = call->agreed;
    return call->own_rc;
}

void weft_coll_free(weft_coll_call *call) { free(call); }

/* ---- Blocking calls ------------------------------------------------------------------------ */

int weft_coll_access(weft_file *f, const weft_access *a, MPI_Count *done, int local_rc,
                     int *agreed)
{
    weft_coll_drain(f);
    weft_trace_enabled(); /* starts recording on first use when WEFT_TRACE is set */
    weft_coll_call c;
    weft_call_init(&c, f, a, local_rc, 0);
    if (weft_coll_pending() == 0) {
        weft_call_advance(&c); /* waits inside; complete on return */
    } else {
        /* Other ranks may need one of this rank's pending calls to move before they reach
         * this one: poll them all while this call runs. */
        c.e.blocking = 0;
        for (;;) {
            weft_coll_lock();
            int state = weft_call_advance(&c);
            weft_coll_unlock();
            if (state == STEP_DONE)
                break;
            if (weft_coll_progress() == 0)
                sched_yield();
        }
    }
    return weft_coll_result(&c, done, agreed);
}
