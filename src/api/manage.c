/* File management entry points: size, preallocation, group, amode, info, atomicity, sync,
 * the shared file pointer's seek and position, and data representations. */
#include "api/api.h"
#include "coll/coll.h"

#include <string.h>

/* Collective calls whose argument must be the same on every rank: one reduction gives the
 * verdict on local errors and on sameness. */
static int agree_same(weft_file *f, int rc, long long value, int *not_same)
{
    long long mine[3] = {rc, value, -value}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_MIN, f->comm);
    *not_same = all[1] != -all[2];
    return (int)all[0];
}

static int resize_like(MPI_File fh, MPI_Offset size, int preallocate)
{
    const char *fn = preallocate ? "MPI_File_preallocate" : "MPI_File_set_size";
    weft_file *f;
    MPI_File host_fh;
    int resolved = weft_resolve(fh, &f, &host_fh);
    if (resolved == WEFT_RESOLVED_HOST)
        return preallocate ? weft_host()->File_preallocate(host_fh, size)
                           : weft_host()->File_set_size(host_fh, size);
    if (resolved == WEFT_RESOLVED_NONE)
        return weft_raise(NULL, fn, WEFT_MPI_ERR(MPI_ERR_FILE), "not a valid file handle");
    weft_coll_drain(f); /* pending nonblocking collectives first (they use the file's state) */
    int rc = 0;
    char why[128] = "";
    if (size < 0) {
        rc = WEFT_MPI_ERR(MPI_ERR_ARG);
        snprintf(why, sizeof why, "size %lld is negative", (long long)size);
    } else if (f->amode & MPI_MODE_RDONLY) {
        rc = WEFT_MPI_ERR(MPI_ERR_READ_ONLY);
        snprintf(why, sizeof why, "file was opened MPI_MODE_RDONLY");
    } else if (f->amode & MPI_MODE_SEQUENTIAL) {
        rc = WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION);
        snprintf(why, sizeof why, "not allowed on a file opened with MPI_MODE_SEQUENTIAL");
    }
    int not_same;
    int agreed = agree_same(f, rc, size, &not_same);
    if (agreed < 0)
        return weft_raise_agreed(f, fn, rc, agreed, "%s", why);
    if (not_same)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_NOT_SAME),
                          "ranks passed different sizes (this rank: %lld)", (long long)size);
    /* One rank changes the file; the agreement after it is the barrier that makes the new
     * size visible to every rank before any returns. */
    if (f->rank == 0)
        rc = preallocate ? f->fs->preallocate(f->fd, size) : f->fs->resize(f->fd, size);
    agreed = weft_agree(f->comm, rc);
    if (agreed < 0)
        return weft_raise_agreed(f, fn, rc, agreed, "%s to %lld bytes",
                                 preallocate ? "preallocating" : "resizing", (long long)size);
    return MPI_SUCCESS;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) { return resize_like(fh, size, 0); }
