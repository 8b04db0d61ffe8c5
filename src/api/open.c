/* MPI_File_open, MPI_File_close, MPI_File_delete. */
#include "api/api.h"
#include "coll/coll.h"
#include "common/trace.h"
#include "xfer/xfer.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The standard's rules for amode (MPI-3.1 §13.2.1). */
static int check_amode(int amode, const char **why)
{
    int access = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) +
                 (amode & MPI_MODE_RDWR ? 1 : 0);
    const int known = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_CREATE |
                      MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                      MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    if (amode & ~known)
        *why = "invalid amode: it has bits that are no MPI_MODE_* flag";
    else if (access != 1)
        *why = "invalid amode: it must contain exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR";
    else if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        *why = "invalid amode: MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL";
    else if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        *why = "invalid amode: MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL";
    else
        return 0;
    return WEFT_MPI_ERR(MPI_ERR_AMODE);
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void free_file(weft_file *f)
{
    if (!f)
        return;
    weft_view_release(&f->view);
    weft_coll_close(f); /* collective (windows): before the communicator goes */
    if (f->comm != MPI_COMM_NULL)
        MPI_Comm_free(&f->comm);
    free(f->shared_fp_path);
    free(f->path);
    pthread_mutex_destroy(&f->pointer_lock);
    free(f);
}

static char *shared_fp_path_for(const char *fs_path, uint64_t nonce)
{
    char *dir_copy = strdup(fs_path), *base_copy = strdup(fs_path);
    char *path = NULL;
    if (dir_copy && base_copy &&
        asprintf(&path, "%s/.%s.weft-shfp.%llx", dirname(dir_copy), basename(base_copy),
                 (unsigned long long)nonce) < 0)
        path = NULL;
    free(dir_copy);
    free(base_copy);
    return path;
}

static int open_flags(int amode)
{
    int flags = amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    /* Never O_APPEND: Linux pwrite on an O_APPEND descriptor ignores the offset.
     * MPI_MODE_APPEND only places the initial file pointers at the end. */
    return flags;
}

/* WEFT_TEST_INJECT=ENOSPC@R (or EIO@R, EDQUOT@R): writes on MPI_COMM_WORLD rank R fail with
 * that errno — the fault shim the tests use to check that one rank's failure reaches every
 * rank of a collective and that nobody hangs.  ENOMEM@R: the collective engine's cycle
 * buffers cannot be allocated on rank R. */
