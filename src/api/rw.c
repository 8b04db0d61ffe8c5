/*
 * Data access entry points: every read/write flavour (explicit offset, individual pointer,
 * shared pointer, ordered; blocking, nonblocking, split collective; int and MPI_Count
 * counts) funnels into run_access().
 *
 * Collective forms go to the collective engine (src/coll), which agrees on arguments and
 * outcome on every rank.  Nonblocking forms complete the operation
 * before returning and hand back a completed generalized request: allowed by the standard
 * (a nonblocking call may complete at once) and correct for every use of the request.
 */
#include "api/api.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
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

/* Where the access starts, in etypes of the view; moves shared pointers as it claims them. */
static int claim_position(weft_file *f, const access_call *c, MPI_Count bytes,
                          MPI_Offset *start, int *local_rc)
{
    MPI_Offset etypes = bytes / f->view.etype_size;
    switch (c->where) {
    case AT_OFFSET: *start = c->offset; return 0;
    case AT_INDIVIDUAL: *start = f->individual_fp; return 0;
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

static int run_access(weft_file *f, const access_call *c, MPI_Status *status)
{
    char why[256] = "";
    const weft_dtype *memtype = NULL;
    MPI_Count bytes = 0;
    int rc = check_call(f, c, &memtype, &bytes, why, sizeof why);
    if (c->collective && c->where == AT_ORDERED) {
        /* Phase boundary: nobody claims shared-pointer space if any rank's arguments are bad.
         * (Other collectives agree on arguments in the engine's first allgather.) */
        int agreed = weft_agree(f->comm, rc);
        if (agreed < 0) {
            set_status(status, 0);
            return weft_raise_agreed(f, c->fn, rc, agreed, "%s", why);
        }
    } else if (rc < 0 && !c->collective) {
        set_status(status, 0);
        return weft_raise(f, c->fn, rc, "%s", why);
    }

    MPI_Offset start = 0;
    int claim_rc = claim_position(f, c, bytes, &start, &rc);
    if (claim_rc < 0 && rc == 0) {
        rc = claim_rc;
        snprintf(why, sizeof why, "shared file pointer %s", f->shared_fp_path);
    }

    double began = weft_now();
    MPI_Count done = 0;
    MPI_Offset failed_at = -1;
    int agreed = 0; /* collective: the engine's agreement on the outcome */
    weft_access a = {
        .write = c->write,
        .view_position = start * f->view.etype_size,
        .buf = (void *)(uintptr_t)c->buf,
        .count = c->count,
        .memtype = memtype,
        .bytes = bytes,
    };
    if (c->collective) {
        /* Every rank enters the engine, even with nothing to move or a failed claim: it is
         * where the ranks agree. */
        if (rc < 0)
            a.bytes = 0;
        rc = weft_coll_access(f, &a, &done, rc, &agreed);
        if (rc < 0 && !*why)
            snprintf(why, sizeof why, "%s %lld bytes (collective)", c->write ? "writing" : "reading",
                     (long long)bytes);
    } else if (rc == 0 && bytes > 0) {
        rc = weft_access_independent(f, &a, &done, &failed_at);
        if (rc < 0)
            snprintf(why, sizeof why, "%s %lld bytes at file offset %lld",
                     c->write ? "writing" : "reading", (long long)bytes, (long long)failed_at);
    }
    f->stats.access_seconds += weft_now() - began;
    int contiguous = memtype && weft_dtype_is_contiguous(memtype) &&
                     weft_dtype_is_contiguous(f->view.filetype_t);
    weft_stat_kind kind = c->collective ? (c->write ? WEFT_STAT_WRITE_COLLECTIVE : WEFT_STAT_READ_COLLECTIVE)
                          : c->write ? (contiguous ? WEFT_STAT_WRITE_CONTIG : WEFT_STAT_WRITE_NONCONTIG)
                                     : (contiguous ? WEFT_STAT_READ_CONTIG : WEFT_STAT_READ_NONCONTIG);
    f->stats.calls[kind]++;
    f->stats.bytes[kind] += (uint64_t)done;

    /* The pointer moves by the data actually accessed (whole etypes). */
    if (c->where == AT_INDIVIDUAL)
        f->individual_fp = start + done / f->view.etype_size;
    set_status(status, done);

    if (c->collective && agreed < 0)
        return weft_raise_agreed(f, c->fn, rc, agreed, "%s", why);
    if (rc < 0)
        return weft_raise(f, c->fn, rc, "%s", why);
    return MPI_SUCCESS;
}

/* ---- Nonblocking: a completed generalized request ---------------------------------------- */

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

static int run_nonblocking(weft_file *f, const access_call *c, MPI_Request *request)
{
    if (!request)
        return weft_raise(f, c->fn, WEFT_MPI_ERR(MPI_ERR_REQUEST), "request is NULL");
    *request = MPI_REQUEST_NULL;
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

/* ---- Split collectives: begin does the work, end hands back its status ------------------ */

static int run_begin(weft_file *f, const access_call *c)
{
    if (f->split_active)
        return weft_raise(f, c->fn, WEFT_MPI_ERR(MPI_ERR_OTHER),
                          "a split collective operation is already in progress on this file");
    f->split_active = 1;
    f->split_rc = run_access(f, c, &f->split_status);
    return f->split_rc;
}

static int run_end(weft_file *f, const char *fn, MPI_Status *status)
{
    if (!f->split_active)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_OTHER),
                          "no split collective operation was begun on this file");
    f->split_active = 0;
    if (status != MPI_STATUS_IGNORE)
        *status = f->split_status;
    return f->split_rc;
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
