/*
 * Nonblocking collectives are nonblocking: starting one is local, and weft progresses it while
 * the program does other MPI work.  Every mode writes through a view that interleaves the ranks
 * in 16-byte pieces (aggregation forced), so the call needs every rank's data; the files are
 * checked with POSIX reads against a model, and against the blocking MPI_File_write_all of the
 * same data.
 *
 *   deadlock         rank 0 starts iwrite_at_all, then MPI_Recv from rank 1; rank 1 MPI_Ssends
 *                    to rank 0 and only then starts its own (the legal program)
 *   deadlock-mirror  the same with ranks 0 and 1 swapped
 *   deadlock-ssend   rank 0 starts, then MPI_Ssends to rank 1, which receives before starting
 *   ring             every rank starts iwrite_all, then a ring of MPI_Ssend/MPI_Recv that can
 *                    only finish if every rank returned from its start; then iread_all the same
 *   waitall          calls pending at once on two files (writes, then a read of the first
 *                    write: it must see it) mixed with point-to-point requests, completed by
 *                    MPI_Waitall; then by Testall, Testany, Testsome, Waitany, Waitsome and
 *                    Request_get_status loops; statuses give the count of the call
 *   blocking-after   a blocking write_at_all and read_at_all on the file while an iwrite_at_all
 *                    is pending: they complete it first, so the read sees it
 *   set-view         iwrite_all, MPI_File_set_view to the next region, iwrite_all, then
 *                    MPI_Waitall (MPICH's test/mpi/io/i_hindexed does this): each write lands
 *                    through the view it was started with.  The standard calls set_view with
 *                    requests pending erroneous; weft completes them first, as ROMIO's result
 *                    shows programs expect
 *
 * The deadlock modes hang through an MPI-IO whose starts are not local (weft before issue 17)
 * and pass through MPICH's ROMIO (WEFT_PASSTHROUGH=1).  waitall's in-order read and
 * blocking-after assert weft's own rule that calls on a file complete in start order, stricter
 * than the standard (which promises nothing of a pending write until it completes): ROMIO
 * fails them.
 *
 * Usage: nbc_progress MODE [multiple]   (multiple: MPI_Init_thread(MPI_THREAD_MULTIPLE))
 * Exit 0 pass, 1 fail (the first differing byte is named).  Seeded data; no timing.
 */
#include <fcntl.h>

#include "helpers.h"

enum { PIECE = 16, PIECES = 2048, BYTES = PIECE * PIECES };

static int rank, nprocs;
static MPI_Info info;
static MPI_Datatype filetype;

static unsigned char byte_of(int tag, int r, long i)
{
    return (unsigned char)(tag * 61 + r * 37 + i * 13 + (i >> 9) + 1);
}

static void fill(unsigned char *buf, int tag)
{
    for (long i = 0; i < BYTES; i++)
        buf[i] = byte_of(tag, rank, i);
}

/* File offset of view byte `p` of rank r (pieces of the ranks interleaved). */
static MPI_Offset offset_of(int r, MPI_Offset p)
{
    return (p / PIECE) * PIECE * nprocs + (MPI_Offset)r * PIECE + p % PIECE;
}

static MPI_File open_file(const char *tag, char *path, size_t size)
{
    MPI_File fh;
    test_path(path, size, tag);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_MPI(MPI_File_set_size(fh, 0));
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * PIECE, MPI_BYTE, filetype, "native", info));
    return fh;
}

/* After close: regions [k] of BYTES view bytes at view position k * BYTES hold tag[k] data of
 * every rank, nothing else is in the file.  Rank 0 checks with pread. */
static void check_file(const char *path, int regions, const int *tags)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        size_t size = (size_t)regions * BYTES * nprocs;
        unsigned char *model = malloc(size), *data = malloc(size + 1);
        for (int k = 0; k < regions; k++)
            for (int r = 0; r < nprocs; r++)
                for (long i = 0; i < BYTES; i++)
                    model[offset_of(r, (MPI_Offset)k * BYTES + i)] = byte_of(tags[k], r, i);
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0, "open %s", path);
        ssize_t got = pread(fd, data, size + 1, 0);
        CHECK(got == (ssize_t)size, "%s: %zd bytes, expected %zu", path, got, size);
        for (size_t at = 0; at < size; at++)
            CHECK(data[at] == model[at], "%s: byte %zu is %u, expected %u", path, at, data[at],
                  model[at]);
        close(fd);
        free(model);
        free(data);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_count(MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(count == BYTES, "%s: count %d, expected %d", what, count, BYTES);
}

