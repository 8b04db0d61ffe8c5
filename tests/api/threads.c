/*
 * weft under MPI_THREAD_MULTIPLE (MPI-4.0 §14.6.? and §11.6: any thread may call any function;
 * collective calls on one file from several threads at once are erroneous).  Every rank runs
 * THREADS threads at once, each doing, on files shared by the rank's threads:
 *   - write_shared: RECORDS records through the shared file pointer of one file opened by all
 *     ranks;  afterwards every record (rank, thread, sequence, checksum) is found exactly once
 *     (POSIX read of the whole file) and the file is exactly every record long;
 *   - write through the individual file pointer of a second file, opened per rank
 *     (MPI_COMM_SELF) and shared by the rank's threads: every record lands whole, once, the
 *     pointer ends at the total;
 *   - write_at / read_at of disjoint blocks of a third file, read back by the other threads.
 * Then a check that a second thread's collective call on a file while one thread is inside a
 * collective on it is refused with MPI_ERR_OTHER, not crashed on (WEFT_TEST_NO_COLLECTIVE_RACE
 * skips that part when run through the host's MPI-IO, which does not check).
 * Usage: threads [records]   (seeded: the record sizes vary)
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "helpers.h"

enum { THREADS = 4 };

typedef struct {
    uint32_t rank, thread, seq, size; /* size: bytes of the whole record, header included */
    uint64_t check;
} record_head;

static int records = 200;
static uint64_t seed;
static int rank, nprocs;
static MPI_File shared_fh, self_fh, at_fh;
static pthread_barrier_t barrier;

static uint64_t record_check(const record_head *h)
{
    uint64_t x = ((uint64_t)h->rank << 40) ^ ((uint64_t)h->thread << 32) ^ h->seq ^ h->size;
    return x * 0x9e3779b97f4a7c15ull + seed;
}

static size_t record_size(int r, int t, int s)
{
    uint64_t st = seed ^ ((uint64_t)r << 48) ^ ((uint64_t)t << 32) ^ (uint64_t)s;
    return sizeof(record_head) + 8 * test_rand_below(&st, 8); /* 24 to 80 bytes */
}