WEFT_ALIAS(File_set_size)

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) { return resize_like(fh, size, 1); }
WEFT_ALIAS(File_preallocate)

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    WEFT_RESOLVE(fh, f, File_get_size, (host_fh, size));
    if (!size)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "size is NULL");
    int rc = f->fs->get_size(f->fd, size);
    return rc ? weft_raise(f, fn, rc, "fstat") : MPI_SUCCESS;
}
WEFT_ALIAS(File_get_size)

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fn[] = "MPI_File_get_group";
    WEFT_RESOLVE(fh, f, File_get_group, (host_fh, group));
    if (!group)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "group is NULL");
    return MPI_Comm_group(f->comm, group);
}
WEFT_ALIAS(File_get_group)

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    static const char fn[] = "MPI_File_get_amode";
    WEFT_RESOLVE(fh, f, File_get_amode, (host_fh, amode));
    if (!amode)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "amode is NULL");
    *amode = f->amode;
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_get_amode)

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    WEFT_RESOLVE(fh, f, File_set_info, (host_fh, info));
    weft_coll_drain(f); /* pending nonblocking collectives first (they use the file's state) */
    /* Collective by the standard, so rank 0's hints can win: collective I/O plans from them
     * on every rank, and must plan alike. */
    weft_hints_apply_info(&f->hints, info, f->path, f->rank == 0);
    weft_hints_make_uniform(&f->hints, f->comm, f->path);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_set_info)

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    WEFT_RESOLVE(fh, f, File_get_info, (host_fh, info_used));
    if (!info_used)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "info_used is NULL");
    return weft_hints_to_info(&f->hints, info_used);
}
WEFT_ALIAS(File_get_info)

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fn[] = "MPI_File_set_atomicity";
    WEFT_RESOLVE(fh, f, File_set_atomicity, (host_fh, flag));
    weft_coll_drain(f); /* pending nonblocking collectives first (they use the file's state) */
    int not_same;
    int agreed = agree_same(f, 0, flag != 0, &not_same);
    if (agreed < 0)
        return weft_raise_agreed(f, fn, 0, agreed, "set_atomicity");
    if (not_same)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_NOT_SAME),
                          "ranks passed different atomicity flags");
    f->atomic = flag != 0;
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_set_atomicity)

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char fn[] = "MPI_File_get_atomicity";
    WEFT_RESOLVE(fh, f, File_get_atomicity, (host_fh, flag));
    if (!flag)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "flag is NULL");
    *flag = f->atomic;
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_get_atomicity)

int PMPI_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    WEFT_RESOLVE(fh, f, File_sync, (host_fh));
    weft_coll_drain(f); /* pending nonblocking collectives first (they use the file's state) */
    int rc = f->amode & MPI_MODE_RDONLY ? 0 : f->fs->sync(f->fd);
    int agreed = weft_agree(f->comm, rc);
    if (agreed < 0)
        return weft_raise_agreed(f, fn, rc, agreed, "fsync");
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_sync)

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    WEFT_RESOLVE(fh, f, File_seek_shared, (host_fh, offset, whence));
    /* First every rank arrives (and the arguments are checked for sameness), so no rank's
     * earlier shared-pointer access can see the new value; then rank 0 moves the pointer;
     * the second agreement keeps every rank from using it before it has moved. */
    int not_same;
    int agreed = agree_same(f, 0, offset * 4 + whence, &not_same);
    if (agreed == 0 && not_same)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_NOT_SAME),
                          "ranks passed different offsets or whence values");
    char why[160] = "";
    int rc = 0;
    if (f->rank == 0) {
        MPI_Offset current = 0, target = 0;
        rc = weft_shared_fp_get(f, &current);
        if (rc == 0)
            rc = weft_seek_target(f, current, offset, whence, &target, why, sizeof why);
        if (rc == 0)
            rc = weft_shared_fp_set(f, target);
    }
    agreed = weft_agree(f->comm, rc);
    if (agreed < 0)
        return weft_raise_agreed(f, fn, rc, agreed, "%s", why);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_seek_shared)

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    WEFT_RESOLVE(fh, f, File_get_position_shared, (host_fh, offset));
    if (!offset)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "offset is NULL");
    int rc = weft_shared_fp_get(f, offset);
    return rc ? weft_raise(f, fn, rc, "shared file pointer %s", f->shared_fp_path) : MPI_SUCCESS;
}
WEFT_ALIAS(File_get_position_shared)

/* User-defined data representations need conversion in every access path; until that lands
 * the call says so instead of pretending to register. */
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return weft_raise_path(datarep ? datarep : "(null)", "MPI_Register_datarep",
                           WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION),
                           "user-defined data representations are not supported yet "
                           "(weft supports \"native\")");
}
WEFT_ALIAS(Register_datarep)

#if WEFT_HAVE_LARGE_COUNT
int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return weft_raise_path(datarep ? datarep : "(null)", "MPI_Register_datarep_c",
                           WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION),
                           "user-defined data representations are not supported yet "
                           "(weft supports \"native\")");
}
WEFT_ALIAS(Register_datarep_c)
#endif
