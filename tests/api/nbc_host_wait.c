/*
 * A nonblocking collective completed through the host's own PMPI_Wait/PMPI_Test, bypassing
 * weft's MPI_Wait (as a PMPI tool interposed ahead of weft, or the host's Fortran bindings,
 * do).  Under MPICH weft's requests are extended generalized requests whose poll function
 * progresses weft; under MPI_THREAD_MULTIPLE weft's progress thread does.  Anything else
 * cannot complete this way (docs/ARCHITECTURE.md): skipped.  The bytes are checked with
 * POSIX reads.  Usage: nbc_host_wait [multiple]
 */
#include <fcntl.h>

#include "helpers.h"

enum { PIECE = 16, PIECES = 4096 };

int main(int argc, char **argv)
{
    int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0, provided = MPI_THREAD_SINGLE;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
#ifndef MPICH_VERSION
    if (provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("nbc_host_wait: skipped (needs MPICH or MPI_THREAD_MULTIPLE)\n");
        MPI_Finalize();
        return TEST_SKIP;
    }
#endif
    char path[512];
    const char *dir = getenv("WEFT_TEST_DIR");
    snprintf(path, sizeof path, "%s/weft-test-nbc-host-wait-%s.dat", dir ? dir : "/tmp",
             multiple ? "mt" : "st");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_MPI(MPI_File_set_size(fh, 0));
    /* Pieces of every rank interleaved: the collective needs every rank's data. */
    MPI_Datatype filetype;
    MPI_Type_vector(PIECES, PIECE, PIECE * nprocs, MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * PIECE, MPI_BYTE, filetype, "native", info));
    unsigned char *buf = malloc(PIECE * PIECES);
    for (int i = 0; i < PIECE * PIECES; i++)
        buf[i] = (unsigned char)(rank * 37 + i * 11 + 1);
    MPI_Request request;
    MPI_Status status;
    CHECK_MPI(MPI_File_iwrite_all(fh, buf, PIECE * PIECES, MPI_BYTE, &request));
    int flag = 0;
    CHECK_MPI(PMPI_Test(&request, &flag, &status)); /* the host's, not weft's */
    if (!flag)
        CHECK_MPI(PMPI_Wait(&request, &status));
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(count == PIECE * PIECES, "count %d", count);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0, "open %s", path);
        size_t size = (size_t)PIECE * PIECES * nprocs;
        unsigned char *file = malloc(size);
        CHECK(pread(fd, file, size, 0) == (ssize_t)size, "file size");
        for (size_t at = 0; at < size; at++) {
            int r = (int)((at / PIECE) % nprocs);
            size_t i = (at / (PIECE * (size_t)nprocs)) * PIECE + at % PIECE;
            unsigned char want = (unsigned char)(r * 37 + i * 11 + 1);
            CHECK(file[at] == want, "byte %zu: %u, expected %u", at, file[at], want);
        }
        close(fd);
        unlink(path);
        free(file);
        printf("nbc_host_wait: %d ranks, %s: completed through the host's PMPI_Wait\n", nprocs,
               multiple ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_SINGLE");
    }
    MPI_Type_free(&filetype);
    MPI_Info_free(&info);
    free(buf);
    MPI_Finalize();
    return 0;
}