static void fill_record(unsigned char *buf, int t, int s)
{
    record_head h = {(uint32_t)rank, (uint32_t)t, (uint32_t)s, (uint32_t)record_size(rank, t, s), 0};
    h.check = record_check(&h);
    memcpy(buf, &h, sizeof h);
    for (size_t i = sizeof h; i < h.size; i++)
        buf[i] = (unsigned char)(h.check >> (i % 8 * 8));
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char buf[128];
    for (int s = 0; s < records; s++) {
        fill_record(buf, t, s);
        int size = (int)record_size(rank, t, s);
        MPI_Status st;
        CHECK_MPI(MPI_File_write_shared(shared_fh, buf, size, MPI_BYTE, &st));
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == size, "write_shared count %d of %d", count, size);
        CHECK_MPI(MPI_File_write(self_fh, buf, size, MPI_BYTE, &st));
    }
    /* Disjoint blocks at explicit offsets; then read a neighbour thread's back. */
    enum { BLOCK = 4096 };
    unsigned char block[BLOCK], back[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        block[i] = (unsigned char)(rank * 71 + t * 13 + i);
    MPI_Offset at = ((MPI_Offset)rank * THREADS + t) * BLOCK;
    CHECK_MPI(MPI_File_write_at(at_fh, at, block, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    pthread_barrier_wait(&barrier);
    int u = (t + 1) % THREADS;
    CHECK_MPI(MPI_File_read_at(at_fh, ((MPI_Offset)rank * THREADS + u) * BLOCK, back, BLOCK,
                               MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < BLOCK; i++)
        CHECK(back[i] == (unsigned char)(rank * 71 + u * 13 + i), "thread %d read byte %d of "
              "thread %d's block: %u", t, i, u, back[i]);
    return NULL;
}

static unsigned char *read_whole(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s", path);
    struct stat sb;
    fstat(fd, &sb);
    unsigned char *data = malloc((size_t)sb.st_size + 1);
    ssize_t got = pread(fd, data, (size_t)sb.st_size, 0);
    CHECK(got == sb.st_size, "pread %s", path);
    close(fd);
    *size = (size_t)sb.st_size;
    return data;
}

/* Every record of ranks [r0, r1) exactly once, nothing else. */
static void check_records(const char *path, int r0, int r1)
{
    size_t size, expected = 0;
    for (int r = r0; r < r1; r++)
        for (int t = 0; t < THREADS; t++)
            for (int s = 0; s < records; s++)
                expected += record_size(r, t, s);
    unsigned char *data = read_whole(path, &size);
    CHECK(size == expected, "%s: %zu bytes, every record is %zu (records lost or torn)", path,
          size, expected);
    unsigned char *seen = calloc((size_t)nprocs * THREADS * records, 1);
    size_t n = 0;
    for (size_t at = 0; at < size; n++) {
        record_head h;
        CHECK(size - at >= sizeof h, "%s: torn record at byte %zu", path, at);
        memcpy(&h, data + at, sizeof h);
        CHECK(h.rank >= (uint32_t)r0 && h.rank < (uint32_t)r1 && h.thread < THREADS &&
              h.seq < (uint32_t)records && h.check == record_check(&h) &&
              h.size == record_size((int)h.rank, (int)h.thread, (int)h.seq),
              "%s: no valid record at byte %zu (overwritten or torn)", path, at);
        size_t k = ((size_t)h.rank * THREADS + h.thread) * records + h.seq;
        CHECK(!seen[k], "%s: record rank %u thread %u seq %u twice", path, h.rank, h.thread, h.seq);
        seen[k] = 1;
        for (size_t i = sizeof h; i < h.size; i++)
            CHECK(data[at + i] == (unsigned char)(h.check >> (i % 8 * 8)),
                  "%s: record body byte %zu at %zu", path, i, at);
        at += h.size;
    }
    CHECK(n == (size_t)(r1 - r0) * THREADS * records, "%s: %zu records", path, n);
    free(seen);
    free(data);
}

/* Collective calls on one file from several threads at once are erroneous (MPI-4.0 §11.6.2):
 * weft refuses a call made while another thread is inside one, with MPI_ERR_OTHER and a
 * message.  Two threads each make RACE_CALLS write_at_all calls on a file of MPI_COMM_SELF (no
 * other rank involved) at once.  Whether two calls overlapped is timing, so only the class and
 * message of a refusal are asserted, never that one happened; every call either succeeds or is
 * refused, and the process neither crashes nor hangs. */
enum { RACE_CALLS = 200, RACE_BYTES = 1 << 16 };

typedef struct {
    MPI_File fh;
    int index;
    long refused, passed;
} race_arg;

static void *collective_caller(void *arg)
{
    race_arg *ra = arg;
    unsigned char *buf = calloc(RACE_BYTES, 1);
    for (int i = 0; i < RACE_CALLS; i++) {
        int rc = MPI_File_write_at_all(ra->fh, (MPI_Offset)ra->index * RACE_BYTES, buf,
                                       RACE_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) {
            ra->passed++;
            continue;
        }
        int cls;
        MPI_Error_class(rc, &cls);
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        CHECK(cls == MPI_ERR_OTHER, "concurrent collective refused with class %d: %s", cls, msg);
        CHECK(strstr(msg, "thread") != NULL, "the message says why: %s", msg);
        ra->refused++;
    }
    free(buf);
    return NULL;
}

static void check_collective_race(const char *path)
{
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            &fh));
    CHECK_MPI(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    race_arg ra[2] = {{fh, 0, 0, 0}, {fh, 1, 0, 0}};
    pthread_t th;
    pthread_create(&th, NULL, collective_caller, &ra[1]);
    collective_caller(&ra[0]);
    pthread_join(th, NULL);
    CHECK(ra[0].passed + ra[0].refused == RACE_CALLS && ra[1].passed + ra[1].refused == RACE_CALLS,
          "every call accounted for");
    CHECK_MPI(MPI_File_close(&fh));
    printf("threads: rank %d: concurrent collective calls refused %ld, passed %ld\n", rank,
           ra[0].refused + ra[1].refused, ra[0].passed + ra[1].passed);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("threads: skipped (the MPI library does not provide MPI_THREAD_MULTIPLE)\n");
        MPI_Finalize();
        return TEST_SKIP;
    }
    if (argc > 1)
        records = atoi(argv[1]);
    seed = test_seed(20261125, "threads");
    char shared_path[512], self_path[600], at_path[512], race_path[600];
    test_path(shared_path, sizeof shared_path, "threads-shared");
    test_path(at_path, sizeof at_path, "threads-at");
    snprintf(self_path, sizeof self_path, "%s-self-%d", shared_path, rank);
    snprintf(race_path, sizeof race_path, "%s-race-%d", shared_path, rank);
    if (rank == 0) {
        unlink(shared_path);
        unlink(at_path);
    }
    unlink(self_path);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, shared_path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &shared_fh));
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, self_path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &self_fh));
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, at_path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &at_fh));
    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&barrier);

    MPI_Offset position = -1, expected = 0;
    CHECK_MPI(MPI_File_get_position(self_fh, &position));
    for (int t = 0; t < THREADS; t++)
        for (int s = 0; s < records; s++)
            expected += (MPI_Offset)record_size(rank, t, s);
    CHECK(position == expected, "individual pointer %lld after every record, expected %lld",
          (long long)position, (long long)expected);
    CHECK_MPI(MPI_File_close(&self_fh));
    CHECK_MPI(MPI_File_close(&at_fh));
    CHECK_MPI(MPI_File_close(&shared_fh));
    check_records(self_path, rank, rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        check_records(shared_path, 0, nprocs);
    if (!getenv("WEFT_TEST_NO_COLLECTIVE_RACE"))
        check_collective_race(race_path);
    MPI_Barrier(MPI_COMM_WORLD);
    unlink(self_path);
    unlink(race_path);
    if (rank == 0) {
        unlink(shared_path);
        unlink(at_path);
        printf("threads: %d ranks x %d threads x %d records: every record once\n", nprocs,
               THREADS, records);
    }
    MPI_Finalize();
    return 0;
}
