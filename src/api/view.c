/* Views and the individual file pointer: set_view, get_view, get_type_extent,
 * get_byte_offset, seek, get_position. */
#include "api/api.h"
#include "coll/coll.h"

#include <string.h>

static int check_view(weft_file *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, weft_view *v, char *why, size_t why_size)
{
    memset(v, 0, sizeof *v);
    if (disp < 0 && !(disp == MPI_DISPLACEMENT_CURRENT && (f->amode & MPI_MODE_SEQUENTIAL))) {
        snprintf(why, why_size, "displacement %lld is negative%s", (long long)disp,
                 disp == MPI_DISPLACEMENT_CURRENT ? " (MPI_DISPLACEMENT_CURRENT needs "
                                                    "MPI_MODE_SEQUENTIAL)" : "");
        return WEFT_MPI_ERR(MPI_ERR_ARG);
    }
    if (!datarep) {
        snprintf(why, why_size, "datarep is NULL");
        return WEFT_MPI_ERR(MPI_ERR_ARG);
    }
    if (strcmp(datarep, "native") != 0) {
        snprintf(why, why_size, "data representation \"%.60s\" is not supported (weft supports "
                 "\"native\")", datarep);
        return WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_DATAREP);
    }
    if (etype == MPI_DATATYPE_NULL || weft_dtype_get(etype, &v->etype_t) != 0) {
        snprintf(why, why_size, "etype is MPI_DATATYPE_NULL or not committed");
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    if (filetype == MPI_DATATYPE_NULL || weft_dtype_get(filetype, &v->filetype_t) != 0) {
        snprintf(why, why_size, "filetype is MPI_DATATYPE_NULL or not committed");
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    v->etype_size = weft_dtype_size(v->etype_t);
    if (v->etype_size <= 0) {
        snprintf(why, why_size, "etype has size 0");
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    MPI_Count ft_size = weft_dtype_size(v->filetype_t);
    if (ft_size % v->etype_size != 0) {
        snprintf(why, why_size, "filetype (size %lld) is not built from etype (size %lld)",
                 (long long)ft_size, (long long)v->etype_size);
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    if (!weft_dtype_is_monotonic(v->etype_t) || !weft_dtype_is_monotonic(v->filetype_t)) {
        snprintf(why, why_size, "filetype displacements must be non-negative and monotonically "
                 "non-decreasing");
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    }
    v->disp = disp;
    snprintf(v->datarep, sizeof v->datarep, "%s", datarep);
    return 0;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    WEFT_RESOLVE(fh, f, File_set_view, (host_fh, disp, etype, filetype, datarep, info));
    /* Pending nonblocking collectives first: they walk the view they were started with.  (The
     * standard calls set_view with requests pending erroneous; programs do it, ROMIO copes.) */
    weft_coll_drain(f);
    char why[256] = "";
    weft_view v;
    int rc = check_view(f, disp, etype, filetype, datarep, &v, why, sizeof why);
    if (rc == 0 && f->split_active) {
        rc = WEFT_MPI_ERR(MPI_ERR_OTHER);
        snprintf(why, sizeof why, "a split collective operation is in progress");
    }
    /* Collective: one verdict, and the same etype size and datarep everywhere (min of x and
     * of -x give min and max). */
    long long datarep_hash = 0;
    for (const char *p = rc == 0 ? datarep : ""; *p; p++)
        datarep_hash = (datarep_hash * 31 + (unsigned char)*p) & 0x3fffffff;
    long long mine[5] = {rc, v.etype_size, -(long long)v.etype_size, datarep_hash, -datarep_hash};
    long long agreed[5];
    MPI_Allreduce(mine, agreed, 5, MPI_LONG_LONG, MPI_MIN, f->comm);
    if (agreed[0] < 0)
        return weft_raise_agreed(f, fn, rc, (int)agreed[0], "%s", why);
    if (agreed[1] != -agreed[2] || agreed[3] != -agreed[4])
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_NOT_SAME),
                          "ranks passed etypes of different sizes or different datareps");

    /* Every rank joins one broadcast from rank 0.  It carries rank 0's hints, which every
     * rank adopts so collective I/O plans alike, and on sequential files the shared pointer,
     * where the views of ranks passing MPI_DISPLACEMENT_CURRENT start (disp may differ
     * between ranks, so it cannot decide who joins). */
    weft_hints_apply_info(&f->hints, info, f->path, f->rank == 0);
    struct {
        MPI_Offset shared_position;
        weft_hints hints;
    } rank0;
    if (f->rank == 0) {
        rank0.shared_position = 0;
        if (f->amode & MPI_MODE_SEQUENTIAL)
            weft_shared_fp_get(f, &rank0.shared_position);
        rank0.hints = f->hints;
    }
    MPI_Bcast(&rank0, (int)sizeof rank0, MPI_BYTE, 0, f->comm);
    weft_hints_adopt_rank0(&f->hints, &rank0.hints, f->rank, f->path);
    if (disp == MPI_DISPLACEMENT_CURRENT) /* sequential files: the view starts at the pointer */
        v.disp = weft_view_byte_offset(&f->view, rank0.shared_position * f->view.etype_size);
    weft_view_release(&f->view);
    v.etype = weft_view_keep_type(etype);
    v.filetype = weft_view_keep_type(filetype);
    f->view = v;
    f->individual_fp = 0;
    if (f->rank == 0)
        rc = weft_shared_fp_set(f, 0);
    /* The barrier orders the shared pointer's reset before any rank uses it. */
    int agreed_rc = weft_agree(f->comm, rc);
    if (agreed_rc < 0)
        return weft_raise_agreed(f, fn, rc, agreed_rc, "resetting the shared file pointer");
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_set_view)

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    WEFT_RESOLVE(fh, f, File_get_view, (host_fh, disp, etype, filetype, datarep));
    if (!disp || !etype || !filetype || !datarep)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "an output argument is NULL");
    *disp = f->view.disp;
    *etype = weft_view_keep_type(f->view.etype);
    *filetype = weft_view_keep_type(f->view.filetype);
    strcpy(datarep, f->view.datarep);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_get_view)

