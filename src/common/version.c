#include <mpi.h>
#include <stdio.h>

#include "weft.h"

const char *weft_public_version(void)
{
    static char text[64 + MPI_MAX_LIBRARY_VERSION_STRING];
    if (!text[0]) {
        char host[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        MPI_Get_library_version(host, &len);
        for (int i = 0; host[i]; i++)
            if (host[i] == '\n' || host[i] == ',') {
                host[i] = '\0';
                break;
            }
        snprintf(text, sizeof text, "weft %d.%d.%d (built against %s)", WEFT_VERSION_MAJOR,
                 WEFT_VERSION_MINOR, WEFT_VERSION_PATCH, host);
    }
    return text;
}
