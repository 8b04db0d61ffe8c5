/*
 * The host MPI's own MPI-IO, for passthrough files.  weft defines both MPI_File_* and
 * PMPI_File_*, so the host's entry points are found with dlsym(RTLD_NEXT, "PMPI_...").
 */
#ifndef WEFT_API_HOST_H
#define WEFT_API_HOST_H

#include <mpi.h>

#include "api/functions.h"

typedef struct weft_host_api {
#define WEFT_HOST_SLOT(name) __typeof__(&PMPI_##name) name;
    WEFT_FILE_FUNCTIONS(WEFT_HOST_SLOT)
#if WEFT_HAVE_LARGE_COUNT
    WEFT_LARGE_COUNT_FUNCTIONS(WEFT_HOST_SLOT)
#endif
#undef WEFT_HOST_SLOT
} weft_host_api;

/* The host's functions, looked up once.  Returns NULL when the host's MPI-IO cannot be
 * found (e.g. weft linked after the MPI library, or an MPI built without MPI-IO). */
const weft_host_api *weft_host(void);

#endif
