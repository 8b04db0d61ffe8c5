/*
 * Data access entry points: every read/write flavour (explicit offset, individual pointer,
 * shared pointer, ordered; blocking, nonblocking, split collective; int and MPI_Count
 * counts) funnels into run_access().
 *
 * Collective forms go to the collective engine (src/coll), which agrees on arguments and
 * outcome on every rank.  Nonblocking independent forms complete the operation before
 * returning and hand back a completed generalized request (the standard allows a nonblocking
 * call to complete at once); nonblocking collectives and split collectives start the engine's
 * call and return, and weft's progress (api/progress.c) completes it.
 */
#include "api/api.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>

#include "access/access.h"
#include "coll/coll.h"

typedef enum { AT_OFFSET, AT_INDIVIDUAL, AT_SHARED, AT_ORDERED } position_kind;

typedef struct access_call {
    const char *fn;
    int write;
    int collective;
    position_kind where;
    MPI_Offset offset;       /* AT_OFFSET: in etypes */
    const void *buf;
    MPI_Count count;
    MPI_Datatype datatype;
} access_call;

static void set_status(MPI_Status *status, MPI_Count bytes)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    /* Bytes, as MPI_BYTE elements: MPI_Get_count / MPI_Get_elements with the user's type
     * then derive counts (and MPI_UNDEFINED for a partial element), as both MPIs store. */
    MPI_Status_set_elements_x(status, MPI_BYTE, bytes);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
}

