/*
 * Progress of nonblocking collectives (rw.c starts them; the engine's calls advance in
 * weft_coll_progress, never blocking).  The standard makes starting a nonblocking collective
 * local, so the rest happens later, driven from three places:
 *
 *  - weft's own MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Test, MPI_Testall,
 *    MPI_Testany, MPI_Testsome and MPI_Request_get_status: while weft calls are pending they
 *    poll weft's calls and the host's requests in turn (the application may wait for a message
 *    that another rank sends only after this rank's call moved), then hand the requests to the
 *    host (its PMPI_ entry points).  A weft request is a generalized request, completed when
 *    the call completes; these functions return its error code, which the host does not know.
 *  - every weft entry point (weft_progress_poke);
 *  - a progress thread, when the application initialised MPI with MPI_THREAD_MULTIPLE (the
 *    only level at which weft may call MPI from a thread of its own): it polls while calls are
 *    pending and exits when none are, so compute-only stretches of the application progress
 *    too.
 *
 * With no weft call pending each of these functions costs one load before calling the host.
 * Only the MPI_ names are defined here (not PMPI_): a tool interposing on MPI_Wait ahead of
 * weft, or a Fortran binding calling the host's PMPI_Wait directly, waits on the request in
 * the host, which completes only through the progress thread (docs/ARCHITECTURE.md).
 */
#include "api/api.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "coll/coll.h"

/* ---- The pending weft requests ----------------------------------------------------------- */

typedef struct tracked {
    MPI_Request request;
    int complete;
    int code;
} tracked;

/* The table has a lock of its own, taken with nothing else held after it and never across an
 * MPI call: MPICH calls the requests' free function with a lock of its own held, and the
 * progress lock (weft_coll_lock) is held across MPI calls, so taking the progress lock there
 * would invert the order (ThreadSanitizer: lock-order inversion). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static tracked *table;
static int ntracked, table_cap;

static tracked *find(MPI_Request request)
{
    for (int k = 0; k < ntracked; k++)
        if (table[k].request == request)
            return &table[k];
    return NULL;
}

void weft_nb_remember(MPI_Request request)
{
    pthread_mutex_lock(&table_lock);
    if (ntracked == table_cap) {
        int cap = table_cap ? 2 * table_cap : 16;
        tracked *grown = realloc(table, sizeof *grown * (size_t)cap);
        if (grown) {
            table = grown;
            table_cap = cap;
        }
    }
    if (ntracked < table_cap) { /* out of memory: the request still completes, without a code */
        table[ntracked] = (tracked){.request = request};
        __atomic_store_n(&ntracked, ntracked + 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&table_lock);
}

void weft_nb_completed(MPI_Request request, int code)
{
    pthread_mutex_lock(&table_lock);
    tracked *t = find(request);
    if (t) {
        t->code = code;
        t->complete = 1;
    }
    pthread_mutex_unlock(&table_lock);
}

void weft_nb_forget(MPI_Request request)
{
    pthread_mutex_lock(&table_lock);
    tracked *t = find(request);
    if (t) {
        *t = table[ntracked - 1];
        __atomic_store_n(&ntracked, ntracked - 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&table_lock);
}

static int weft_active(void)
{
    return weft_coll_pending() > 0 || __atomic_load_n(&ntracked, __ATOMIC_RELAXED) > 0;
}

/* Is `request` weft's, and if so complete (then *code is its error code)? */
static int lookup(MPI_Request request, int *complete, int *code)
{
    pthread_mutex_lock(&table_lock);
    tracked *t = find(request);
    if (t) {
        *complete = t->complete;
        *code = t->code;
    }
    pthread_mutex_unlock(&table_lock);
    return t != NULL;
}

/* ---- Progress ------------------------------------------------------------------------------ */

static int thread_running;

static void *progress_main(void *unused)
{
    (void)unused;
    struct timespec pause = {0, 50 * 1000}; /* between passes that completed nothing */
    for (;;) {
        weft_coll_lock();
        if (weft_coll_pending() == 0) {
            thread_running = 0;
            weft_coll_unlock();
            return NULL;
        }
        int completed = weft_coll_progress();
        weft_coll_unlock();
        if (!completed)
            nanosleep(&pause, NULL);
    }
}

void weft_progress_thread_start(void)
{
    static int level = -1;
    if (level < 0)
        MPI_Query_thread(&level);
    if (level != MPI_THREAD_MULTIPLE || getenv("WEFT_NO_PROGRESS_THREAD"))
        return;
    weft_coll_lock();
    if (!thread_running && weft_coll_pending() > 0) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, progress_main, NULL) == 0) {
            pthread_detach(thread);
            thread_running = 1;
        }
    }
    weft_coll_unlock();
}

void weft_progress_poke(void)
{
    if (weft_coll_pending() > 0)
        weft_coll_progress();
}

/* One round of a wait loop: weft's calls, then give the core away if nothing moved. */
static void poll_round(void)
{
    if (weft_coll_progress() == 0)
        sched_yield();
}

/* ---- The host's completion functions, with weft's requests --------------------------------- */

