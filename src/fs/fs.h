/*
 * File-system drivers (DESIGN.md §2 layer 5): everything that depends on the file system
 * beyond moving bytes.  A driver is a table of functions filled with designated initializers;
 * every function returns 0 or -errno.
 */
#ifndef WEFT_FS_H
#define WEFT_FS_H

#include <mpi.h>

typedef struct weft_fs_driver {
    const char *name;
    /* flags: O_RDONLY/O_WRONLY/O_RDWR plus O_CREAT/O_EXCL/O_APPEND as needed. */
    int (*open)(const char *path, int flags, int *fd);
    int (*close)(int fd);
    int (*resize)(int fd, MPI_Offset size);
    int (*preallocate)(int fd, MPI_Offset size);
    int (*get_size)(int fd, MPI_Offset *size);
    int (*sync)(int fd);
    int (*remove)(const char *path);
} weft_fs_driver;

extern const weft_fs_driver weft_fs_posix;

/* Strip a ROMIO-style "fs:" prefix ("ufs:", "posix:") and return the driver for `path`;
 * *plain_path points into path past the prefix.  NULL for an unknown prefix. */
const weft_fs_driver *weft_fs_select(const char *path, const char **plain_path);

#endif