static void inject_faults(int world_rank)
{
    static const struct { const char *name; int err; } known[] = {
        {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EDQUOT", EDQUOT}};
    const char *spec = getenv("WEFT_TEST_INJECT");
    const char *at = spec ? strchr(spec, '@') : NULL;
    if (!at || atoi(at + 1) != world_rank)
        return;
    if (strncmp(spec, "ENOMEM@", 7) == 0)
        weft_coll_inject_alloc_failure(1);
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strncmp(spec, known[i].name, (size_t)(at - spec)) == 0 &&
            strlen(known[i].name) == (size_t)(at - spec))
            weft_xfer_inject_write_error(known[i].err);
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    if (!fh)
        return weft_raise_path(filename, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "fh is NULL");
    *fh = MPI_FILE_NULL;
    int inter = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return weft_raise_path(filename, fn, WEFT_MPI_ERR(MPI_ERR_COMM),
                               "communicator is MPI_COMM_NULL or an intercommunicator");

    int rank, nprocs, world_rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    weft_trace_set_rank(world_rank);
    inject_faults(world_rank);

    const char *why = NULL;
    int local = 0;
    if (!filename || !*filename) {
        local = WEFT_MPI_ERR(MPI_ERR_BAD_FILE);
        why = "file name is NULL or empty";
    } else {
        local = check_amode(amode, &why);
    }

    /* Each rank's own hints (its info and WEFT_HINTS); rank 0's win below, for passthrough
     * in the reduction and for the rest in the broadcast after the file is created. */
    weft_hints hints;
    weft_hints_init(&hints);
    weft_hints_apply_info(&hints, info, filename, rank == 0);

    /* One reduction checks errors and that every rank passed the same amode and file name
     * (min of x and of -x gives min and max), and gives every rank rank 0's passthrough choice
     * (the others offer the largest value). */
    uint64_t h = hash_name(filename);
    long long mine[8] = {local, amode, -(long long)amode, (long long)(h >> 33),
                         -(long long)(h >> 33), (long long)(h & 0x1ffffffffull),
                         -(long long)(h & 0x1ffffffffull),
                         rank == 0 ? hints.value[WEFT_HINT_WEFT_PASSTHROUGH] : LLONG_MAX};
    long long all[8];
    MPI_Allreduce(mine, all, 8, MPI_LONG_LONG, MPI_MIN, comm);
    int passthrough = all[7] != 0;
    if (all[0] < 0) {
        if (local < 0)
            return weft_raise_path(filename, fn, local, "%s", why);
        return weft_raise_path(filename, fn, (int)all[0], "invalid arguments on another rank");
    }
    if (all[1] != -all[2])
        return weft_raise_path(filename, fn, WEFT_MPI_ERR(MPI_ERR_NOT_SAME),
                               "ranks passed different amodes (this rank: 0x%x)", amode);
    if (all[3] != -all[4] || all[5] != -all[6])
        return weft_raise_path(filename, fn, WEFT_MPI_ERR(MPI_ERR_NOT_SAME),
                               "ranks passed different file names");

    weft_file *f = calloc(1, sizeof *f);
    int rc = f ? 0 : -ENOMEM;
    if (f) {
        pthread_mutex_init(&f->pointer_lock, NULL);
        f->comm = MPI_COMM_NULL;
        f->host = MPI_FILE_NULL;
        f->fd = -1;
        f->shared_fp_fd = -1;
        f->rank = rank;
        f->nprocs = nprocs;
        f->amode = amode;
        f->hints = hints;
        f->errhandler = weft_default_file_errhandler();
        f->path = strdup(filename);
        weft_view_init_default(&f->view);
        if (!f->path)
            rc = -ENOMEM;
    }
    if (weft_agree(comm, rc) < 0) {
        free_file(f);
        return weft_raise_path(filename, fn, -ENOMEM, "allocating the file object");
    }

    if (passthrough) {
        /* The host MPI reads the hints it knows from `info` itself; weft's matter no more, but
         * a rank that did not ask for passthrough is told, as for any hint. */
        if (!f->hints.value[WEFT_HINT_WEFT_PASSTHROUGH]) {
            weft_hints chosen = f->hints;
            char no_error[8];
            weft_hints_set(&chosen, "weft_passthrough", "true", no_error, sizeof no_error);
            weft_hints_adopt_rank0(&f->hints, &chosen, rank, filename);
        }
        const weft_host_api *host = weft_host();
        int code = host ? host->File_open(comm, filename, amode, info, &f->host)
                        : weft_raise_path(filename, fn, WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION),
                                          "weft_passthrough: the host MPI's MPI-IO was not found "
                                          "(link weft before the MPI library)");
        if (code != MPI_SUCCESS || weft_handle_register(f) == MPI_FILE_NULL) {
            free_file(f);
            return code != MPI_SUCCESS ? code
                                       : weft_raise_path(filename, fn, -ENOMEM, "handle table");
        }
        *fh = f->handle;
        return MPI_SUCCESS;
    }

    MPI_Comm_dup(comm, &f->comm);
    f->fs = weft_fs_select(f->path, &f->fs_path);

    /* Rank 0 creates the file (and alone honours MPI_MODE_EXCL); the others open it after.
     * The broadcast that tells them also carries rank 0's hints, which every rank adopts, so
     * collective I/O plans alike everywhere at no extra collective. */
    int flags = open_flags(amode);
    struct {
        long long rc;
        uint64_t nonce;
        weft_hints hints;
    } first;
    if (rank == 0) {
        int create = amode & MPI_MODE_CREATE ? O_CREAT : 0;
        int excl = amode & MPI_MODE_EXCL ? O_EXCL : 0;
        rc = f->fs->open(f->fs_path, flags | create | excl, &f->fd);
        first.rc = rc;
        first.nonce = ((uint64_t)getpid() << 20) ^ (uint64_t)(weft_now() * 1e9);
        first.hints = f->hints;
    }
    MPI_Bcast(&first, (int)sizeof first, MPI_BYTE, 0, f->comm);
    rc = (int)first.rc;
    uint64_t nonce = first.nonce;
    if (rc == 0 && rank != 0)
        rc = f->fs->open(f->fs_path, flags, &f->fd);
    int agreed = weft_agree(f->comm, rc);
    if (agreed < 0) {
        if (f->fd >= 0)
            f->fs->close(f->fd);
        int code = rc < 0 ? weft_raise_path(filename, fn, rc, "open")
                          : weft_raise_path(filename, fn, agreed, "open failed on another rank");
        free_file(f);
        return code;
    }
    weft_hints_adopt_rank0(&f->hints, &first.hints, rank, filename);
    /* The collective engine's per-file state (nodes, host names), so that a nonblocking
     * collective can start without a collective call.  Agreed on inside. */
    rc = weft_coll_open(f);
    if (rc < 0) {
        f->fs->close(f->fd);
        free_file(f);
        return weft_raise_path(filename, fn, rc, "setting up collective I/O");
    }

    f->shared_fp_path = shared_fp_path_for(f->fs_path, nonce);
    if (amode & MPI_MODE_APPEND) {
        /* All ranks see the same size after the agreement above. */
        MPI_Offset size = 0;
        f->fs->get_size(f->fd, &size);
        f->individual_fp = size;
        if (rank == 0)
            weft_shared_fp_set(f, size);
        MPI_Barrier(f->comm);
    }
    f->stats.opened_at = weft_now();
    if (weft_handle_register(f) == MPI_FILE_NULL) {
        f->fs->close(f->fd);
        free_file(f);
        return weft_raise_path(filename, fn, -ENOMEM, "handle table");
    }
    *fh = f->handle;
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_open)

