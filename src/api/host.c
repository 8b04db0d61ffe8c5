#include "api/host.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static weft_host_api host_api;
static int host_found;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void load_host(void)
{
    int missing = 0;
#define WEFT_HOST_LOOKUP(name) \
    host_api.name = (__typeof__(host_api.name))dlsym(RTLD_NEXT, "PMPI_" #name); \
    if (!host_api.name) \
        missing++;
    WEFT_FILE_FUNCTIONS(WEFT_HOST_LOOKUP)
#if WEFT_HAVE_LARGE_COUNT
    WEFT_LARGE_COUNT_FUNCTIONS(WEFT_HOST_LOOKUP)
#endif
#undef WEFT_HOST_LOOKUP
    /* The core entry points must all be there; _c variants are optional. */
    host_found = host_api.File_open && host_api.File_close && host_api.File_write_at;
    (void)missing;
}

const weft_host_api *weft_host(void)
{
    pthread_once(&host_once, load_host);
    return host_found ? &host_api : NULL;
}
