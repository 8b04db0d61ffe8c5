/*
 * The open file (DESIGN.md §2 layer 2): communicator, amode, hints, view, file pointers,
 * atomicity, and the fs driver in use.  The API layer owns the handle table and passes
 * weft_file pointers down; nothing below the API layer sees an MPI_File.
 */
#ifndef WEFT_FILE_H
#define WEFT_FILE_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hints.h"
#include "common/stats.h"
#include "dtype/dtype.h"
#include "fs/fs.h"

#define WEFT_DATAREP_MAX 64

typedef struct weft_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype;       /* our own references (dups of derived types) */
    const weft_dtype *etype_t, *filetype_t;
    MPI_Count etype_size;
    char datarep[WEFT_DATAREP_MAX];
} weft_view;

typedef struct weft_file {
    MPI_File handle;              /* the user's handle for this file */
    MPI_File host;                /* passthrough: the host MPI-IO's handle; else MPI_FILE_NULL */
    MPI_Comm comm;                /* private duplicate of the user's communicator */
    int rank, nprocs;
    char *path;                   /* as given by the user */
    const char *fs_path;          /* path without an "fs:" prefix, inside `path` */
    int amode;
    int fd;
    const weft_fs_driver *fs;
    weft_hints hints;
    weft_view view;
    MPI_Offset individual_fp;     /* in etypes, relative to the view (pointer_lock) */
    int shared_fp_fd;             /* descriptor of the shared-pointer file, or -1 */
    char *shared_fp_path;
    int atomic;
    MPI_Errhandler errhandler;
    struct weft_coll_file *coll;  /* the collective engine's state (coll/engine.h), made at open */
    int split_active;             /* a split collective is in progress */
    struct weft_nb_request *split; /* its request (started at _begin, completed at _end) */
    weft_stats stats;
    /* Threads of one process (MPI_THREAD_MULTIPLE): claims of the individual and the shared
     * file pointer (the shared pointer's byte-range lock is per open file description, so it
     * does not exclude this process's own threads) and the per-call statistics.  Held for a
     * few instructions or one small pread/pwrite of the counter, never across an access. */
    pthread_mutex_t pointer_lock;
    int collective_busy;          /* a thread is inside a collective data access (atomic) */
} weft_file;

/* Install the default view: disp 0, etype = filetype = MPI_BYTE, "native". */
void weft_view_init_default(weft_view *v);
/* Our own reference to a user's type: named types as they are, derived ones duplicated (the
 * user may free theirs right after set_view; the dup shares the decoded form).  Released by
 * weft_view_release; get_view hands such references to the caller, who frees them. */
MPI_Datatype weft_view_keep_type(MPI_Datatype type);
/* Drop one reference taken with weft_view_keep_type. */
void weft_view_drop_type(MPI_Datatype *type);
/* Drop the view's type references. */
void weft_view_release(weft_view *v);

/* Byte offset in the file of view position `position` (bytes of view data). */
MPI_Offset weft_view_byte_offset(const weft_view *v, MPI_Count position);

/* View position (bytes of data) of the first view byte at or after file byte `offset`. */
MPI_Count weft_view_position_at(const weft_view *v, MPI_Offset offset);
/* The same for any view given as (filetype layout, displacement), e.g. another rank's. */
MPI_Count weft_layout_position_at(const weft_dtype *filetype, MPI_Offset disp, MPI_Offset offset);

/* Shared file pointer, in etypes (file/shared_fp.c): a counter in a small side file next to
 * the data file, updated under an fcntl byte-range lock, so it works across processes
 * without relying on passive-target RMA progress.  Each returns 0 or -errno. */
int weft_shared_fp_fetch_add(weft_file *f, MPI_Offset delta, MPI_Offset *old);
int weft_shared_fp_set(weft_file *f, MPI_Offset value);
int weft_shared_fp_get(weft_file *f, MPI_Offset *value);
/* Close the side file; `remove` unlinks it (one rank, at close). */
void weft_shared_fp_close(weft_file *f, int remove);

#endif