int PMPI_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    if (!fh)
        return weft_raise(NULL, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "fh is NULL");
    weft_file *f = weft_handle_lookup(*fh);
    if (!f) {
        weft_file *owner = weft_handle_find_host(*fh);
        if (!owner)
            return weft_raise(NULL, fn, WEFT_MPI_ERR(MPI_ERR_FILE), "not a valid file handle");
        f = owner; /* the host closes its own handle through us: close it once, below */
    }
    if (f->host != MPI_FILE_NULL) {
        int code = weft_host()->File_close(&f->host);
        weft_handle_release(f);
        free_file(f);
        *fh = MPI_FILE_NULL;
        return code;
    }

    /* Nonblocking collectives still pending complete first (the standard makes that the
     * user's duty; completing them keeps the ranks' collectives matched if they forgot). */
    weft_coll_drain(f);
    int rc = f->fs->close(f->fd);
    f->fd = -1;
    /* First agreement: every rank has finished with the file, so rank 0 may remove it (delete
     * on close) and the shared pointer's side file; the second makes the removal visible to
     * every rank before any returns, and reports its failure everywhere. */
    int agreed = weft_agree(f->comm, rc);
    int removed = 0;
    weft_shared_fp_close(f, f->rank == 0);
    if (f->rank == 0 && (f->amode & MPI_MODE_DELETE_ON_CLOSE))
        removed = f->fs->remove(f->fs_path);
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE) {
        int removal = weft_agree(f->comm, removed);
        if (agreed == 0)
            agreed = removal;
        if (rc == 0)
            rc = removed;
    }
    if (weft_stats_enabled())
        weft_stats_report(&f->stats, f->comm, f->path);
    int code = MPI_SUCCESS;
    if (agreed < 0)
        code = weft_raise_agreed(f, fn, rc, agreed, "close");
    weft_handle_release(f);
    free_file(f);
    *fh = MPI_FILE_NULL;
    return code;
}
WEFT_ALIAS(File_close)

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    if (!filename || !*filename)
        return weft_raise_path("(null)", fn, WEFT_MPI_ERR(MPI_ERR_BAD_FILE),
                               "file name is NULL or empty");
    weft_hints hints;
    weft_hints_init(&hints);
    weft_hints_apply_info(&hints, info, filename, 0);
    if (hints.value[WEFT_HINT_WEFT_PASSTHROUGH] && weft_host())
        return weft_host()->File_delete(filename, info);
    const char *plain;
    const weft_fs_driver *fs = weft_fs_select(filename, &plain);
    int rc = fs->remove(plain);
    if (rc < 0)
        return weft_raise_path(filename, fn, rc, "delete");
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_delete)
