/*
 * A blocking collective on one file while a nonblocking collective is pending on another: the
 * blocking call is polled along with the pending one (another rank may need that one to move
 * first), so its shuffle runs in the mode that never waits — put-lock's and shm's "drained"
 * barriers as MPI_Ibarrier (shuffle_rma.c, shuffle_shm.c).  Rank 0 waits for the pending call
 * only after the blocking one; the last rank waits for it before, so the blocking call can
 * only finish if rank 0 progresses the pending call inside it.  Both files are checked with
 * POSIX reads.  Usage: nbc_other_file SHUFFLE (isend|put-fence|put-lock|shm)
 */
#include <fcntl.h>

#include "helpers.h"

enum { PIECE = 24, PIECES = 3000 };

static unsigned char byte_of(int file, int rank, size_t i)
{
    return (unsigned char)(file * 101 + rank * 37 + i * 13 + 1);
}

static void check_file(const char *path, int file, int nprocs)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s", path);
    size_t size = (size_t)PIECE * PIECES * nprocs;
    unsigned char *data = malloc(size);
    CHECK(pread(fd, data, size, 0) == (ssize_t)size, "%s: size", path);
    for (size_t at = 0; at < size; at++) {
        int r = (int)((at / PIECE) % nprocs);
        size_t i = (at / (PIECE * (size_t)nprocs)) * PIECE + at % PIECE;
        CHECK(data[at] == byte_of(file, r, i), "%s byte %zu: %u, expected %u", path, at, data[at],
              byte_of(file, r, i));
    }
    free(data);
    close(fd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *shuffle = argc > 1 ? argv[1] : "isend";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "cb_buffer_size", "8192");
    MPI_Info_set(info, "weft_shuffle", shuffle);
    MPI_Datatype filetype;
    MPI_Type_vector(PIECES, PIECE, PIECE * nprocs, MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    char path[2][512];
    MPI_File fh[2];
    unsigned char *buf[2];
    for (int k = 0; k < 2; k++) {
        char tag[64];
        snprintf(tag, sizeof tag, "nbc-other-%s-%d", shuffle, k);
        test_path(path[k], sizeof path[k], tag);
        CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path[k], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh[k]));
        CHECK_MPI(MPI_File_set_size(fh[k], 0));
        CHECK_MPI(MPI_File_set_view(fh[k], (MPI_Offset)rank * PIECE, MPI_BYTE, filetype, "native", info));
        buf[k] = malloc(PIECE * PIECES);
        for (size_t i = 0; i < PIECE * PIECES; i++)
            buf[k][i] = byte_of(k, rank, i);
    }
    MPI_Request request;
    MPI_Status status;
    CHECK_MPI(MPI_File_iwrite_all(fh[0], buf[0], PIECE * PIECES, MPI_BYTE, &request));
    if (rank == nprocs - 1 && nprocs > 1)
        CHECK_MPI(MPI_Wait(&request, &status));
    CHECK_MPI(MPI_File_write_all(fh[1], buf[1], PIECE * PIECES, MPI_BYTE, &status));
    if (!(rank == nprocs - 1 && nprocs > 1))
        CHECK_MPI(MPI_Wait(&request, &status));
    for (int k = 0; k < 2; k++)
        CHECK_MPI(MPI_File_close(&fh[k]));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int k = 0; k < 2; k++) {
            check_file(path[k], k, nprocs);
            unlink(path[k]);
        }
        printf("nbc_other_file: %d ranks, %s: both files right\n", nprocs, shuffle);
    }
    for (int k = 0; k < 2; k++)
        free(buf[k]);
    MPI_Type_free(&filetype);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
