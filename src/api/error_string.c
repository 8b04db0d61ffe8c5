/*
 * MPI_Error_string for the codes weft makes.  weft registers its messages with
 * MPI_Add_error_string, but MPICH 4.0 returns codes for predefined classes without its
 * "dynamic" bit, and then MPI_Error_string decodes them as its own error-stack codes and
 * prints an unrelated message.  So weft answers for its own codes (from the messages it
 * keeps) and hands every other code to the host's MPI_Error_string.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "api/api.h"

static __typeof__(&PMPI_Error_string) host_error_string;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void find_host(void)
{
    host_error_string = (__typeof__(host_error_string))dlsym(RTLD_NEXT, "PMPI_Error_string");
}

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string && resultlen && weft_error_message(errorcode, string, resultlen))
        return MPI_SUCCESS;
    pthread_once(&host_once, find_host);
    if (!host_error_string)
        return MPI_ERR_INTERN;
    return host_error_string(errorcode, string, resultlen);
}
WEFT_ALIAS(Error_string)
