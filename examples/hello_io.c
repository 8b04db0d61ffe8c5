/*
 * An ordinary MPI-IO program that knows nothing of weft: each rank writes its block of a
 * shared file collectively through a strided view, reads its neighbour's block back and
 * checks it.  Built against plain MPI; run it with LD_PRELOAD=libweft.so (and WEFT_STATS=1)
 * to see weft do the I/O.
 *
 * Usage: hello_io FILE [MIB_PER_RANK]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *path = argc > 1 ? argv[1] : "hello_io.dat";
    long mib = argc > 2 ? atol(argv[2]) : 4;
    const int block = 4096; /* ints per block: ranks' blocks interleave in the file */
    long blocks = mib * 1024 * 1024 / ((long)block * 4);
    long n = blocks * block;
    int *data = malloc(sizeof(int) * (size_t)n), *back = malloc(sizeof(int) * (size_t)n);
    for (long i = 0; i < n; i++)
        data[i] = (int)(rank * 1000003L + i);

    MPI_Datatype strided, tiled;
    MPI_Type_vector((int)blocks, block, block * nprocs, MPI_INT, &strided);
    MPI_Type_create_resized(strided, 0, (MPI_Aint)blocks * block * nprocs * 4, &tiled);
    MPI_Type_commit(&tiled);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "open failed: %s\n", msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double t0 = MPI_Wtime();
    MPI_File_set_view(fh, (MPI_Offset)rank * block * 4, MPI_INT, tiled, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, data, (int)n, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    double t1 = MPI_Wtime();
    int peer = (rank + 1) % nprocs;
    MPI_File_set_view(fh, (MPI_Offset)peer * block * 4, MPI_INT, tiled, "native", MPI_INFO_NULL);
    MPI_Status st;
    MPI_File_read_all(fh, back, (int)n, MPI_INT, &st);
    double t2 = MPI_Wtime();
    int count = 0;
    MPI_Get_count(&st, MPI_INT, &count);
    long bad = count == n ? 0 : 1;
    for (long i = 0; i < n && !bad; i++)
        if (back[i] != (int)(peer * 1000003L + i))
            bad = i + 1;
    long any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_File_close(&fh);
    if (rank == 0) {
        double mb = (double)n * 4 * nprocs / 1e6;
        printf("hello_io: %d ranks wrote %.1f MB through a strided view (%.0f MB/s), read it back "
               "(%.0f MB/s): %s\n", nprocs, mb, mb / (t1 - t0), mb / (t2 - t1),
               any_bad ? "VERIFICATION FAILED" : "verified");
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Type_free(&strided);
    MPI_Type_free(&tiled);
    free(data);
    free(back);
    MPI_Finalize();
    return any_bad ? 1 : 0;
}
