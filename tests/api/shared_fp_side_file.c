/*
 * The shared file pointer's side file exists only once a rank moves the pointer (weft keeps the
 * pointer in "<dir>/.<name>.weft-shfp.<nonce>"):
 *  1. open, set_view, read_all, read through the individual pointer, close: no side file is
 *     ever created in the file's directory (set_view's reset to 0 and reads of an absent
 *     counter need none);
 *  2. write_shared from every rank: the bytes land back to back, and close removes the side
 *     file;
 *  3. a file in a directory nobody may create files in (immutable for root, mode 0555
 *     otherwise) opens, takes a view and reads: set_view used to create the side file there
 *     and failed with MPI_ERR_ACCESS.  Skipped where the directory cannot be made so.
 * Checked with readdir and POSIX reads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "helpers.h"

enum { INTS = 1024 };

static int rank, nprocs;
static char dir[512], path[600];

/* Entries of dir other than "." and ".."; the first one's name in first. */
static int entries(char *first, size_t size)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL, "opendir %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n++ == 0 || strstr(e->d_name, "weft-shfp"))
            snprintf(first, size, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

/* Open, set a view, read collectively and independently; check_dir: rank 0 lists the directory
 * while the file is still open (close removes a side file). */
static void read_through_view(int check_dir)
{
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_Datatype mine;
    CHECK_MPI(MPI_Type_vector(INTS / nprocs, 1, nprocs, MPI_INT, &mine));
    CHECK_MPI(MPI_Type_commit(&mine));
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(int), MPI_INT, mine, "native",
                                MPI_INFO_NULL));
    static int got[INTS];
    CHECK_MPI(MPI_File_read_all(fh, got, INTS / nprocs, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < INTS / nprocs; i++)
        CHECK(got[i] == i * nprocs + rank, "element %d is %d", i, got[i]);
    CHECK_MPI(MPI_File_read_at(fh, 0, got, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(got[0] == rank, "read_at gave %d", got[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    char name[256] = "";
    if (check_dir && rank == 0)
        CHECK(entries(name, sizeof name) == 1 && strcmp(name, "data") == 0,
              "the directory holds %s besides the data file", name);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&mine);
}

/* 1 when dir can no longer take new files (checked by trying), 0 when it cannot be made so. */
static int lock_dir(int lock)
{
    int ok = 1;
    if (geteuid() == 0) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        int flags = 0;
        ok = fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
        flags = lock ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
        ok = ok && ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
        if (fd >= 0)
            close(fd);
    } else {
        ok = chmod(dir, lock ? 0555 : 0755) == 0;
    }
    if (ok && lock) {
        char probe[700];
        snprintf(probe, sizeof probe, "%s/probe", dir);
        int fd = open(probe, O_CREAT | O_WRONLY, 0600);
        if (fd >= 0) { /* still writable: undo and skip */
            close(fd);
            unlink(probe);
            lock_dir(0);
            ok = 0;
        }
    }
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    test_path(dir, sizeof dir, "shfp-dir");
    snprintf(path, sizeof path, "%s/data", dir);
    char name[256] = "";

    if (rank == 0) {
        CHECK(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
        static int values[INTS];
        for (int i = 0; i < INTS; i++)
            values[i] = i;
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        CHECK(fd >= 0 && write(fd, values, sizeof values) == (ssize_t)sizeof values, "data");
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 1. No side file for a program that never uses the shared pointer. */
    read_through_view(1);

    /* 2. write_shared: bytes back to back; close removes the side file. */
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_seek_shared(fh, INTS * (MPI_Offset)sizeof(int), MPI_SEEK_SET));
    int64_t tag = 1000 + rank;
    CHECK_MPI(MPI_File_write_shared(fh, &tag, 1, MPI_INT64_T, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(entries(name, sizeof name) == 1, "a side file is left: %s", name);
        int fd = open(path, O_RDONLY);
        struct stat st;
        CHECK(fd >= 0 && fstat(fd, &st) == 0, "stat");
        CHECK(st.st_size == (off_t)(INTS * sizeof(int) + nprocs * sizeof tag), "size %lld",
              (long long)st.st_size);
        int seen = 0;
        for (int r = 0; r < nprocs; r++) {
            int64_t v = 0;
            CHECK(pread(fd, &v, sizeof v, (off_t)(INTS * sizeof(int) + r * sizeof v)) ==
                      (ssize_t)sizeof v, "pread");
            CHECK(v >= 1000 && v < 1000 + nprocs && !(seen & (1 << (v - 1000))),
                  "slot %d holds %lld", r, (long long)v);
            seen |= 1 << (v - 1000);
        }
        close(fd);
    }

    /* 3. A directory that takes no new files. */
    int locked = rank == 0 ? lock_dir(1) : 0;
    MPI_Bcast(&locked, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (locked) {
        read_through_view(0);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            CHECK(lock_dir(0), "unlocking %s", dir);
    } else if (rank == 0) {
        printf("shared_fp_side_file: %s cannot be made read-only here: case 3 skipped\n", dir);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
        rmdir(dir);
        printf("shared_fp_side_file: %d ranks: no side file unless the shared pointer moves%s\n",
               nprocs, locked ? "; reads in a directory that takes no new files" : "");
    }
    MPI_Finalize();
    return 0;
}
