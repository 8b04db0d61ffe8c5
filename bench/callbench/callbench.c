/*
 * callbench: the time of each call of a collective write through a file view, call by call,
 * so that the per-call costs of an MPI-IO implementation (open, set_view, write_all, close)
 * show apart from the file access.  Every rank writes an N x N tile of doubles (a subarray
 * view; the tiles stack, so ranks' ranges do not interleave), REPS times, each time into a new
 * file; rank 0 prints the median of each call (the slowest rank's time per repetition) and of
 * the four together ("total", the slowest rank's sum: a rank that waits in one call of an
 * implementation may wait in another call of another, so the totals compare them).  It is
 * built against MPI only: run it plain for the host's MPI-IO and with LD_PRELOAD=libweft.so
 * for weft, alternately, and compare the medians.  It prints figures and asserts nothing.
 *   callbench DIR [N (1024)] [REPS (41)]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "median.h"

enum { CALLS = 4, MAX_REPS = 1001 };
static const char *call_names[CALLS + 1] = {"open", "set_view", "write_all", "close", "total"};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: callbench DIR [N] [REPS]\n");
        MPI_Finalize();
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 1024, reps = argc > 3 ? atoi(argv[3]) : 41;
    if (n < 1 || reps < 1 || reps > MAX_REPS) {
        if (rank == 0)
            fprintf(stderr, "callbench: N >= 1, 1 <= REPS <= %d\n", MAX_REPS);
        MPI_Finalize();
        return 2;
    }
    long pid = (long)getpid(); /* rank 0's names the file */
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    char path[1024];
    snprintf(path, sizeof path, "%s/callbench.%ld.dat", argv[1], pid);
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *data = malloc(bytes);
    if (!data)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(data, rank + 1, bytes);
    int sizes[2] = {n * nprocs, n}, tile[2] = {n, n}, start[2] = {n * rank, 0};
    MPI_Datatype filetype;
    MPI_Type_create_subarray(2, sizes, tile, start, MPI_ORDER_C, MPI_DOUBLE, &filetype);
    MPI_Type_commit(&filetype);

    static double took[CALLS + 1][MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double t[CALLS + 1], slowest[CALLS + 1];
        MPI_File fh;
        MPI_Barrier(MPI_COMM_WORLD);
        t[0] = MPI_Wtime();
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh);
        t[1] = MPI_Wtime();
        rc |= MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL);
        t[2] = MPI_Wtime();
        rc |= MPI_File_write_all(fh, data, n * n, MPI_DOUBLE, MPI_STATUS_IGNORE);
        t[3] = MPI_Wtime();
        rc |= MPI_File_close(&fh);
        t[4] = MPI_Wtime();
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "callbench: rank %d: an MPI-IO call failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double mine[CALLS + 1];
        for (int k = 0; k < CALLS; k++)
            mine[k] = t[k + 1] - t[k];
        mine[CALLS] = t[CALLS] - t[0];
        MPI_Reduce(mine, slowest, CALLS + 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        for (int k = 0; k <= CALLS; k++)
            took[k][r] = slowest[k];
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL);
    }
    if (rank == 0) {
        printf("callbench: %d ranks, %d x %d doubles each, %d repetitions, median us:", nprocs, n,
               n, reps);
        for (int k = 0; k <= CALLS; k++) {
            printf(" %s %.1f", call_names[k], median_of(took[k], reps) * 1e6);
        }
        printf("\n");
    }
    MPI_Type_free(&filetype);
    free(data);
    MPI_Finalize();
    return 0;
}
