/* Prints every MPI-IO function libweft.so must export (MPI_ and PMPI_ names), from the same
 * list the library is built from, for the export test. */
#include <mpi.h>
#include <stdio.h>

#include "api/functions.h"

int main(void)
{
#define PRINT_NAME(name) printf("MPI_%s\nPMPI_%s\n", #name, #name);
    WEFT_FILE_FUNCTIONS(PRINT_NAME)
#if WEFT_HAVE_LARGE_COUNT
    WEFT_LARGE_COUNT_FUNCTIONS(PRINT_NAME)
#endif
    printf("MPI_Error_string\nPMPI_Error_string\nweft_public_version\n");
    /* completion functions that progress nonblocking collectives (MPI_ names only) */
    printf("MPI_Wait\nMPI_Waitall\nMPI_Waitany\nMPI_Waitsome\nMPI_Test\nMPI_Testall\n"
           "MPI_Testany\nMPI_Testsome\nMPI_Request_get_status\n");
    return 0;
}