/* MPI_STATUSES_IGNORE is (MPI_Status *)1 in MPICH, whose prototypes carry access attributes. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!weft_active())
        return PMPI_Wait(request, status);
    for (;;) {
        int complete = 0, code = MPI_SUCCESS, flag = 0;
        weft_coll_progress();
        if (lookup(*request, &complete, &code)) {
            if (!complete) {
                poll_round();
                continue;
            }
            int rc = PMPI_Wait(request, status);
            return code != MPI_SUCCESS ? code : rc;
        }
        if (weft_coll_pending() == 0)
            return PMPI_Wait(request, status);
        int rc = PMPI_Test(request, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        sched_yield();
    }
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!weft_active())
        return PMPI_Test(request, flag, status);
    int complete = 0, code = MPI_SUCCESS;
    weft_coll_progress();
    int ours = lookup(*request, &complete, &code);
    int rc = PMPI_Test(request, flag, status);
    return ours && *flag && code != MPI_SUCCESS ? code : rc;
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (!weft_active())
        return PMPI_Request_get_status(request, flag, status);
    int complete = 0, code = MPI_SUCCESS;
    weft_coll_progress();
    int ours = lookup(request, &complete, &code);
    int rc = PMPI_Request_get_status(request, flag, status);
    return ours && *flag && code != MPI_SUCCESS ? code : rc;
}

/* The error codes of weft's requests among `requests` (MPI_SUCCESS for the others; -1 for a
 * weft request not yet complete), read before the host frees them.  Returns the number of
 * weft requests with an error, or -1 without memory. */
static int codes_of(int n, const MPI_Request *requests, int *codes)
{
    int failed = 0;
    for (int k = 0; k < n; k++) {
        int complete = 0, code = MPI_SUCCESS;
        codes[k] = MPI_SUCCESS;
        if (requests[k] != MPI_REQUEST_NULL && lookup(requests[k], &complete, &code)) {
            codes[k] = complete ? code : -1;
            failed += complete && code != MPI_SUCCESS;
        }
    }
    return failed;
}

/* After a multiple completion: statuses of completed weft requests carry their codes. */
static int with_codes(int rc, int failed, int n, const int *indices, const int *codes,
                      MPI_Status *statuses)
{
    if (failed <= 0)
        return rc;
    int any = 0;
    for (int k = 0; k < n; k++) {
        int i = indices ? indices[k] : k;
        int code = codes[i] < 0 ? MPI_SUCCESS : codes[i];
        any |= code != MPI_SUCCESS;
        if (statuses != MPI_STATUSES_IGNORE)
            statuses[k].MPI_ERROR = code;
    }
    return any ? MPI_ERR_IN_STATUS : rc;
}

static int *codes_buffer(int n)
{
    return malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
}

int MPI_Testall(int n, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int *codes;
    if (!weft_active() || !(codes = codes_buffer(n)))
        return PMPI_Testall(n, requests, flag, statuses);
    weft_coll_progress();
    int failed = codes_of(n, requests, codes);
    int rc = PMPI_Testall(n, requests, flag, statuses);
    if (*flag)
        rc = with_codes(rc, failed, n, NULL, codes, statuses);
    free(codes);
    return rc;
}

int MPI_Waitall(int n, MPI_Request requests[], MPI_Status statuses[])
{
    if (!weft_active())
        return PMPI_Waitall(n, requests, statuses);
    int flag = 0, rc;
    while ((rc = MPI_Testall(n, requests, &flag, statuses)) == MPI_SUCCESS && !flag)
        poll_round();
    return rc;
}

int MPI_Testany(int n, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    int *codes;
    if (!weft_active() || !(codes = codes_buffer(n)))
        return PMPI_Testany(n, requests, index, flag, status);
    weft_coll_progress();
    codes_of(n, requests, codes);
    int rc = PMPI_Testany(n, requests, index, flag, status);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && codes[*index] > 0) {
        rc = codes[*index];
        if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = rc;
    }
    free(codes);
    return rc;
}

int MPI_Waitany(int n, MPI_Request requests[], int *index, MPI_Status *status)
{
    if (!weft_active())
        return PMPI_Waitany(n, requests, index, status);
    int flag = 0, rc;
    while ((rc = MPI_Testany(n, requests, index, &flag, status)) == MPI_SUCCESS && !flag)
        poll_round();
    return rc;
}

int MPI_Testsome(int n, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    int *codes;
    if (!weft_active() || !(codes = codes_buffer(n)))
        return PMPI_Testsome(n, requests, outcount, indices, statuses);
    weft_coll_progress();
    int failed = codes_of(n, requests, codes);
    int rc = PMPI_Testsome(n, requests, outcount, indices, statuses);
    if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
        rc = with_codes(rc, failed, *outcount, indices, codes, statuses);
    free(codes);
    return rc;
}

int MPI_Waitsome(int n, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (!weft_active())
        return PMPI_Waitsome(n, requests, outcount, indices, statuses);
    int rc;
    while ((rc = MPI_Testsome(n, requests, outcount, indices, statuses)) == MPI_SUCCESS &&
           *outcount == 0)
        poll_round();
    return rc;
}

#pragma GCC diagnostic pop
