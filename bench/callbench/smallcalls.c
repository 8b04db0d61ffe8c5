/*
 * smallcalls: the cost of one small collective call, the IOR pattern of issue 6's "ior 64KiB
 * coll" case taken call by call.  Each rank writes CALLS blocks of BYTES with
 * MPI_File_write_at_all, block i of rank r at (i * P + r) * BYTES (ranks' blocks adjacent, not
 * interleaved, so an implementation sends each straight to the file), then reads them back
 * with MPI_File_read_at_all; REPS times, each into a new file.  Rank 0 prints the median over
 * repetitions of the slowest rank's time per call, write and read.  Open and close are not
 * timed.  Built against MPI only: run it plain for the host's MPI-IO and with
 * LD_PRELOAD=libweft.so for weft, alternately.  It prints figures and asserts nothing.
 *   smallcalls DIR [BYTES (65536)] [CALLS (256)] [REPS (15)]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "median.h"

enum { MAX_REPS = 1001 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    long bytes = argc > 2 ? atol(argv[2]) : 65536;
    int calls = argc > 3 ? atoi(argv[3]) : 256, reps = argc > 4 ? atoi(argv[4]) : 15;
    if (argc < 2 || bytes < 1 || bytes > (1L << 30) || calls < 1 || reps < 1 || reps > MAX_REPS) {
        if (rank == 0)
            fprintf(stderr, "usage: smallcalls DIR [BYTES 1..2^30] [CALLS >= 1] [REPS 1..%d]\n",
                    MAX_REPS);
        MPI_Finalize();
        return 2;
    }
    long pid = (long)getpid(); /* rank 0's names the file */
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    char path[1024];
    snprintf(path, sizeof path, "%s/smallcalls.%ld.dat", argv[1], pid);
    char *buf = malloc((size_t)bytes);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, rank + 1, (size_t)bytes);
    static double write_took[MAX_REPS], read_took[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        MPI_File fh;
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh);
        double t[4];
        MPI_Barrier(MPI_COMM_WORLD);
        t[0] = MPI_Wtime();
        for (int i = 0; i < calls; i++)
            rc |= MPI_File_write_at_all(fh, ((MPI_Offset)i * nprocs + rank) * bytes, buf,
                                        (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        t[1] = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        t[2] = MPI_Wtime();
        for (int i = 0; i < calls; i++)
            rc |= MPI_File_read_at_all(fh, ((MPI_Offset)i * nprocs + rank) * bytes, buf,
                                       (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        t[3] = MPI_Wtime();
        rc |= MPI_File_close(&fh);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "smallcalls: rank %d: an MPI-IO call failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double mine[2] = {t[1] - t[0], t[3] - t[2]}, slowest[2];
        MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        write_took[r] = slowest[0] / calls;
        read_took[r] = slowest[1] / calls;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL);
    }
    if (rank == 0) {
        printf("smallcalls: %d ranks, %d calls of %ld bytes each, %d repetitions, median us per "
               "call: write_at_all %.2f read_at_all %.2f\n",
               nprocs, calls, bytes, reps, median_of(write_took, reps) * 1e6,
               median_of(read_took, reps) * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
