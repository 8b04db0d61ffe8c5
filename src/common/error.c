#include "common/error.h"

#include <errno.h>
#include <mpi.h>

int weft_err_class(int rc)
{
    if (rc >= 0)
        return MPI_SUCCESS;
    if (weft_err_is_mpi_class(rc))
        return -rc - WEFT_ERR_CLASS_BASE;
    switch (-rc) {
    case ENOENT:
    case ENOTDIR: return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case ENOSPC:
    case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EROFS: return MPI_ERR_READ_ONLY;
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case ENXIO: return MPI_ERR_BAD_FILE;
    case EBUSY:
    case ETXTBSY: return MPI_ERR_FILE_IN_USE;
    case EINVAL: return MPI_ERR_ARG;
    case ENOMEM: return MPI_ERR_NO_MEM;
    case ENOTSUP: return MPI_ERR_UNSUPPORTED_OPERATION;
    default: return MPI_ERR_IO;
    }
}

int weft_agree(MPI_Comm comm, int rc)
{
    int agreed = rc;
    MPI_Allreduce(&rc, &agreed, 1, MPI_INT, MPI_MIN, comm);
    return agreed;
}