static int type_extent(weft_file *f, const char *fn, MPI_Datatype type, MPI_Count *extent)
{
    const weft_dtype *t;
    if (type == MPI_DATATYPE_NULL || weft_dtype_get(type, &t) != 0)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_TYPE), "datatype is invalid or not committed");
    /* "native": the file extent is the memory extent. */
    *extent = weft_dtype_extent(t);
    return MPI_SUCCESS;
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    static const char fn[] = "MPI_File_get_type_extent";
    WEFT_RESOLVE(fh, f, File_get_type_extent, (host_fh, datatype, extent));
    if (!extent)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "extent is NULL");
    MPI_Count e = 0;
    int code = type_extent(f, fn, datatype, &e);
    if (code == MPI_SUCCESS)
        *extent = (MPI_Aint)e;
    return code;
}
WEFT_ALIAS(File_get_type_extent)

#if WEFT_HAVE_LARGE_COUNT
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    static const char fn[] = "MPI_File_get_type_extent_c";
    WEFT_RESOLVE(fh, f, File_get_type_extent_c, (host_fh, datatype, extent));
    if (!extent)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "extent is NULL");
    return type_extent(f, fn, datatype, extent);
}
WEFT_ALIAS(File_get_type_extent_c)
#endif

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    WEFT_RESOLVE(fh, f, File_get_byte_offset, (host_fh, offset, disp));
    if (!disp)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "disp is NULL");
    if (offset < 0)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "offset %lld is negative",
                          (long long)offset);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION),
                          "not allowed on a file opened with MPI_MODE_SEQUENTIAL");
    *disp = weft_view_byte_offset(&f->view, offset * f->view.etype_size);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_get_byte_offset)

/* New pointer value for seek: SET, CUR (from `current`) or END (from the end of file, in
 * etypes of the view). */
int weft_seek_target(weft_file *f, MPI_Offset current, MPI_Offset offset, int whence,
                     MPI_Offset *target, char *why, size_t why_size)
{
    MPI_Offset base;
    if (whence == MPI_SEEK_SET) {
        base = 0;
    } else if (whence == MPI_SEEK_CUR) {
        base = current;
    } else if (whence == MPI_SEEK_END) {
        MPI_Offset size = 0;
        int rc = f->fs->get_size(f->fd, &size);
        if (rc)
            return rc;
        base = weft_view_position_at(&f->view, size) / f->view.etype_size;
    } else {
        snprintf(why, why_size, "whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END",
                 whence);
        return WEFT_MPI_ERR(MPI_ERR_ARG);
    }
    if (base + offset < 0) {
        snprintf(why, why_size, "seek to %lld etypes: the pointer would be negative",
                 (long long)(base + offset));
        return WEFT_MPI_ERR(MPI_ERR_ARG);
    }
    *target = base + offset;
    return 0;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    WEFT_RESOLVE(fh, f, File_seek, (host_fh, offset, whence));
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION),
                          "not allowed on a file opened with MPI_MODE_SEQUENTIAL");
    char why[160] = "";
    MPI_Offset target;
    pthread_mutex_lock(&f->pointer_lock); /* MPI_SEEK_CUR against other threads' claims */
    int rc = weft_seek_target(f, f->individual_fp, offset, whence, &target, why, sizeof why);
    if (rc == 0)
        f->individual_fp = target;
    pthread_mutex_unlock(&f->pointer_lock);
    if (rc)
        return weft_raise(f, fn, rc, "%s", why);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_seek)

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position";
    WEFT_RESOLVE(fh, f, File_get_position, (host_fh, offset));
    if (!offset)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "offset is NULL");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_UNSUPPORTED_OPERATION),
                          "not allowed on a file opened with MPI_MODE_SEQUENTIAL");
    pthread_mutex_lock(&f->pointer_lock);
    *offset = f->individual_fp;
    pthread_mutex_unlock(&f->pointer_lock);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_get_position)