/* Local argument checks; fills the memory type and byte count.  Returns 0 or a code. */
static int check_call(weft_file *f, const access_call *c, const weft_dtype **memtype,
                      MPI_Count *bytes, char *why, size_t why_size)
{
    if (c->write && (f->amode & MPI_MODE_RDONLY)) {
        snprintf(why, why_size, "file was opened MPI_MODE_RDONLY");
        return WEFT_MPI_ERR(MPI_ERR_READ_ONLY);
    }
    if (!c->write && (f->amode & MPI_MODE_WRONLY)) {
        snprintf(why, why_size, "file was opened MPI_MODE_WRONLY");
        return WEFT_MPI_ERR(MPI_ERR_ACCESS);
    }
    if ((f->amode & MPI_MODE_SEQUENTIAL) && (c->where == AT_OFFSET || c->where == AT_INDIVIDUAL)) {
        snprintf(why, why_size, "file was opened MPI_MODE_SEQUENTIAL: only shared file pointer "
                 "access is allowed");
        return WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION);
    }
    if (c->count < 0) {
        snprintf(why, why_size, "count %lld is negative", (long long)c->count);
        return WEFT_MPI_ERR(MPI_ERR_COUNT);
    }
    if (c->where == AT_OFFSET && c->offset < 0) {
        snprintf(why, why_size, "offset %lld is negative", (long long)c->offset);
        return WEFT_MPI_ERR(MPI_ERR_ARG);
    }
    if (c->datatype == MPI_DATATYPE_NULL || weft_dtype_get(c->datatype, memtype) != 0) {
        snprintf(why, why_size, "datatype is MPI_DATATYPE_NULL or not committed");
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    MPI_Count size = weft_dtype_size(*memtype);
    if (size > 0 && c->count > INT64_MAX / size) {
        snprintf(why, why_size, "count %lld of a %lld-byte type overflows", (long long)c->count,
                 (long long)size);
        return WEFT_MPI_ERR(MPI_ERR_COUNT);
    }
    *bytes = size * c->count;
    if (*bytes > 0 && c->buf == NULL && weft_dtype_true_lb(*memtype) == 0) {
        /* NULL is MPI_BOTTOM, valid only with a type of absolute addresses. */
        snprintf(why, why_size, "buffer is NULL with count %lld", (long long)c->count);
        return WEFT_MPI_ERR(MPI_ERR_BUFFER);
    }
    if (*bytes % f->view.etype_size != 0) {
        snprintf(why, why_size, "%lld bytes is not a whole number of etypes (etype size %lld)",
                 (long long)*bytes, (long long)f->view.etype_size);
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    if (*bytes > 0 && weft_dtype_size(f->view.filetype_t) == 0) {
        snprintf(why, why_size, "the file view's filetype holds no data");
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    return 0;
}

/* Where the access starts, in etypes of the view; moves the pointer it claims from past the
 * requested data (a thread that claims next starts there; settle_individual corrects a short
 * access). */
static int claim_position(weft_file *f, const access_call *c, MPI_Count bytes,
                          MPI_Offset *start, int *local_rc)
{
    MPI_Offset etypes = bytes / f->view.etype_size;
    switch (c->where) {
    case AT_OFFSET: *start = c->offset; return 0;
    case AT_INDIVIDUAL:
        pthread_mutex_lock(&f->pointer_lock);
        *start = f->individual_fp;
        if (*local_rc == 0)
            f->individual_fp += etypes;
        pthread_mutex_unlock(&f->pointer_lock);
        return 0;
    case AT_SHARED: return weft_shared_fp_fetch_add(f, etypes, start);
    case AT_ORDERED: {
        /* Rank order: each rank starts after the data of the ranks before it; rank 0 claims
         * the whole block from the shared pointer. */
        MPI_Offset before = 0, total = 0, base = 0;
        MPI_Exscan(&etypes, &before, 1, MPI_OFFSET, MPI_SUM, f->comm);
        if (f->rank == 0)
            before = 0;
        MPI_Allreduce(&etypes, &total, 1, MPI_OFFSET, MPI_SUM, f->comm);
        long long claimed[2] = {0, 0};
        if (f->rank == 0) {
            claimed[0] = *local_rc == 0 ? weft_shared_fp_fetch_add(f, total, &base) : 0;
            claimed[1] = base;
        }
        MPI_Bcast(claimed, 2, MPI_LONG_LONG, 0, f->comm);
        *start = (MPI_Offset)claimed[1] + before;
        return (int)claimed[0];
    }
    }
    return 0;
}

/* An access between its checks and its completion. */
typedef struct prepared {
    char why[256];
    const weft_dtype *memtype;
    MPI_Count bytes;
    MPI_Offset start;           /* in etypes of the view */
    int rc;                     /* this rank's failure so far */
    weft_access a;
} prepared;

/* Checks and position.  Returns an MPI code when the call ends here (an independent call with
 * bad arguments; an ordered one whose ranks agreed on a failure), else -1 with *p filled. */
static int prepare_access(weft_file *f, const access_call *c, prepared *p, MPI_Status *status)
{
    memset(p, 0, sizeof *p);
    int rc = check_call(f, c, &p->memtype, &p->bytes, p->why, sizeof p->why);
    if (c->collective && c->where == AT_ORDERED) {
        /* Phase boundary: nobody claims shared-pointer space if any rank's arguments are bad.
         * (Other collectives agree on arguments in the engine's first allgather.) */
        int agreed = weft_agree(f->comm, rc);
        if (agreed < 0) {
            set_status(status, 0);
            return weft_raise_agreed(f, c->fn, rc, agreed, "%s", p->why);
        }
    } else if (rc < 0 && !c->collective) {
        set_status(status, 0);
        return weft_raise(f, c->fn, rc, "%s", p->why);
    }
    int claim_rc = claim_position(f, c, p->bytes, &p->start, &rc);
    if (claim_rc < 0 && rc == 0) {
        rc = claim_rc;
        snprintf(p->why, sizeof p->why, "shared file pointer %s", f->shared_fp_path);
    }
    p->rc = rc;
    p->a = (weft_access){
        .write = c->write,
        .view_position = p->start * f->view.etype_size,
        .buf = (void *)(uintptr_t)c->buf,
        .count = c->count,
        .memtype = p->memtype,
        /* Every rank enters the engine, even with nothing to move or a failed claim: it is
         * where the ranks agree. */
        .bytes = rc < 0 ? 0 : p->bytes,
    };
    return -1;
}

/* Statistics, status and the error of a finished access.  `agreed`: the collective's outcome
 * on every rank (0 for independent calls). */
static int finish_access(weft_file *f, const access_call *c, prepared *p, MPI_Count done,
                         int rc, int agreed, double began, MPI_Status *status)
{
    if (c->collective && rc < 0 && !*p->why)
        snprintf(p->why, sizeof p->why, "%s %lld bytes (collective)",
                 c->write ? "writing" : "reading", (long long)p->bytes);
    int contiguous = p->memtype && weft_dtype_is_contiguous(p->memtype) &&
                     weft_dtype_is_contiguous(f->view.filetype_t);
    weft_stat_kind kind = c->collective ? (c->write ? WEFT_STAT_WRITE_COLLECTIVE : WEFT_STAT_READ_COLLECTIVE)
                          : c->write ? (contiguous ? WEFT_STAT_WRITE_CONTIG : WEFT_STAT_WRITE_NONCONTIG)
                                     : (contiguous ? WEFT_STAT_READ_CONTIG : WEFT_STAT_READ_NONCONTIG);
    pthread_mutex_lock(&f->pointer_lock);
    f->stats.access_seconds += weft_now() - began;
    f->stats.calls[kind]++;
    f->stats.bytes[kind] += (uint64_t)done;
    pthread_mutex_unlock(&f->pointer_lock);
    set_status(status, done);
    if (c->collective && agreed < 0)
        return weft_raise_agreed(f, c->fn, rc, agreed, "%s", p->why);
    if (rc < 0)
        return weft_raise(f, c->fn, rc, "%s", p->why);
    return MPI_SUCCESS;
}

/* A blocking access through the individual pointer moves it by the data actually accessed
 * (whole etypes): back from the claim's end when it fell short, unless another thread has
 * claimed from the pointer since (its access starts at the claim's end: leave it there). */
static void settle_individual(weft_file *f, const prepared *p, MPI_Count done)
{
    MPI_Offset claimed_end = p->start + (p->rc == 0 ? p->bytes / f->view.etype_size : 0);
    pthread_mutex_lock(&f->pointer_lock);
    if (f->individual_fp == claimed_end)
        f->individual_fp = p->start + done / f->view.etype_size;
    pthread_mutex_unlock(&f->pointer_lock);
}

/* Collective calls on one file from two threads at once have no defined order across the ranks
 * (MPI-4.0 §11.6.2, "Collective calls": the program orders them): the second is refused. */
static int enter_collective(weft_file *f, const char *fn)
{
    if (__atomic_exchange_n(&f->collective_busy, 1, __ATOMIC_ACQUIRE))
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_OTHER),
                          "another thread is inside a collective call on this file: collective "
                          "calls on one file handle must be ordered by the program (MPI-4.0 "
                          "§11.6.2), not made from two threads at once");
    return MPI_SUCCESS;
}