/* The blocking path's file for the same data: the nonblocking one must equal it. */
static void compare_with_blocking(const char *path, int tag)
{
    char blocking[512];
    unsigned char *buf = malloc(BYTES);
    fill(buf, tag);
    MPI_File fh = open_file("nbc-blocking", blocking, sizeof blocking);
    CHECK_MPI(MPI_File_write_all(fh, buf, BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        size_t size = (size_t)BYTES * nprocs;
        unsigned char *a = malloc(size), *b = malloc(size);
        int fa = open(path, O_RDONLY), fb = open(blocking, O_RDONLY);
        CHECK(fa >= 0 && fb >= 0, "open");
        CHECK(pread(fa, a, size, 0) == (ssize_t)size && pread(fb, b, size, 0) == (ssize_t)size,
              "sizes");
        CHECK(memcmp(a, b, size) == 0, "the nonblocking file differs from the blocking one");
        close(fa);
        close(fb);
        unlink(blocking);
        free(a);
        free(b);
    }
    free(buf);
}

static void mode_deadlock(int mode)
{
    char path[512];
    unsigned char *buf = malloc(BYTES);
    fill(buf, 1);
    MPI_File fh = open_file("nbc-deadlock", path, sizeof path);
    MPI_Request request;
    MPI_Status st;
    int token = 42;
    /* mode 0: the starter receives; 1: the same, ranks swapped; 2: the starter ssends */
    int starter = mode == 1 ? 1 : 0, other = 1 - starter;
    if (nprocs < 2 || (rank != starter && rank != other)) {
        CHECK_MPI(MPI_File_iwrite_at_all(fh, 0, buf, BYTES, MPI_BYTE, &request));
    } else if (rank == starter) {
        CHECK_MPI(MPI_File_iwrite_at_all(fh, 0, buf, BYTES, MPI_BYTE, &request));
        if (mode == 2)
            CHECK_MPI(MPI_Ssend(&token, 1, MPI_INT, other, 7, MPI_COMM_WORLD));
        else
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        if (mode == 2)
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, starter, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        else
            CHECK_MPI(MPI_Ssend(&token, 1, MPI_INT, starter, 7, MPI_COMM_WORLD));
        CHECK_MPI(MPI_File_iwrite_at_all(fh, 0, buf, BYTES, MPI_BYTE, &request));
    }
    CHECK_MPI(MPI_Wait(&request, &st));
    check_count(&st, "iwrite_at_all");
    CHECK(token == 42, "token %d", token);
    CHECK_MPI(MPI_File_close(&fh));
    int tags[] = {1};
    check_file(path, 1, tags);
    compare_with_blocking(path, 1);
    if (rank == 0)
        unlink(path);
    free(buf);
}

/* A ring of synchronous sends that completes only if every rank is in it. */
static void ring(void)
{
    if (nprocs < 2)
        return;
    int out = rank, in = -1, next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
    if (rank % 2 == 0) {
        CHECK_MPI(MPI_Ssend(&out, 1, MPI_INT, next, 9, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Ssend(&out, 1, MPI_INT, next, 9, MPI_COMM_WORLD));
    }
    CHECK(in == prev, "ring: got %d from %d", in, prev);
}

static void mode_ring(void)
{
    char path[512];
    unsigned char *buf = malloc(BYTES), *back = malloc(BYTES);
    fill(buf, 2);
    MPI_File fh = open_file("nbc-ring", path, sizeof path);
    MPI_Request request;
    MPI_Status st;
    CHECK_MPI(MPI_File_iwrite_all(fh, buf, BYTES, MPI_BYTE, &request));
    ring();
    CHECK_MPI(MPI_Wait(&request, &st));
    check_count(&st, "iwrite_all");
    MPI_Offset position = -1;
    CHECK_MPI(MPI_File_get_position(fh, &position));
    CHECK(position == BYTES, "individual pointer %lld after iwrite_all", (long long)position);
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, 0, BYTES);
    CHECK_MPI(MPI_File_iread_all(fh, back, BYTES, MPI_BYTE, &request));
    ring();
    CHECK_MPI(MPI_Wait(&request, &st));
    check_count(&st, "iread_all");
    CHECK(memcmp(back, buf, BYTES) == 0, "iread_all read other bytes than were written");
    CHECK_MPI(MPI_File_close(&fh));
    int tags[] = {2};
    check_file(path, 1, tags);
    compare_with_blocking(path, 2);
    if (rank == 0)
        unlink(path);
    free(buf);
    free(back);
}

enum { N_FILE_CALLS = 4, N_REQUESTS = N_FILE_CALLS + 2 };

/* Calls pending at once: on file a, writes of regions 0 and 1 and a read of region 0; on file
 * b, a write of region 0; plus an Isend/Irecv pair around the ring. */
static void start_all(MPI_File a, MPI_File b, unsigned char **bufs, unsigned char *back,
                      MPI_Request *requests, int *out, int *in)
{
    CHECK_MPI(MPI_File_iwrite_at_all(a, 0, bufs[0], BYTES, MPI_BYTE, &requests[0]));
    CHECK_MPI(MPI_File_iwrite_at_all(a, BYTES, bufs[1], BYTES, MPI_BYTE, &requests[1]));
    CHECK_MPI(MPI_File_iread_at_all(a, 0, back, BYTES, MPI_BYTE, &requests[2]));
    CHECK_MPI(MPI_File_iwrite_at_all(b, 0, bufs[2], BYTES, MPI_BYTE, &requests[3]));
    int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
    *out = rank;
    *in = -1;
    CHECK_MPI(MPI_Irecv(in, 1, MPI_INT, prev, 11, MPI_COMM_WORLD, &requests[4]));
    CHECK_MPI(MPI_Isend(out, 1, MPI_INT, next, 11, MPI_COMM_WORLD, &requests[5]));
}

static void check_round(unsigned char **bufs, unsigned char *back, MPI_Status *statuses,
                        int in, const char *how)
{
    for (int k = 0; k < N_FILE_CALLS; k++)
        check_count(&statuses[k], how);
    CHECK(memcmp(back, bufs[0], BYTES) == 0, "%s: the read did not see the write before it", how);
    CHECK(in == (rank + nprocs - 1) % nprocs, "%s: message %d", how, in);
}

/* Complete every request by one of the completion functions; statuses by request index. */
static void complete_by(int how, MPI_Request *requests, MPI_Status *statuses)
{
    int left = N_REQUESTS, flag, index, count, indices[N_REQUESTS];
    MPI_Status some[N_REQUESTS];
    switch (how) {
    case 0:
        CHECK_MPI(MPI_Waitall(N_REQUESTS, requests, statuses));
        return;
    case 1:
        for (flag = 0; !flag;)
            CHECK_MPI(MPI_Testall(N_REQUESTS, requests, &flag, statuses));
        return;
    case 2:
        while (left > 0) {
            CHECK_MPI(MPI_Testany(N_REQUESTS, requests, &index, &flag, &some[0]));
            if (flag && index != MPI_UNDEFINED) {
                statuses[index] = some[0];
                left--;
            }
        }
        return;
    case 3:
        while (left > 0) {
            CHECK_MPI(MPI_Testsome(N_REQUESTS, requests, &count, indices, some));
            for (int k = 0; count != MPI_UNDEFINED && k < count; k++, left--)
                statuses[indices[k]] = some[k];
        }
        return;
    case 4:
        for (; left > 0; left--) {
            CHECK_MPI(MPI_Waitany(N_REQUESTS, requests, &index, &some[0]));
            statuses[index] = some[0];
        }
        return;
    case 5:
        while (left > 0) {
            CHECK_MPI(MPI_Waitsome(N_REQUESTS, requests, &count, indices, some));
            for (int k = 0; k < count; k++, left--)
                statuses[indices[k]] = some[k];
        }
        return;
    default:
        for (int k = 0; k < N_REQUESTS; k++) {
            for (flag = 0; !flag;)
                CHECK_MPI(MPI_Request_get_status(requests[k], &flag, &statuses[k]));
            CHECK_MPI(MPI_Wait(&requests[k], &some[0]));
            if (k < N_FILE_CALLS)
                statuses[k] = some[0];
        }
        return;
    }
}

static void mode_waitall(void)
{
    static const char *const how[] = {"Waitall", "Testall", "Testany", "Testsome", "Waitany",
                                      "Waitsome", "Request_get_status"};
    char path_a[512], path_b[512];
    unsigned char *bufs[3], *back = malloc(BYTES);
    for (int k = 0; k < 3; k++) {
        bufs[k] = malloc(BYTES);
        fill(bufs[k], 3 + k);
    }
    MPI_File a = open_file("nbc-waitall-a", path_a, sizeof path_a);
    MPI_File b = open_file("nbc-waitall-b", path_b, sizeof path_b);
    for (int round = 0; round < (int)(sizeof how / sizeof how[0]); round++) {
        MPI_Request requests[N_REQUESTS];
        MPI_Status statuses[N_REQUESTS];
        int out, in;
        memset(back, 0, BYTES);
        start_all(a, b, bufs, back, requests, &out, &in);
        complete_by(round, requests, statuses);
        for (int k = 0; k < N_REQUESTS; k++)
            CHECK(requests[k] == MPI_REQUEST_NULL, "%s: request %d not freed", how[round], k);
        check_round(bufs, back, statuses, in, how[round]);
    }
    CHECK_MPI(MPI_File_close(&a));
    CHECK_MPI(MPI_File_close(&b));
    int tags_a[] = {3, 4}, tags_b[] = {5};
    check_file(path_a, 2, tags_a);
    check_file(path_b, 1, tags_b);
    if (rank == 0) {
        unlink(path_a);
        unlink(path_b);
    }
    for (int k = 0; k < 3; k++)
        free(bufs[k]);
    free(back);
}

static void mode_blocking_after(void)
{
    char path[512];
    unsigned char *first = malloc(BYTES), *second = malloc(BYTES), *back = malloc(BYTES);
    fill(first, 6);
    fill(second, 7);
    MPI_File fh = open_file("nbc-blocking-after", path, sizeof path);
    MPI_Request request;
    MPI_Status st;
    CHECK_MPI(MPI_File_iwrite_at_all(fh, 0, first, BYTES, MPI_BYTE, &request));
    CHECK_MPI(MPI_File_write_at_all(fh, BYTES, second, BYTES, MPI_BYTE, &st));
    check_count(&st, "write_at_all");
    CHECK_MPI(MPI_File_read_at_all(fh, 0, back, BYTES, MPI_BYTE, &st));
    for (long i = 0; i < BYTES; i++)
        CHECK(back[i] == first[i], "the blocking read did not see the pending write: byte %ld "
              "is %u, expected %u", i, back[i], first[i]);
    CHECK_MPI(MPI_Wait(&request, &st));
    check_count(&st, "iwrite_at_all");
    CHECK_MPI(MPI_File_close(&fh));
    int tags[] = {6, 7};
    check_file(path, 2, tags);
    if (rank == 0)
        unlink(path);
    free(first);
    free(second);
    free(back);
}

static void mode_set_view(void)
{
    char path[512];
    unsigned char *first = malloc(BYTES), *second = malloc(BYTES);
    fill(first, 8);
    fill(second, 9);
    MPI_File fh = open_file("nbc-set-view", path, sizeof path);
    MPI_Request requests[2];
    MPI_Status st[2];
    CHECK_MPI(MPI_File_iwrite_all(fh, first, BYTES, MPI_BYTE, &requests[0]));
    /* the second region, through a view displaced to it */
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)BYTES * nprocs + (MPI_Offset)rank * PIECE,
                                MPI_BYTE, filetype, "native", info));
    CHECK_MPI(MPI_File_iwrite_all(fh, second, BYTES, MPI_BYTE, &requests[1]));
    CHECK_MPI(MPI_Waitall(2, requests, st));
    check_count(&st[0], "first iwrite_all");
    check_count(&st[1], "second iwrite_all");
    CHECK_MPI(MPI_File_close(&fh));
    int tags[] = {8, 9};
    check_file(path, 2, tags);
    if (rank == 0)
        unlink(path);
    free(first);
    free(second);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int multiple = argc > 2 && strcmp(argv[2], "multiple") == 0, provided = 0;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    /* Resized to whole rows, so that region k (view bytes from k * BYTES) tiles on. */
    MPI_Datatype vector;
    MPI_Type_vector(PIECES, PIECE, PIECE * nprocs, MPI_BYTE, &vector);
    MPI_Type_create_resized(vector, 0, (MPI_Aint)PIECE * nprocs * PIECES, &filetype);
    MPI_Type_free(&vector);
    MPI_Type_commit(&filetype);
    if (strcmp(mode, "deadlock") == 0)
        mode_deadlock(0);
    else if (strcmp(mode, "deadlock-mirror") == 0)
        mode_deadlock(1);
    else if (strcmp(mode, "deadlock-ssend") == 0)
        mode_deadlock(2);
    else if (strcmp(mode, "ring") == 0)
        mode_ring();
    else if (strcmp(mode, "waitall") == 0)
        mode_waitall();
    else if (strcmp(mode, "blocking-after") == 0)
        mode_blocking_after();
    else if (strcmp(mode, "set-view") == 0)
        mode_set_view();
    else
        CHECK(0, "unknown mode \"%s\"", mode);
    if (rank == 0)
        printf("nbc_progress: %s, %d ranks%s: passed\n", mode, nprocs,
               multiple ? (provided == MPI_THREAD_MULTIPLE ? ", MPI_THREAD_MULTIPLE" : ", multiple refused")
                        : "");
    MPI_Type_free(&filetype);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
