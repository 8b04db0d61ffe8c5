/* Error-handler and Fortran-handle entry points. */
#include "api/api.h"

int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_create_errhandler";
    if (!file_errhandler_fn || !errhandler)
        return weft_raise(NULL, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "function or errhandler is NULL");
    /* The handle must be the host's own (the user frees it with MPI_Errhandler_free); weft
     * remembers which function it stands for, since the host cannot call it for our files. */
    const weft_host_api *host = weft_host();
    int code = host ? host->File_create_errhandler(file_errhandler_fn, errhandler)
                    : MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)file_errhandler_fn,
                                                 errhandler);
    if (code == MPI_SUCCESS)
        weft_errhandler_remember(*errhandler, file_errhandler_fn);
    return code;
}
WEFT_ALIAS(File_create_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_File_set_errhandler";
    if (file != MPI_FILE_NULL) {
        WEFT_RESOLVE(file, f, File_set_errhandler, (host_fh, errhandler));
        if (!weft_errhandler_valid(errhandler))
            return weft_raise(f, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "not a file error handler");
        f->errhandler = errhandler;
        return MPI_SUCCESS;
    }
    if (!weft_errhandler_valid(errhandler))
        return weft_raise(NULL, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "not a file error handler");
    /* MPI_FILE_NULL's handler is the default for files opened later (and for errors of
     * calls on no file); passthrough opens get it from the host too. */
    weft_set_default_file_errhandler(errhandler);
    const weft_host_api *host = weft_host();
    if (host)
        host->File_set_errhandler(MPI_FILE_NULL, errhandler);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_get_errhandler";
    if (!errhandler)
        return weft_raise(NULL, fn, WEFT_MPI_ERR(MPI_ERR_ARG), "errhandler is NULL");
    if (file == MPI_FILE_NULL) {
        *errhandler = weft_default_file_errhandler();
        return MPI_SUCCESS;
    }
    WEFT_RESOLVE(file, f, File_get_errhandler, (host_fh, errhandler));
    *errhandler = f->errhandler;
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_get_errhandler)

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    if (fh == MPI_FILE_NULL) {
        weft_errhandler_invoke(weft_default_file_errhandler(), fh, MPI_COMM_NULL, errorcode);
        return MPI_SUCCESS;
    }
    WEFT_RESOLVE(fh, f, File_call_errhandler, (host_fh, errorcode));
    weft_errhandler_invoke(f->errhandler, f->handle, f->comm, errorcode);
    return MPI_SUCCESS;
}
WEFT_ALIAS(File_call_errhandler)

MPI_Fint PMPI_File_c2f(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return 0;
    return weft_handle_to_fint(fh);
}
WEFT_ALIAS(File_c2f)

MPI_File PMPI_File_f2c(MPI_Fint fh)
{
    weft_file *f = weft_handle_from_fint(fh);
    return f ? f->handle : MPI_FILE_NULL;
}
WEFT_ALIAS(File_f2c)
