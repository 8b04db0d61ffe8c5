/*
 * Basic semantics of the open file, checked against plain POSIX reads of the file:
 * contiguous and strided writes/reads, statuses (including a read past end of file, the
 * case MPICH's rd_end test checks), pointers, seek, sizes, amode flags, shared and ordered
 * access, nonblocking and split collective forms.
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include "helpers.h"

static char path[512];
static int rank, nprocs;

static void posix_read(const char *p, void *buf, size_t len, off_t off, ssize_t *got)
{
    int fd = open(p, O_RDONLY);
    CHECK(fd >= 0, "open %s", p);
    *got = pread(fd, buf, len, off);
    close(fd);
}

static void test_contiguous(void)
{
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    enum { N = 1000 };
    int data[N], back[N];
    for (int i = 0; i < N; i++)
        data[i] = rank * 100000 + i;
    MPI_Status st;
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), data, N, MPI_INT, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "write count %d", count);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Offset size;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset)nprocs * N * (MPI_Offset)sizeof(int), "size %lld", (long long)size);
    int peer = (rank + 1) % nprocs;
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)peer * N * sizeof(int), back, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        CHECK(back[i] == peer * 100000 + i, "read back[%d]=%d", i, back[i]);
    /* POSIX sees the same bytes. */
    ssize_t got;
    posix_read(path, back, sizeof back, (off_t)peer * N * sizeof(int), &got);
    CHECK(got == (ssize_t)sizeof back, "posix read %zd", got);
    for (int i = 0; i < N; i++)
        CHECK(back[i] == peer * 100000 + i, "posix back[%d]", i);

    /* Read past the end of file: the bytes that exist, and a count that says so. */
    MPI_Offset tail = size - 10 * (MPI_Offset)sizeof(int);
    CHECK_MPI(MPI_File_read_at(fh, tail, back, 25, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 10, "read past EOF gave count %d, want 10", count);
    CHECK_MPI(MPI_File_read_at(fh, size + 100, back, 5, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "read beyond EOF gave count %d", count);
    /* A partial element: MPI_Get_count is MPI_UNDEFINED, MPI_Get_elements counts bytes. */
    CHECK_MPI(MPI_File_read_at(fh, size - 6, back, 2, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == MPI_UNDEFINED, "partial element count %d", count);
    MPI_Count bytes = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    CHECK(bytes == 6, "partial bytes %lld", (long long)bytes);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close sets MPI_FILE_NULL");
}

static void test_pointers_and_views(void)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* Each rank owns every nprocs-th block of 4 doubles: a vector filetype. */
    MPI_Datatype filetype;
    MPI_Type_vector(1, 4, 4 * nprocs, MPI_DOUBLE, &filetype);
    MPI_Datatype tiled;
    MPI_Type_create_resized(filetype, 0, 4 * nprocs * (MPI_Aint)sizeof(double), &tiled);
    MPI_Type_commit(&tiled);
    MPI_Type_free(&filetype);
    CHECK_MPI(MPI_File_set_view(fh, rank * 4 * (MPI_Offset)sizeof(double), MPI_DOUBLE, tiled, "native", MPI_INFO_NULL));
    MPI_Type_free(&tiled); /* the view keeps its own reference */
    enum { N = 40 };
    double data[N];
    for (int i = 0; i < N; i++)
        data[i] = rank * 1000 + i;
    MPI_Status st;
    CHECK_MPI(MPI_File_write(fh, data, N / 2, MPI_DOUBLE, &st));
    MPI_Offset pos;
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == N / 2, "position %lld", (long long)pos);
    CHECK_MPI(MPI_File_write_all(fh, data + N / 2, N / 2, MPI_DOUBLE, &st));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == N, "position after write_all %lld", (long long)pos);
    MPI_Offset byte;
    CHECK_MPI(MPI_File_get_byte_offset(fh, 5, &byte));
    CHECK(byte == (MPI_Offset)(4 * nprocs + rank * 4 + 1) * 8, "byte offset %lld", (long long)byte);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* The file, read by POSIX, interleaves the ranks' blocks. */
    double all[N * 8];
    ssize_t got;
    posix_read(path, all, sizeof(double) * N * nprocs, 0, &got);
    CHECK(got == (ssize_t)(sizeof(double) * N * nprocs), "posix got %zd", got);
    for (int i = 0; i < N * nprocs; i++) {
        int owner = (i / 4) % nprocs, index = (i / (4 * nprocs)) * 4 + i % 4;
        CHECK(all[i] == owner * 1000 + index, "file double %d = %g", i, all[i]);
    }
    /* Seek and read back through the view. */
    CHECK_MPI(MPI_File_seek(fh, 3, MPI_SEEK_SET));
    double back[4];
    CHECK_MPI(MPI_File_read(fh, back, 4, MPI_DOUBLE, &st));
    for (int i = 0; i < 4; i++)
        CHECK(back[i] == rank * 1000 + 3 + i, "seek read %g", back[i]);
    /* Reading past the end of file through a strided view: the elements that exist, with data
     * sieving (a covering read) and with list I/O, and nothing beyond them is touched. */
    for (int ds = 0; ds < 2; ds++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_ds_read", ds ? "enable" : "disable");
        CHECK_MPI(MPI_File_set_info(fh, info));
        MPI_Info_free(&info);
        double tail[8];
        for (int i = 0; i < 8; i++)
            tail[i] = -7;
        CHECK_MPI(MPI_File_read_at(fh, N - 2, tail, 8, MPI_DOUBLE, &st));
        int got = -1;
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        CHECK(got == 2, "read past EOF through a view (sieving %d): count %d, want 2", ds, got);
        CHECK(tail[0] == rank * 1000 + N - 2 && tail[1] == rank * 1000 + N - 1 && tail[2] == -7,
              "read past EOF through a view (sieving %d): %g %g %g", ds, tail[0], tail[1], tail[2]);
        /* The same through the collective engine (aggregation forced): what exists, no more. */
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_cb_read", "enable");
        MPI_Info_set(info, "cb_buffer_size", "4096");
        CHECK_MPI(MPI_File_set_info(fh, info));
        MPI_Info_free(&info);
        for (int i = 0; i < 8; i++)
            tail[i] = -7;
        CHECK_MPI(MPI_File_read_at_all(fh, N - 2, tail, 8, MPI_DOUBLE, &st));
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        CHECK(got == 2 && tail[0] == rank * 1000 + N - 2 && tail[1] == rank * 1000 + N - 1 &&
              tail[2] == -7, "collective read past EOF: count %d, %g %g %g", got, tail[0], tail[1],
              tail[2]);
        double span[12];
        CHECK_MPI(MPI_File_read_at(fh, 4, span, 12, MPI_DOUBLE, &st));
        for (int i = 0; i < 12; i++)
            CHECK(span[i] == rank * 1000 + 4 + i, "strided read (sieving %d) [%d] = %g", ds, i, span[i]);
    }
    CHECK_MPI(MPI_File_seek(fh, -2, MPI_SEEK_CUR));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == 5, "seek cur %lld", (long long)pos);
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == N, "seek end %lld", (long long)pos);
    /* get_view returns our types; derived ones are the caller's to free. */
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == rank * 32 && et == MPI_DOUBLE && strcmp(rep, "native") == 0, "get_view");
    MPI_Count ftsize;
    MPI_Type_size_x(ft, &ftsize);
    CHECK(ftsize == 32, "filetype size %lld", (long long)ftsize);
    MPI_Type_free(&ft);
    CHECK_MPI(MPI_File_close(&fh));
}

