/* The posix driver: any local or shared POSIX file system. */
#include "fs/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int posix_open(const char *path, int flags, int *fd)
{
    int f;
    do
        f = open(path, flags | O_CLOEXEC, 0666);
    while (f < 0 && errno == EINTR);
    if (f < 0)
        return -errno;
    *fd = f;
    return 0;
}

static int posix_close(int fd)
{
    /* Linux releases the descriptor even when close reports EINTR: do not retry. */
    return close(fd) == 0 || errno == EINTR ? 0 : -errno;
}

static int posix_resize(int fd, MPI_Offset size)
{
    int rc;
    do
        rc = ftruncate(fd, (off_t)size);
    while (rc < 0 && errno == EINTR);
    return rc == 0 ? 0 : -errno;
}

static int posix_get_size(int fd, MPI_Offset *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    *size = (MPI_Offset)st.st_size;
    return 0;
}

static int posix_preallocate(int fd, MPI_Offset size)
{
    if (size == 0)
        return 0;
    int rc = posix_fallocate(fd, 0, (off_t)size); /* returns the error, not errno */
    if (rc == 0)
        return 0;
    if (rc != EOPNOTSUPP && rc != EINVAL)
        return -rc;
    /* No fallocate here: make the file at least `size` long; blocks appear as written. */
    MPI_Offset current;
    int err = posix_get_size(fd, &current);
    if (err)
        return err;
    return current < size ? posix_resize(fd, size) : 0;
}

static int posix_sync(int fd)
{
    int rc;
    do
        rc = fsync(fd);
    while (rc < 0 && errno == EINTR);
    /* A descriptor of a file that cannot be synced (e.g. a pipe, some pseudo files) has
     * nothing to flush. */
    return rc == 0 || errno == EINVAL || errno == EROFS ? 0 : -errno;
}

static int posix_remove(const char *path)
{
    return unlink(path) == 0 ? 0 : -errno;
}

const weft_fs_driver weft_fs_posix = {
    .name = "posix",
    .open = posix_open,
    .close = posix_close,
    .resize = posix_resize,
    .preallocate = posix_preallocate,
    .get_size = posix_get_size,
    .sync = posix_sync,
    .remove = posix_remove,
};

const weft_fs_driver *weft_fs_select(const char *path, const char **plain_path)
{
    static const char *posix_prefixes[] = {"ufs:", "posix:", "nfs:"};
    *plain_path = path;
    for (size_t i = 0; i < sizeof posix_prefixes / sizeof *posix_prefixes; i++) {
        size_t n = strlen(posix_prefixes[i]);
        if (strncmp(path, posix_prefixes[i], n) == 0) {
            *plain_path = path + n;
            return &weft_fs_posix;
        }
    }
    return &weft_fs_posix;
}
