/*
 * One rank fails, every rank learns it, nobody hangs (DESIGN.md §4).  Run with
 * WEFT_TEST_INJECT=ENOSPC@1: every write of world rank 1 fails with ENOSPC (the fault shim in
 * the transfer layer).  Rank 1 is an aggregator (WEFT_VIRTUAL_NODES gives one per rank).
 * Also: one rank passing a bad datatype or count to a collective read.
 */
#include "helpers.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        MPI_Finalize();
        return TEST_SKIP;
    }
    char path[512];
    test_path(path, sizeof path, "faults");
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    enum { N = 8192 };
    static int data[N];
    for (int i = 0; i < N; i++)
        data[i] = rank * N + i;
    /* Interleaved blocks of 64 ints: every aggregator, rank 1 included, gets data. */
    MPI_Datatype block, tiled;
    MPI_Type_vector(N / 64, 64, 64 * nprocs, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)N * nprocs * 4, &tiled);
    MPI_Type_commit(&tiled);
    CHECK_MPI(MPI_File_set_view(fh, rank * 256, MPI_INT, tiled, "native", MPI_INFO_NULL));

    /* Collective write: rank 1's file access fails (ENOSPC), or its cycle buffers cannot be
     * allocated (ENOMEM); every rank must return an error. */
    const char *inject = getenv("WEFT_TEST_INJECT");
    int no_memory = inject && strncmp(inject, "ENOMEM", 6) == 0;
    int expected = no_memory ? MPI_ERR_NO_MEM : MPI_ERR_NO_SPACE;
    int code = MPI_File_write_all(fh, data, N, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_MPI_CLASS(code, expected);
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, text, &len);
    if (rank == 1)
        CHECK(strstr(text, no_memory ? "Cannot allocate" : "No space left") != NULL,
              "rank 1 message: %s", text);
    else
        CHECK(strstr(text, "another rank") != NULL, "message of a rank that did not fail: %s", text);

    /* Independent write: only rank 1 fails (nobody, when only collective buffers fail). */
    code = MPI_File_write_at(fh, 0, data, 16, MPI_INT, MPI_STATUS_IGNORE);
    if (rank == 1 && !no_memory)
        CHECK_MPI_CLASS(code, MPI_ERR_NO_SPACE);
    else
        CHECK_MPI(code);
    if (no_memory) { /* a collective read needs the cycle buffers too */
        code = MPI_File_read_all(fh, data, N, MPI_INT, MPI_STATUS_IGNORE);
        CHECK_MPI_CLASS(code, MPI_ERR_NO_MEM);
    }

    /* A collective read where one rank passes an invalid type or count: all fail. */
    MPI_Datatype bad = rank == nprocs - 1 ? MPI_DATATYPE_NULL : MPI_INT;
    code = MPI_File_read_all(fh, data, 16, bad, MPI_STATUS_IGNORE);
    CHECK(code != MPI_SUCCESS, "read_all with a bad type on one rank succeeded on rank %d", rank);
    if (rank == nprocs - 1)
        CHECK_MPI_CLASS(code, MPI_ERR_TYPE);
    code = MPI_File_read_at_all(fh, 0, data, rank == 0 ? -3 : 16, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(code != MPI_SUCCESS, "read_at_all with a bad count on rank 0 succeeded on rank %d", rank);

    /* Still usable afterwards: a collective read of what exists works. */
    CHECK_MPI(MPI_File_read_at_all(fh, 0, data, 0, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&block);
    MPI_Type_free(&tiled);
    if (rank == 0)
        printf("faults: every rank reported the injected failure on %d ranks\n", nprocs);
    MPI_Finalize();
    return 0;
}
