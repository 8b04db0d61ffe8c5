/*
 * iobench: contiguous independent I/O through weft versus plain pwrite/pread on the same
 * file system, in one run with interleaved repetitions (foundation issue: weft must reach
 * >= 90 % of plain POSIX for calls of >= 1 MiB).  Prints a table; asserts nothing.
 *
 * Usage: iobench [DIR] [TOTAL_MIB] [REPS]      (run it on 1 or 2 ranks; each rank its own region)
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One pass: total bytes in calls of `chunk` bytes at this rank's region; returns seconds
 * (slowest rank). */
static double posix_pass(const char *path, int write, char *buf, long long total, long long chunk,
                         long long base)
{
    int fd = open(path, write ? O_WRONLY | O_CREAT : O_RDONLY, 0644);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long long off = 0; off < total; off += chunk) {
        ssize_t n = write ? pwrite(fd, buf, (size_t)chunk, base + off)
                          : pread(fd, buf, (size_t)chunk, base + off);
        if (n != chunk) {
            fprintf(stderr, "iobench: short posix %s\n", write ? "write" : "read");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    double t = MPI_Wtime() - t0, slowest;
    close(fd);
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static double weft_pass(const char *path, int write, char *buf, long long total, long long chunk,
                        long long base)
{
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, write ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "iobench: MPI_File_open failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long long off = 0; off < total; off += chunk) {
        MPI_Status st;
        int rc = write ? MPI_File_write_at(fh, base + off, buf, (int)chunk, MPI_BYTE, &st)
                       : MPI_File_read_at(fh, base + off, buf, (int)chunk, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "iobench: MPI_File_%s_at failed\n", write ? "write" : "read");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    double t = MPI_Wtime() - t0, slowest;
    MPI_File_close(&fh);
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *dir = argc > 1 ? argv[1] : "/dev/shm";
    long long total = (argc > 2 ? atoll(argv[2]) : 256) << 20;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    char path[1024];
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/weft-iobench-%ld", dir, pid);
    long long chunks[] = {1 << 20, 4 << 20, 16 << 20};
    char *buf = malloc((size_t)chunks[2]);
    memset(buf, 'w', (size_t)chunks[2]);
    long long base = (long long)rank * total;
    if (rank == 0)
        printf("iobench: %s, %d rank(s), %lld MiB per rank per pass, %d interleaved reps, median MB/s\n"
               "| call size | posix write | weft write | ratio | posix read | weft read | ratio |\n"
               "|---|---|---|---|---|---|---|\n", dir, nprocs, total >> 20, reps);
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        double pw[64], ww[64], pr[64], wr[64];
        for (int r = 0; r < reps && r < 64; r++) {
            /* Interleaved, and alternating who goes first, so drift hits both alike. */
            if (r % 2 == 0) {
                pw[r] = posix_pass(path, 1, buf, total, chunks[c], base);
                ww[r] = weft_pass(path, 1, buf, total, chunks[c], base);
                pr[r] = posix_pass(path, 0, buf, total, chunks[c], base);
                wr[r] = weft_pass(path, 0, buf, total, chunks[c], base);
            } else {
                ww[r] = weft_pass(path, 1, buf, total, chunks[c], base);
                pw[r] = posix_pass(path, 1, buf, total, chunks[c], base);
                wr[r] = weft_pass(path, 0, buf, total, chunks[c], base);
                pr[r] = posix_pass(path, 0, buf, total, chunks[c], base);
            }
        }
        double bytes = (double)total * nprocs / 1e6;
        double mpw = bytes / median(pw, reps), mww = bytes / median(ww, reps);
        double mpr = bytes / median(pr, reps), mwr = bytes / median(wr, reps);
        if (rank == 0)
            printf("| %lld MiB | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n", chunks[c] >> 20, mpw,
                   mww, mww / mpw, mpr, mwr, mwr / mpr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    free(buf);
    MPI_Finalize();
    return 0;
}
