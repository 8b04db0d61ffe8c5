/*
 * Shared pieces of the API layer (DESIGN.md §2 layer 1): the handle table, error reporting
 * and the agreement on errors in collective calls.
 */
#ifndef WEFT_API_H
#define WEFT_API_H

#include <mpi.h>

#include "api/host.h"
#include "common/error.h"
#include "file/file.h"

/* ---- Handles --------------------------------------------------------------------------- */
/* weft's MPI_File values are small integers (slot + 1) cast to the host's MPI_File type, so
 * they can never be mistaken for the host's own handles (pointers) nor for MPI_FILE_NULL,
 * and MPI_File_c2f/f2c are the identity on the slot number. */
MPI_File weft_handle_register(weft_file *f);
void weft_handle_release(weft_file *f);
weft_file *weft_handle_lookup(MPI_File fh);          /* NULL if not a live weft handle */
weft_file *weft_handle_from_fint(MPI_Fint i);
MPI_Fint weft_handle_to_fint(MPI_File fh);
/* A passthrough file whose host handle is `fh` (ROMIO may call MPI_File_* on its own handles
 * internally): the file, or NULL. */
weft_file *weft_handle_find_host(MPI_File fh);

/* ---- Errors ---------------------------------------------------------------------------- */
/* Report failure `rc` (negative internal code) of function `fn` on file `f` (NULL: no file,
 * the default file error handler applies): builds a registered MPI error code whose string is
 * "fn: path: <detail>[: strerror]", invokes the error handler, and returns the code. */
int weft_raise(weft_file *f, const char *fn, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, for calls on no file (open, delete) with the path given. */
int weft_raise_path(const char *path, const char *fn, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Collective calls: when another rank failed and this one did not, report that. */
int weft_raise_agreed(weft_file *f, const char *fn, int local_rc, int agreed_rc,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The message of a code weft made: 1 and fills text/length, or 0 if the code is not ours. */
int weft_error_message(int code, char *text, int *length);

MPI_Errhandler weft_default_file_errhandler(void);
void weft_set_default_file_errhandler(MPI_Errhandler eh);
/* Non-zero if eh is a handler that may be attached to a file. */
int weft_errhandler_valid(MPI_Errhandler eh);
/* Invoke the handler `eh` for file handle `fh` with `code`; returns code. */
int weft_errhandler_invoke(MPI_Errhandler eh, MPI_File fh, MPI_Comm comm, int code);
/* Register a user file error handler function created through the host. */
void weft_errhandler_remember(MPI_Errhandler eh, MPI_File_errhandler_function *fn);

/* ---- Nonblocking collectives (rw.c starts them, progress.c completes them) ------------- */
typedef struct weft_nb_request weft_nb_request;
/* The generalized request of a pending weft call: weft's MPI_Wait/Test family progresses weft
 * until it completes and returns its error code. */
void weft_nb_remember(MPI_Request request);
void weft_nb_completed(MPI_Request request, int code); /* called under the progress lock */
void weft_nb_forget(MPI_Request request);
/* After a start: a progress thread when the application runs MPI_THREAD_MULTIPLE. */
void weft_progress_thread_start(void);
/* Progress pending nonblocking collectives if there are any (every weft entry point). */
void weft_progress_poke(void);

/* ---- Helpers shared by entry points ---------------------------------------------------- */
/* The host MPI-IO table, or NULL when passthrough is impossible. */
const weft_host_api *weft_host(void);


/* ---- Resolving a handle at an entry point ---------------------------------------------- */
enum { WEFT_RESOLVED_NONE, WEFT_RESOLVED_WEFT, WEFT_RESOLVED_HOST };

static inline int weft_resolve(MPI_File fh, weft_file **f, MPI_File *host)
{
    *f = weft_handle_lookup(fh);
    if (*f) {
        if ((*f)->host == MPI_FILE_NULL)
            return WEFT_RESOLVED_WEFT;
        *host = (*f)->host;
        return WEFT_RESOLVED_HOST;
    }
    /* The host's own handle of a passthrough file, e.g. from the host's internal calls. */
    if (weft_handle_find_host(fh)) {
        *host = fh;
        return WEFT_RESOLVED_HOST;
    }
    return WEFT_RESOLVED_NONE;
}

/* Start of every entry point that takes a file handle: `f` is the weft file; passthrough
 * files go to the host's function with `host_fh` in place of the handle; anything else is
 * MPI_ERR_FILE. */
#define WEFT_RESOLVE(fh, f, name, host_args) \
    weft_file *f; \
    do { \
        MPI_File host_fh; \
        weft_progress_poke(); \
        int resolved_ = weft_resolve((fh), &f, &host_fh); \
        if (resolved_ == WEFT_RESOLVED_HOST) \
            return weft_host()->name host_args; \
        if (resolved_ == WEFT_RESOLVED_NONE) \
            return weft_raise(NULL, "MPI_" #name, WEFT_MPI_ERR(MPI_ERR_FILE), \
                              "not a valid file handle"); \
    } while (0)

/* MPI_<name> is the same function as PMPI_<name> (a profiling tool may interpose on the
 * MPI_ name and call ours through the PMPI_ one). */
#define WEFT_ALIAS(name) \
    extern __typeof__(PMPI_##name) MPI_##name __attribute__((alias("PMPI_" #name)));

/* Target of a seek (view.c): SET, CUR relative to `current`, END relative to the end of file
 * in etypes of the view.  Returns 0 or a negative code with `why` filled. */
int weft_seek_target(weft_file *f, MPI_Offset current, MPI_Offset offset, int whence,
                     MPI_Offset *target, char *why, size_t why_size);

#endif
