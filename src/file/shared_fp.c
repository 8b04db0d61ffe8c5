/*
 * The shared file pointer lives in a side file, "<dir>/.<name>.weft-shfp.<nonce>", holding one
 * 64-bit counter (an empty file reads as 0).  Every update takes an open-file-description
 * lock on it, so concurrent read_shared/write_shared calls from any rank serialise.  The side
 * file is created by the first update that moves the pointer away from 0, by whichever rank
 * gets there, and unlinked by rank 0 at close: reads and resets to 0 (every set_view) of a
 * counter that does not exist need no file, so a program that never uses the shared pointer
 * leaves no side file and pays no system calls for it.
 */
#include "file/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

static int lock_counter(int fd, short type)
{
    struct flock lk = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    int rc;
    do
        rc = fcntl(fd, F_OFD_SETLKW, &lk);
    while (rc < 0 && errno == EINTR);
    return rc == 0 ? 0 : -errno;
}

/* -ENOENT when !create and no rank has created the counter yet (it reads as 0). */
static int open_counter(weft_file *f, int create)
{
    if (f->shared_fp_fd >= 0)
        return 0;
    int fd;
    do
        fd = open(f->shared_fp_path, O_RDWR | (create ? O_CREAT : 0) | O_CLOEXEC, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -errno;
    f->shared_fp_fd = fd;
    return 0;
}

static int read_counter(int fd, MPI_Offset *value)
{
    int64_t v = 0;
    ssize_t got;
    do
        got = pread(fd, &v, sizeof v, 0);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return -errno;
    *value = got == (ssize_t)sizeof v ? (MPI_Offset)v : 0;
    return 0;
}

static int write_counter(int fd, MPI_Offset value)
{
    int64_t v = (int64_t)value;
    ssize_t put;
    do
        put = pwrite(fd, &v, sizeof v, 0);
    while (put < 0 && errno == EINTR);
    if (put < 0)
        return -errno;
    return put == (ssize_t)sizeof v ? 0 : -EIO;
}

/* Callers hold f->pointer_lock: the byte-range lock below excludes other processes only. */
static int fetch_add_locked(weft_file *f, MPI_Offset delta, MPI_Offset *old)
{
    int rc = open_counter(f, delta != 0);
    if (rc == -ENOENT && delta == 0) {
        *old = 0;
        return 0;
    }
    if (rc || (rc = lock_counter(f->shared_fp_fd, F_WRLCK)))
        return rc;
    rc = read_counter(f->shared_fp_fd, old);
    if (rc == 0 && delta != 0)
        rc = write_counter(f->shared_fp_fd, *old + delta);
    int unlock = lock_counter(f->shared_fp_fd, F_UNLCK);
    return rc ? rc : unlock;
}

static int set_locked(weft_file *f, MPI_Offset value)
{
    int rc = open_counter(f, value != 0);
    if (rc == -ENOENT && value == 0)
        return 0;
    if (rc || (rc = lock_counter(f->shared_fp_fd, F_WRLCK)))
        return rc;
    rc = write_counter(f->shared_fp_fd, value);
    int unlock = lock_counter(f->shared_fp_fd, F_UNLCK);
    return rc ? rc : unlock;
}

int weft_shared_fp_fetch_add(weft_file *f, MPI_Offset delta, MPI_Offset *old)
{
    pthread_mutex_lock(&f->pointer_lock);
    int rc = fetch_add_locked(f, delta, old);
    pthread_mutex_unlock(&f->pointer_lock);
    return rc;
}

int weft_shared_fp_set(weft_file *f, MPI_Offset value)
{
    pthread_mutex_lock(&f->pointer_lock);
    int rc = set_locked(f, value);
    pthread_mutex_unlock(&f->pointer_lock);
    return rc;
}

int weft_shared_fp_get(weft_file *f, MPI_Offset *value)
{
    return weft_shared_fp_fetch_add(f, 0, value);
}

void weft_shared_fp_close(weft_file *f, int remove)
{
    if (f->shared_fp_fd >= 0)
        close(f->shared_fp_fd);
    f->shared_fp_fd = -1;
    if (remove && f->shared_fp_path)
        unlink(f->shared_fp_path);
}