static void leave_collective(weft_file *f)
{
    __atomic_store_n(&f->collective_busy, 0, __ATOMIC_RELEASE);
}

static int run_access_once(weft_file *f, const access_call *c, MPI_Status *status)
{
    prepared p;
    int code = prepare_access(f, c, &p, status);
    if (code >= 0)
        return code;
    double began = weft_now();
    MPI_Count done = 0;
    MPI_Offset failed_at = -1;
    int rc = p.rc, agreed = 0;
    if (c->collective) {
        rc = weft_coll_access(f, &p.a, &done, rc, &agreed);
    } else if (rc == 0 && p.bytes > 0) {
        rc = weft_access_independent(f, &p.a, &done, &failed_at);
        if (rc < 0)
            snprintf(p.why, sizeof p.why, "%s %lld bytes at file offset %lld",
                     c->write ? "writing" : "reading", (long long)p.bytes, (long long)failed_at);
    }
    if (c->where == AT_INDIVIDUAL)
        settle_individual(f, &p, done);
    return finish_access(f, c, &p, done, rc, agreed, began, status);
}

static int run_access(weft_file *f, const access_call *c, MPI_Status *status)
{
    if (c->collective) {
        int busy = enter_collective(f, c->fn);
        if (busy != MPI_SUCCESS) {
            set_status(status, 0);
            return busy;
        }
        int code = run_access_once(f, c, status);
        leave_collective(f);
        return code;
    }
    return run_access_once(f, c, status);
}

/* ---- Nonblocking independent calls: a completed generalized request ----------------------
 * The access runs inside the call (the standard lets a nonblocking call complete at once). */