static void test_shared_ordered_nonblocking(void)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    int mine[3] = {rank, rank, rank};
    MPI_Status st;
    /* Ordered: rank r writes r+1 ints after the ranks before it. */
    CHECK_MPI(MPI_File_write_ordered(fh, mine, rank % 3 + 1, MPI_INT, &st));
    MPI_Offset shared;
    CHECK_MPI(MPI_File_get_position_shared(fh, &shared));
    MPI_Offset expect = 0;
    for (int r = 0; r < nprocs; r++)
        expect += (r % 3 + 1) * 4;
    CHECK(shared == expect, "shared pointer %lld, want %lld", (long long)shared, (long long)expect);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Shared (independent) writes each claim a distinct slot. */
    int word = 7000 + rank;
    CHECK_MPI(MPI_File_write_shared(fh, &word, 1, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_get_position_shared(fh, &shared));
    CHECK(shared == expect + 4 * nprocs, "shared after write_shared %lld", (long long)shared);
    int seen[64] = {0};
    int values[64];
    CHECK_MPI(MPI_File_read_at(fh, expect, values, nprocs * 4, MPI_BYTE, &st));
    for (int r = 0; r < nprocs; r++) {
        CHECK(values[r] >= 7000 && values[r] < 7000 + nprocs, "shared slot %d = %d", r, values[r]);
        seen[values[r] - 7000]++;
    }
    for (int r = 0; r < nprocs; r++)
        CHECK(seen[r] == 1, "rank %d wrote %d shared slots", r, seen[r]);
    /* Ordered read gives each rank its own data back. */
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int back[3] = {-1, -1, -1};
    CHECK_MPI(MPI_File_read_ordered(fh, back, rank % 3 + 1, MPI_INT, &st));
    for (int i = 0; i < rank % 3 + 1; i++)
        CHECK(back[i] == rank, "ordered read %d", back[i]);

    /* Nonblocking and split collective forms. */
    MPI_Request req;
    double d = rank + 0.5, e = -1;
    MPI_Offset at = 4096 + 8 * rank;
    CHECK_MPI(MPI_File_iwrite_at(fh, at, &d, 1, MPI_DOUBLE, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    int count;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 1, "iwrite_at count %d", count);
    CHECK_MPI(MPI_File_iread_at_all(fh, at, &e, 1, MPI_DOUBLE, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK(e == d, "iread_at_all %g", e);
    e = -1;
    CHECK_MPI(MPI_File_read_at_all_begin(fh, at, &e, 1, MPI_DOUBLE));
    CHECK_MPI(MPI_File_read_at_all_end(fh, &e, &st));
    CHECK(e == d, "split read %g", e);
    CHECK_MPI_CLASS(MPI_File_read_all_end(fh, &e, &st), MPI_ERR_OTHER);
    CHECK_MPI(MPI_File_close(&fh));
    /* DELETE_ON_CLOSE removed it. */
    struct stat sb;
    CHECK(stat(path, &sb) != 0, "file still exists after DELETE_ON_CLOSE close");
}

static void test_amodes(void)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    /* EXCL on an existing file fails on every rank. */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    if (rank == 0) {
        char bytes[100] = {0};
        CHECK_MPI(MPI_File_write_at(fh, 0, bytes, 100, MPI_CHAR, MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                                  MPI_INFO_NULL, &fh), MPI_ERR_FILE_EXISTS);
    /* APPEND starts the pointers at the end. */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_APPEND | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Offset pos, shared;
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK_MPI(MPI_File_get_position_shared(fh, &shared));
    CHECK(pos == 100 && shared == 100, "append positions %lld %lld", (long long)pos, (long long)shared);
    int amode;
    CHECK_MPI(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_APPEND | MPI_MODE_RDWR), "amode 0x%x", amode);
    /* set_size / preallocate. */
    CHECK_MPI(MPI_File_set_size(fh, 50));
    MPI_Offset size;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == 50, "set_size %lld", (long long)size);
    CHECK_MPI(MPI_File_preallocate(fh, 8192));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == 8192, "preallocate %lld", (long long)size);
    MPI_Group group;
    CHECK_MPI(MPI_File_get_group(fh, &group));
    int gsize;
    MPI_Group_size(group, &gsize);
    CHECK(gsize == nprocs, "group size %d", gsize);
    MPI_Group_free(&group);
    int flag = 1;
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity");
    MPI_Aint extent;
    CHECK_MPI(MPI_File_get_type_extent(fh, MPI_DOUBLE, &extent));
    CHECK(extent == 8, "type extent %ld", (long)extent);
    /* Fortran handles round-trip. */
    MPI_Fint fint = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(fint) == fh, "c2f/f2c");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "null handles");
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    test_path(path, sizeof path, "basic");
    test_contiguous();
    test_pointers_and_views();
    test_shared_ordered_nonblocking();
    test_amodes();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("basic: all checks passed on %d ranks\n", nprocs);
    MPI_Finalize();
    return 0;
}
