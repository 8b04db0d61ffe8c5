/*
 * weft's public extras.  Programs need no weft header to use weft: they call the standard
 * MPI_File_* functions.  This header only lets a program ask which weft it runs on.
 */
#ifndef WEFT_PUBLIC_H
#define WEFT_PUBLIC_H

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* "weft X.Y.Z (built against <MPI library version>)" */
const char *weft_public_version(void);

#ifdef __cplusplus
}
#endif

#endif