static int query_done(void *extra_state, MPI_Status *status)
{
    set_status(status, *(MPI_Count *)extra_state);
    status->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int free_done(void *extra_state)
{
    free(extra_state);
    return MPI_SUCCESS;
}

static int cancel_done(void *extra_state, int complete)
{
    return MPI_SUCCESS; /* already complete: nothing to cancel */
}

static int run_independent_nonblocking(weft_file *f, const access_call *c, MPI_Request *request)
{
    MPI_Status status;
    int code = run_access(f, c, &status);
    if (code != MPI_SUCCESS)
        return code;
    MPI_Count *bytes = malloc(sizeof *bytes);
    if (!bytes)
        return weft_raise(f, c->fn, -ENOMEM, "allocating the request");
    MPI_Get_elements_x(&status, MPI_BYTE, bytes);
    MPI_Grequest_start(query_done, free_done, cancel_done, bytes, request);
    MPI_Grequest_complete(*request);
    return MPI_SUCCESS;
}

/* ---- Nonblocking collectives: a call of the engine in progress ----------------------------
 * The start checks, claims the position (the individual pointer moves by the data requested,
 * as the standard says for nonblocking calls) and starts the engine's call, which every rank
 * enters even with bad arguments (they are reported at once, and the others see the agreed
 * failure at completion).  The request is a generalized request that weft completes when the
 * call does (nb_completed, inside progress: api/progress.c); its status and error come from
 * here.  Split collectives use the same machinery without a request. */
struct weft_nb_request {
    weft_file *f;
    access_call c;
    prepared p;
    MPI_Datatype kept;          /* our reference to the memory type, until completion */
    double began;
    weft_coll_call *call;
    MPI_Request request;        /* the generalized request, or MPI_REQUEST_NULL (split) */
    int refs;                   /* completion, and the owner (free_fn or the split's _end) */
    int complete;
    MPI_Count done;
    int code;                   /* the call's MPI error code */
    MPI_Status status;
};

static void nb_release(weft_nb_request *nb)
{
    if (__atomic_sub_fetch(&nb->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(nb);
}

static void nb_completed(void *arg)
{
    weft_nb_request *nb = arg;
    int agreed = 0;
    int rc = weft_coll_result(nb->call, &nb->done, &agreed);
    weft_coll_free(nb->call);
    nb->call = NULL;
    if (nb->kept != MPI_DATATYPE_NULL)
        weft_view_drop_type(&nb->kept);
    if (nb->p.rc < 0) /* reported by the start already: the call only ran for the others */
        nb->code = MPI_SUCCESS;
    else
        nb->code = finish_access(nb->f, &nb->c, &nb->p, nb->done, rc, agreed, nb->began,
                                 &nb->status);
    __atomic_store_n(&nb->complete, 1, __ATOMIC_RELEASE);
    if (nb->request != MPI_REQUEST_NULL) {
        weft_nb_completed(nb->request, nb->code);
        MPI_Grequest_complete(nb->request);
    }
    nb_release(nb);
}

static int nb_query(void *extra_state, MPI_Status *status)
{
    weft_nb_request *nb = extra_state;
    *status = nb->status;
    status->MPI_ERROR = nb->code; /* weft's MPI_Wait and friends return it (progress.c) */
    return MPI_SUCCESS;
}

static int nb_free(void *extra_state)
{
    weft_nb_request *nb = extra_state;
    weft_nb_forget(nb->request);
    nb_release(nb);
    return MPI_SUCCESS;
}

static int nb_cancel(void *extra_state, int complete)
{
    return MPI_SUCCESS; /* a started collective cannot be taken back: MPI_Test_cancelled says 0 */
}

#ifdef MPICH_VERSION
/* MPICH's extended generalized requests: the host's own MPI_Test/MPI_Wait on the request poll
 * weft, so the request completes even where weft's MPI_Wait is bypassed (a PMPI tool ahead of
 * weft, the Fortran bindings calling PMPI_Wait). */
static int nb_poll(void *extra_state, MPI_Status *status)
{
    (void)extra_state;
    (void)status;
    weft_coll_progress();
    return MPI_SUCCESS;
}

static int nb_wait(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout;
    (void)status;
    for (int k = 0; k < count; k++) {
        weft_nb_request *nb = states[k];
        while (!__atomic_load_n(&nb->complete, __ATOMIC_ACQUIRE))
            if (weft_coll_progress() == 0)
                sched_yield();
    }
    return MPI_SUCCESS;
}
#endif

static void nb_request_start(weft_nb_request *nb)
{
#ifdef MPICH_VERSION
    MPIX_Grequest_start(nb_query, nb_free, nb_cancel, nb_poll, nb_wait, nb, &nb->request);
#else
    MPI_Grequest_start(nb_query, nb_free, nb_cancel, nb, &nb->request);
#endif
}

/* Start a nonblocking collective.  with_request: a generalized request for the user (else a
 * split collective's).  Returns an MPI code; *out is NULL when the engine could not start. */
static int start_collective(weft_file *f, const access_call *c, int with_request,
                            weft_nb_request **out, MPI_Request *request)
{
    *out = NULL;
    if (request)
        *request = MPI_REQUEST_NULL;
    weft_nb_request *nb = calloc(1, sizeof *nb);
    if (!nb)
        return weft_raise(f, c->fn, -ENOMEM, "allocating the request");
    if (c->where == AT_ORDERED)
        weft_coll_drain(f); /* the ordered claim's collectives come after the pending calls */
    int code = prepare_access(f, c, &nb->p, MPI_STATUS_IGNORE);
    if (code >= 0) {
        free(nb);
        return code;
    }
    nb->f = f;
    nb->c = *c;
    nb->kept = MPI_DATATYPE_NULL;
    nb->request = MPI_REQUEST_NULL;
    nb->began = weft_now();
    if (nb->p.rc == 0) {
        /* The user may free the datatype before completion: keep our own reference. */
        nb->kept = weft_view_keep_type(c->datatype);
        weft_dtype_get(nb->kept, &nb->p.memtype);
        nb->p.a.memtype = nb->p.memtype;
    }
    int local_rc = nb->p.rc;
    /* References: the completion's, and the owner's (the request's free_fn, or the split
     * collective's _end) unless the start fails here and nobody waits for the call. */
    nb->refs = local_rc == 0 ? 2 : 1;
    if (with_request && local_rc == 0) {
        nb_request_start(nb);
        weft_nb_remember(nb->request);
        *request = nb->request;
    }
    weft_coll_lock();
    int rc = weft_coll_start(f, &nb->p.a, local_rc, nb_completed, nb, &nb->call);
    if (rc < 0) { /* out of memory: the other ranks will wait for this one; say so loudly */
        weft_coll_unlock();
        if (nb->kept != MPI_DATATYPE_NULL)
            weft_view_drop_type(&nb->kept);
        nb->code = weft_raise(f, c->fn, rc, "starting the collective");
        __atomic_store_n(&nb->complete, 1, __ATOMIC_RELEASE);
        if (nb->request != MPI_REQUEST_NULL) {
            weft_nb_completed(nb->request, nb->code);
            MPI_Grequest_complete(nb->request);
        }
        *out = local_rc == 0 ? nb : NULL;
        int failed = nb->code;
        nb_release(nb); /* the completion's reference */
        return failed;
    }
    *out = nb;
    if (local_rc < 0) { /* the call runs on for the others; reported here, no request */
        char why[sizeof nb->p.why];
        memcpy(why, nb->p.why, sizeof why);
        weft_coll_unlock();
        *out = NULL;
        return weft_raise(f, c->fn, local_rc, "%s", why);
    }
    weft_coll_unlock();
    weft_progress_thread_start();
    return MPI_SUCCESS;
}

static int run_nonblocking(weft_file *f, const access_call *c, MPI_Request *request)
{
    if (!request)
        return weft_raise(f, c->fn, WEFT_MPI_ERR(MPI_ERR_REQUEST), "request is NULL");
    *request = MPI_REQUEST_NULL;
    if (!c->collective)
        return run_independent_nonblocking(f, c, request);
    int code = enter_collective(f, c->fn);
    if (code != MPI_SUCCESS)
        return code;
    weft_nb_request *nb;
    code = start_collective(f, c, 1, &nb, request);
    leave_collective(f);
    return code;
}

/* ---- Split collectives: begin starts the call, end completes it -------------------------- */

static int run_begin_once(weft_file *f, const access_call *c)
{
    if (f->split_active)
        return weft_raise(f, c->fn, WEFT_MPI_ERR(MPI_ERR_OTHER),
                          "a split collective operation is already in progress on this file");
    f->split_active = 1;
    f->split = NULL;
    return start_collective(f, c, 0, &f->split, NULL);
}

static int run_begin(weft_file *f, const access_call *c)
{
    int code = enter_collective(f, c->fn);
    if (code == MPI_SUCCESS) {
        code = run_begin_once(f, c);
        leave_collective(f);
    }
    return code;
}

static int run_end_once(weft_file *f, const char *fn, MPI_Status *status)
{
    if (!f->split_active)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_OTHER),
                          "no split collective operation was begun on this file");
    f->split_active = 0;
    weft_nb_request *nb = f->split;
    f->split = NULL;
    if (!nb) { /* begin failed and reported it */
        set_status(status, 0);
        return MPI_SUCCESS;
    }
    while (!__atomic_load_n(&nb->complete, __ATOMIC_ACQUIRE))
        if (weft_coll_progress() == 0)
            sched_yield();
    if (status != MPI_STATUS_IGNORE)
        *status = nb->status;
    int code = nb->code;
    nb_release(nb);
    return code;
}

static int run_end(weft_file *f, const char *fn, MPI_Status *status)
{
    int code = enter_collective(f, fn);
    if (code == MPI_SUCCESS) {
        code = run_end_once(f, fn, status);
        leave_collective(f);
    } else {
        set_status(status, 0);
    }
    return code;
}

/* ---- Entry points ------------------------------------------------------------------------
 * Each macro below defines one PMPI_ function and its MPI_ alias.  COUNT_T is int for the
 * MPI-3 names and MPI_Count for the MPI-4 _c names. */

#define CALL(fn_, write_, coll_, where_, off_) \
    access_call c = {.fn = fn_, .write = write_, .collective = coll_, .where = where_, \
                     .offset = off_, .buf = buf, .count = count, .datatype = datatype}

#define DEFINE_AT(name, COUNT_T, BUF_T, write_, coll_) \
    int PMPI_##name(MPI_File fh, MPI_Offset offset, BUF_T buf, COUNT_T count, \
                    MPI_Datatype datatype, MPI_Status *status) \
    { \
        WEFT_RESOLVE(fh, f, name, (host_fh, offset, buf, count, datatype, status)); \
        CALL("MPI_" #name, write_, coll_, AT_OFFSET, offset); \
        return run_access(f, &c, status); \
    } \
    WEFT_ALIAS(name)

#define DEFINE_PTR(name, COUNT_T, BUF_T, write_, coll_, where_) \
    int PMPI_##name(MPI_File fh, BUF_T buf, COUNT_T count, MPI_Datatype datatype, \
                    MPI_Status *status) \
    { \
        WEFT_RESOLVE(fh, f, name, (host_fh, buf, count, datatype, status)); \
        CALL("MPI_" #name, write_, coll_, where_, 0); \
        return run_access(f, &c, status); \
    } \
    WEFT_ALIAS(name)

#define DEFINE_IAT(name, COUNT_T, BUF_T, write_, coll_) \
    int PMPI_##name(MPI_File fh, MPI_Offset offset, BUF_T buf, COUNT_T count, \
                    MPI_Datatype datatype, MPI_Request *request) \
    { \
        WEFT_RESOLVE(fh, f, name, (host_fh, offset, buf, count, datatype, request)); \
        CALL("MPI_" #name, write_, coll_, AT_OFFSET, offset); \
        return run_nonblocking(f, &c, request); \
    } \
    WEFT_ALIAS(name)

#define DEFINE_IPTR(name, COUNT_T, BUF_T, write_, coll_, where_) \
    int PMPI_##name(MPI_File fh, BUF_T buf, COUNT_T count, MPI_Datatype datatype, \
                    MPI_Request *request) \
    { \
        WEFT_RESOLVE(fh, f, name, (host_fh, buf, count, datatype, request)); \
        CALL("MPI_" #name, write_, coll_, where_, 0); \
        return run_nonblocking(f, &c, request); \
    } \
    WEFT_ALIAS(name)

#define DEFINE_BEGIN_AT(name, COUNT_T, BUF_T, write_) \
    int PMPI_##name(MPI_File fh, MPI_Offset offset, BUF_T buf, COUNT_T count, \
                    MPI_Datatype datatype) \
    { \
        WEFT_RESOLVE(fh, f, name, (host_fh, offset, buf, count, datatype)); \
        CALL("MPI_" #name, write_, 1, AT_OFFSET, offset); \
        return run_begin(f, &c); \
    } \
    WEFT_ALIAS(name)

#define DEFINE_BEGIN_PTR(name, COUNT_T, BUF_T, write_, where_) \
    int PMPI_##name(MPI_File fh, BUF_T buf, COUNT_T count, MPI_Datatype datatype) \
    { \
        WEFT_RESOLVE(fh, f, name, (host_fh, buf, count, datatype)); \
        CALL("MPI_" #name, write_, 1, where_, 0); \
        return run_begin(f, &c); \
    } \
    WEFT_ALIAS(name)

#define DEFINE_END(name, BUF_T) \
    int PMPI_##name(MPI_File fh, BUF_T buf, MPI_Status *status) \
    { \
        WEFT_RESOLVE(fh, f, name, (host_fh, buf, status)); \
        return run_end(f, "MPI_" #name, status); \
    } \
    WEFT_ALIAS(name)

/* The whole family for one count type and name suffix. */
#define DEFINE_FAMILY(SUFFIX, COUNT_T) \
    DEFINE_AT(File_read_at##SUFFIX, COUNT_T, void *, 0, 0) \
    DEFINE_AT(File_read_at_all##SUFFIX, COUNT_T, void *, 0, 1) \
    DEFINE_AT(File_write_at##SUFFIX, COUNT_T, const void *, 1, 0) \
    DEFINE_AT(File_write_at_all##SUFFIX, COUNT_T, const void *, 1, 1) \
    DEFINE_IAT(File_iread_at##SUFFIX, COUNT_T, void *, 0, 0) \
    DEFINE_IAT(File_iread_at_all##SUFFIX, COUNT_T, void *, 0, 1) \
    DEFINE_IAT(File_iwrite_at##SUFFIX, COUNT_T, const void *, 1, 0) \
    DEFINE_IAT(File_iwrite_at_all##SUFFIX, COUNT_T, const void *, 1, 1) \
    DEFINE_PTR(File_read##SUFFIX, COUNT_T, void *, 0, 0, AT_INDIVIDUAL) \
    DEFINE_PTR(File_read_all##SUFFIX, COUNT_T, void *, 0, 1, AT_INDIVIDUAL) \
    DEFINE_PTR(File_write##SUFFIX, COUNT_T, const void *, 1, 0, AT_INDIVIDUAL) \
    DEFINE_PTR(File_write_all##SUFFIX, COUNT_T, const void *, 1, 1, AT_INDIVIDUAL) \
    DEFINE_IPTR(File_iread##SUFFIX, COUNT_T, void *, 0, 0, AT_INDIVIDUAL) \
    DEFINE_IPTR(File_iread_all##SUFFIX, COUNT_T, void *, 0, 1, AT_INDIVIDUAL) \
    DEFINE_IPTR(File_iwrite##SUFFIX, COUNT_T, const void *, 1, 0, AT_INDIVIDUAL) \
    DEFINE_IPTR(File_iwrite_all##SUFFIX, COUNT_T, const void *, 1, 1, AT_INDIVIDUAL) \
    DEFINE_PTR(File_read_shared##SUFFIX, COUNT_T, void *, 0, 0, AT_SHARED) \
    DEFINE_PTR(File_write_shared##SUFFIX, COUNT_T, const void *, 1, 0, AT_SHARED) \
    DEFINE_IPTR(File_iread_shared##SUFFIX, COUNT_T, void *, 0, 0, AT_SHARED) \
    DEFINE_IPTR(File_iwrite_shared##SUFFIX, COUNT_T, const void *, 1, 0, AT_SHARED) \
    DEFINE_PTR(File_read_ordered##SUFFIX, COUNT_T, void *, 0, 1, AT_ORDERED) \
    DEFINE_PTR(File_write_ordered##SUFFIX, COUNT_T, const void *, 1, 1, AT_ORDERED) \
    DEFINE_BEGIN_AT(File_read_at_all_begin##SUFFIX, COUNT_T, void *, 0) \
    DEFINE_BEGIN_AT(File_write_at_all_begin##SUFFIX, COUNT_T, const void *, 1) \
    DEFINE_BEGIN_PTR(File_read_all_begin##SUFFIX, COUNT_T, void *, 0, AT_INDIVIDUAL) \
    DEFINE_BEGIN_PTR(File_write_all_begin##SUFFIX, COUNT_T, const void *, 1, AT_INDIVIDUAL) \
    DEFINE_BEGIN_PTR(File_read_ordered_begin##SUFFIX, COUNT_T, void *, 0, AT_ORDERED) \
    DEFINE_BEGIN_PTR(File_write_ordered_begin##SUFFIX, COUNT_T, const void *, 1, AT_ORDERED)

DEFINE_FAMILY(, int)
#if WEFT_HAVE_LARGE_COUNT
DEFINE_FAMILY(_c, MPI_Count)
#endif

DEFINE_END(File_read_at_all_end, void *)
DEFINE_END(File_write_at_all_end, const void *)
DEFINE_END(File_read_all_end, void *)
DEFINE_END(File_write_all_end, const void *)
DEFINE_END(File_read_ordered_end, void *)
DEFINE_END(File_write_ordered_end, const void *)
