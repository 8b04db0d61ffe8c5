/*
 * The collective engine over an aggregator domain larger than 2 GiB, at offsets beyond 4 GiB
 * (issue: "aggregator domains larger than 2 GiB: all work").  Every rank writes PIECES pieces
 * of PIECE bytes, piece k of rank r at k * SPACING + r * PIECE (so the ranks' pieces interleave
 * and aggregation runs), through an hindexed file view, with write_all; then read_at_all back.
 * The file is sparse: about PIECES * SPACING bytes long, a few hundred KiB of data.
 *
 * Checked against plain POSIX: pread of every piece on rank 0 (each rank's bytes where the
 * view says), the holes between pieces read as zeros, the file size; and read_at_all returns what
 * was written.  Run it with cb_nodes=1 (one aggregator: its domain is the whole ~4.5 GiB range)
 * and with the defaults (every rank aggregates a domain of ~4.5/P GiB).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "helpers.h"

enum { PIECES = 8, PIECE = 4096 };
static const MPI_Offset SPACING = (MPI_Offset)640 << 20; /* 7 * 640 MiB: past 4 GiB */

static unsigned char byte_of(int rank, int piece, int i)
{
    return (unsigned char)(rank * 131 + piece * 17 + i * 7 + 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char path[512];
    test_path(path, sizeof path, "big-domain");

    int lengths[PIECES];
    MPI_Aint displacements[PIECES];
    static unsigned char mine[PIECES * PIECE], back[PIECES * PIECE];
    for (int k = 0; k < PIECES; k++) {
        lengths[k] = PIECE;
        displacements[k] = (MPI_Aint)(k * SPACING + (MPI_Offset)rank * PIECE);
        for (int i = 0; i < PIECE; i++)
            mine[k * PIECE + i] = byte_of(rank, k, i);
    }
    MPI_Datatype filetype;
    CHECK_MPI(MPI_Type_create_hindexed(PIECES, lengths, displacements, MPI_BYTE, &filetype));
    CHECK_MPI(MPI_Type_commit(&filetype));

    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, filetype, "native", MPI_INFO_NULL));
    MPI_Status status;
    CHECK_MPI(MPI_File_write_all(fh, mine, PIECES * PIECE, MPI_BYTE, &status));
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(count == PIECES * PIECE, "write_all moved %d bytes", count);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0, "open %s", path);
        struct stat st;
        CHECK(fstat(fd, &st) == 0, "fstat");
        MPI_Offset want = (PIECES - 1) * SPACING + (MPI_Offset)nprocs * PIECE;
        CHECK((MPI_Offset)st.st_size == want, "file size %lld, expected %lld",
              (long long)st.st_size, (long long)want);
        static unsigned char got[PIECE];
        for (int r = 0; r < nprocs; r++)
            for (int k = 0; k < PIECES; k++) {
                off_t at = (off_t)(k * SPACING + (MPI_Offset)r * PIECE);
                CHECK(pread(fd, got, PIECE, at) == PIECE, "pread at %lld", (long long)at);
                for (int i = 0; i < PIECE; i++)
                    CHECK(got[i] == byte_of(r, k, i), "rank %d piece %d byte %d at %lld: %u", r,
                          k, i, (long long)at + i, got[i]);
            }
        /* A hole in the middle of the 2 GiB+ domain, and one just after each piece group. */
        for (int k = 0; k + 1 < PIECES; k++) {
            off_t holes[2] = {(off_t)(k * SPACING + (MPI_Offset)nprocs * PIECE),
                              (off_t)(k * SPACING + SPACING / 2)};
            for (int h = 0; h < 2; h++) {
                CHECK(pread(fd, got, PIECE, holes[h]) == PIECE, "pread hole");
                for (int i = 0; i < PIECE; i++)
                    CHECK(got[i] == 0, "hole byte at %lld is %u", (long long)holes[h] + i, got[i]);
            }
        }
        close(fd);
    }

    CHECK_MPI(MPI_File_read_at_all(fh, 0, back, PIECES * PIECE, MPI_BYTE, &status));
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(count == PIECES * PIECE, "read_at_all moved %d bytes", count);
    CHECK(memcmp(back, mine, sizeof mine) == 0, "read_at_all returned other bytes");

    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&filetype);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
        printf("big_domain: %d ranks, %d pieces each over %.1f GiB: identical to POSIX reads\n",
               nprocs, PIECES, (double)((PIECES - 1) * SPACING) / (1 << 30));
    }
    MPI_Finalize();
    return 0;
}
