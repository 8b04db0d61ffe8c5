/*
 * Transfer backends (src/xfer): every kind (sync, threads, uring) against a model of the file.
 * Rounds of up to MAX_OPS ops of random iovec shapes in flight together, waited (or tested)
 * in random order; every read is compared byte for byte with the model, the gaps between
 * iovec entries must stay untouched, and after every round the whole file is compared with
 * plain pread. Then with tiny per-call limits (weft_xfer_set_test_limits) so that every op
 * is split into many system calls / io_uring requests; then EOF, error and argument cases.
 * Deterministic: the seed is printed (WEFT_TEST_SEED replays); nothing depends on timing.
 */
#include "helpers.h"
#include "xfer/xfer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#define FILE_MAX (512 * 1024)
#define MAX_OPS 16
#define MAX_ENTRIES 40
#define SENTINEL 0xA5

typedef struct {
    weft_xfer_op op;
    struct iovec iov[MAX_ENTRIES];
    unsigned char *mem;      /* entries live here, with gaps between them */
    size_t memsize;
    MPI_Count total;
    MPI_Offset expect_done;  /* reads */
} test_op;

static unsigned char model[FILE_MAX];
static MPI_Offset model_size;
static uint64_t rng;

/* A random vector of `total` bytes in random entries (some empty) with random gaps. */
static void shape(test_op *t, MPI_Count total)
{
    int n = 1 + (int)test_rand_below(&rng, MAX_ENTRIES);
    size_t cut[MAX_ENTRIES + 1];
    cut[0] = 0;
    cut[n] = (size_t)total;
    for (int i = 1; i < n; i++)
        cut[i] = (size_t)test_rand_below(&rng, (uint64_t)total + 1);
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 1 && cut[j - 1] > cut[j]; j--) {
            size_t x = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = x;
        }
    size_t gaps[MAX_ENTRIES], pos = 0;
    for (int i = 0; i < n; i++) {
        gaps[i] = test_rand_below(&rng, 4) == 0 ? 0 : (size_t)test_rand_below(&rng, 64);
        pos += gaps[i] + (cut[i + 1] - cut[i]);
    }
    t->memsize = pos + 1;
    t->mem = malloc(t->memsize);
    CHECK(t->mem);
    memset(t->mem, SENTINEL, t->memsize);
    pos = 0;
    for (int i = 0; i < n; i++) {
        pos += gaps[i];
        t->iov[i].iov_base = t->mem + pos;
        t->iov[i].iov_len = cut[i + 1] - cut[i];
        pos += t->iov[i].iov_len;
    }
    t->op.iov = t->iov;
    t->op.iovcnt = n;
    t->total = total;
}

/* Entry i's bytes, in order, are the op's bytes; check the gaps kept the sentinel. */
static void gather(const test_op *t, unsigned char *out)
{
    size_t k = 0;
    const unsigned char *prev_end = t->mem;
    for (int i = 0; i < t->op.iovcnt; i++) {
        const unsigned char *b = t->iov[i].iov_base;
        for (const unsigned char *g = prev_end; g < b; g++)
            CHECK(*g == SENTINEL, "gap byte before entry %d overwritten", i);
        memcpy(out + k, b, t->iov[i].iov_len);
        k += t->iov[i].iov_len;
        prev_end = b + t->iov[i].iov_len;
    }
    for (const unsigned char *g = prev_end; g < t->mem + t->memsize; g++)
        CHECK(*g == SENTINEL, "gap byte after the last entry overwritten");
}

static void check_file(int fd)
{
    static unsigned char got[FILE_MAX];
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    CHECK(st.st_size == model_size, "size %lld, model %lld", (long long)st.st_size,
          (long long)model_size);
    ssize_t r = pread(fd, got, FILE_MAX, 0);
    CHECK(r == model_size);
    CHECK(memcmp(got, model, (size_t)model_size) == 0, "file differs from the model");
}

/* One round: up to MAX_OPS ops on disjoint ranges. Write rounds may extend the file; mixed
 * rounds write only below the current size (so reads past EOF have a known outcome). */
static void round_(weft_xfer_backend *b, int fd, int write_round, MPI_Count limit)
{
    static test_op ops[MAX_OPS];
    static unsigned char lin[FILE_MAX];
    int n = 1 + (int)test_rand_below(&rng, MAX_OPS);
    /* disjoint ranges: sorted random points, every other gap used */
    MPI_Offset pts[2 * MAX_OPS];
    for (int i = 0; i < 2 * n; i++)
        pts[i] = (MPI_Offset)test_rand_below(&rng, FILE_MAX + 1);
    for (int i = 1; i < 2 * n; i++)
        for (int j = i; j > 0 && pts[j - 1] > pts[j]; j--) {
            MPI_Offset x = pts[j];
            pts[j] = pts[j - 1];
            pts[j - 1] = x;
        }
    MPI_Offset new_size = model_size;
    for (int i = 0; i < n; i++) {
        test_op *t = &ops[i];
        memset(&t->op, 0, sizeof t->op);
        MPI_Offset off = pts[2 * i], len = pts[2 * i + 1] - pts[2 * i];
        if (test_rand_below(&rng, 8) == 0)
            len = 0;
        int w = write_round || test_rand_below(&rng, 2) == 0;
        if (w && !write_round && off + len > model_size)
            w = 0;
        t->op.fd = fd;
        t->op.write = w;
        t->op.offset = off;
        shape(t, len);
        if (w) {
            size_t k = 0;
            for (int e = 0; e < t->op.iovcnt; e++)
                for (size_t j = 0; j < t->iov[e].iov_len; j++, k++) {
                    unsigned char v = (unsigned char)test_rand(&rng);
                    ((unsigned char *)t->iov[e].iov_base)[j] = v;
                    model[off + (MPI_Offset)k] = v;
                }
            if (len > 0 && off + len > new_size)
                new_size = off + len;
        } else {
            MPI_Offset avail = model_size - off;
            t->expect_done = avail < 0 ? 0 : avail < len ? avail : len;
        }
        CHECK(weft_xfer_submit(b, &t->op) == 0);
    }
    /* complete in random order: a test first for some, then wait */
    int order[MAX_OPS];
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)test_rand_below(&rng, (uint64_t)i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (int q = 0; q < n; q++) {
        test_op *t = &ops[order[q]];
        int rc;
        if (test_rand_below(&rng, 3) == 0) {
            int complete = -1;
            rc = weft_xfer_test(b, &t->op, &complete);
            CHECK(complete == 0 || complete == 1);
            if (!complete) {
                CHECK(rc == 0);
                rc = weft_xfer_wait(b, &t->op);
            }
        } else {
            rc = weft_xfer_wait(b, &t->op);
        }
        CHECK(rc == 0 && t->op.rc == 0, "op %d: rc %d (%s)", order[q], rc, strerror(-rc));
        /* waiting again is harmless and returns the same result */
        CHECK(weft_xfer_wait(b, &t->op) == 0);
        MPI_Count want = t->op.write ? t->total : t->expect_done;
        CHECK(t->op.done == want, "op %d (%s at %lld, %lld bytes): done %lld, want %lld",
              order[q], t->op.write ? "write" : "read", (long long)t->op.offset,
              (long long)t->total, (long long)t->op.done, (long long)want);
        if (limit && t->total > 0) /* the split: at least ceil(bytes / limit) calls */
            CHECK(t->op.syscalls >= (unsigned long long)((want + limit - 1) / limit),
                  "%llu calls for %lld bytes, limit %lld", t->op.syscalls, (long long)want,
                  (long long)limit);
        if (!t->op.write) {
            gather(t, lin);
            CHECK(memcmp(lin, model + t->op.offset, (size_t)t->op.done) == 0,
                  "read at %lld differs from the model", (long long)t->op.offset);
            for (MPI_Count k = t->op.done; k < t->total; k++) /* past EOF: untouched */
                CHECK(lin[k] == SENTINEL, "byte %lld past EOF written", (long long)k);
        } else {
            gather(t, lin); /* only the gap check */
        }
        free(t->mem);
    }
    model_size = new_size;
    check_file(fd);
}

static void random_ops(weft_xfer_backend *b, const char *name, MPI_Count limit, int max_iov)
{
    char path[512];
    test_path(path, sizeof path, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0, "%s: %s", path, strerror(errno));
    memset(model, 0, sizeof model);
    model_size = 0;
    weft_xfer_set_test_limits(limit, max_iov);
    int rounds = limit ? 40 : 120;
    for (int r = 0; r < rounds; r++)
        round_(b, fd, r < 3 || test_rand_below(&rng, 3) == 0, limit);
    weft_xfer_set_test_limits(0, 0);
    close(fd);
    unlink(path);
}

static void fixed_cases(weft_xfer_backend *b, const char *name)
{
    char path[512];
    test_path(path, sizeof path, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    unsigned char buf[300];
    for (int i = 0; i < 300; i++)
        buf[i] = (unsigned char)i;
    CHECK(pwrite(fd, buf, 100, 0) == 100);

    /* reads that cross or start past EOF */
    unsigned char in[300];
    struct iovec v[2] = {{in, 120}, {in + 120, 180}};
    weft_xfer_op op = {.fd = fd, .write = 0, .offset = 50, .iov = v, .iovcnt = 2};
    CHECK(weft_xfer_submit(b, &op) == 0);
    CHECK(weft_xfer_wait(b, &op) == 0);
    CHECK(op.done == 50 && memcmp(in, buf + 50, 50) == 0, "done %lld", (long long)op.done);
    weft_xfer_op past = {.fd = fd, .write = 0, .offset = 1000, .iov = v, .iovcnt = 2};
    CHECK(weft_xfer_submit(b, &past) == 0);
    CHECK(weft_xfer_wait(b, &past) == 0 && past.done == 0);

    /* zero bytes: complete at once */
    struct iovec z[2] = {{in, 0}, {NULL, 0}};
    weft_xfer_op zero = {.fd = -1, .write = 1, .offset = 0, .iov = z, .iovcnt = 2};
    int complete = 0;
    CHECK(weft_xfer_submit(b, &zero) == 0);
    CHECK(weft_xfer_test(b, &zero, &complete) == 0 && complete == 1 && zero.done == 0);

    /* argument errors, and waiting for an op never submitted */
    weft_xfer_op bad = {.fd = fd, .iov = NULL, .iovcnt = 1};
    CHECK(weft_xfer_submit(b, &bad) == -EINVAL);
    bad = (weft_xfer_op){.fd = fd, .iov = v, .iovcnt = -1};
    CHECK(weft_xfer_submit(b, &bad) == -EINVAL);
    bad = (weft_xfer_op){.fd = fd, .iov = v, .iovcnt = 1, .offset = -1};
    CHECK(weft_xfer_submit(b, &bad) == -EINVAL);
    weft_xfer_op idle = {.fd = fd, .iov = v, .iovcnt = 1};
    CHECK(weft_xfer_wait(b, &idle) == -EINVAL);
    close(fd);

    /* write to a read-only descriptor, read from a write-only one: -EBADF */
    int ro = open(path, O_RDONLY), wo = open(path, O_WRONLY);
    CHECK(ro >= 0 && wo >= 0);
    struct iovec w1 = {buf, 10};
    weft_xfer_op e1 = {.fd = ro, .write = 1, .offset = 0, .iov = &w1, .iovcnt = 1};
    weft_xfer_op e2 = {.fd = wo, .write = 0, .offset = 0, .iov = &w1, .iovcnt = 1};
    CHECK(weft_xfer_submit(b, &e1) == 0 && weft_xfer_submit(b, &e2) == 0);
    int rc2 = weft_xfer_wait(b, &e2), rc1 = weft_xfer_wait(b, &e1);
    CHECK(rc1 == -EBADF && e1.rc == -EBADF && e1.done == 0, "rc %d", rc1);
    CHECK(rc2 == -EBADF && e2.rc == -EBADF && e2.done == 0, "rc %d", rc2);
    close(ro);
    close(wo);
    unlink(path);

    /* /dev/full: -ENOSPC, also when the op is split into several calls */
    int full = open("/dev/full", O_WRONLY);
    if (full >= 0) {
        for (int split = 0; split < 2; split++) {
            weft_xfer_set_test_limits(split ? 64 : 0, split ? 1 : 0);
            struct iovec f[3] = {{buf, 100}, {buf + 100, 100}, {buf + 200, 100}};
            weft_xfer_op e3 = {.fd = full, .write = 1, .offset = 0, .iov = f, .iovcnt = 3};
            CHECK(weft_xfer_submit(b, &e3) == 0);
            int rc = weft_xfer_wait(b, &e3);
            CHECK(rc == -ENOSPC && e3.done == 0, "rc %d done %lld", rc, (long long)e3.done);
        }
        weft_xfer_set_test_limits(0, 0);
        close(full);
    } else {
        printf("  /dev/full not available: ENOSPC case skipped\n");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rng = test_seed(20240611, "xfer_backends");
    CHECK(strcmp(weft_xfer_kind_name(WEFT_XFER_THREADS), "threads") == 0);
    weft_xfer_kind k;
    CHECK(weft_xfer_kind_parse("uring", &k) == 0 && k == WEFT_XFER_URING);
    CHECK(weft_xfer_kind_parse("aio", &k) == -EINVAL);
    /* weft_backend=auto: threads only with a core left over for the workers. */
    CHECK(weft_xfer_auto_pick(2, 2, 1) == WEFT_XFER_SYNC, "bound to one core");
    CHECK(weft_xfer_auto_pick(2, 2, 2) == WEFT_XFER_SYNC, "a rank on every core");
    CHECK(weft_xfer_auto_pick(2, 4, 1) == WEFT_XFER_SYNC, "bound, spare cores elsewhere");
    CHECK(weft_xfer_auto_pick(4, 4, 4) == WEFT_XFER_SYNC, "full node");
    CHECK(weft_xfer_auto_pick(1, 2, 2) == WEFT_XFER_THREADS, "one rank, two cores");
    CHECK(weft_xfer_auto_pick(2, 8, 4) == WEFT_XFER_THREADS, "bound to four of eight");
    k = weft_xfer_auto_kind(1);
    CHECK(k == WEFT_XFER_SYNC || k == WEFT_XFER_THREADS, "auto gave %d", (int)k);

    const weft_xfer_kind kinds[] = {WEFT_XFER_SYNC, WEFT_XFER_THREADS, WEFT_XFER_URING};
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        weft_xfer_backend *b = NULL, *again = NULL;
        weft_xfer_kind actual, actual2;
        CHECK(weft_xfer_backend_get(kinds[i], &b, &actual) == 0 && b);
        CHECK(weft_xfer_backend_get(kinds[i], &again, &actual2) == 0 && again == b &&
              actual2 == actual, "not a singleton");
        CHECK(actual == kinds[i] || (kinds[i] == WEFT_XFER_URING && actual == WEFT_XFER_THREADS));
        printf("backend %s: got %s\n", weft_xfer_kind_name(kinds[i]), weft_xfer_kind_name(actual));
        fflush(stdout);
        char tag[64];
        snprintf(tag, sizeof tag, "xfer-%s", weft_xfer_kind_name(kinds[i]));
        random_ops(b, tag, 0, 0);
        /* tiny limits: every op in many calls (uring: more requests than the ring holds) */
        MPI_Count limit = 1 + (MPI_Count)test_rand_below(&rng, 3000);
        int max_iov = 1 + (int)test_rand_below(&rng, 4);
        printf("  split: %lld bytes, %d entries per call\n", (long long)limit, max_iov);
        random_ops(b, tag, limit, max_iov);
        fixed_cases(b, tag);
    }
    MPI_Finalize();
    printf("xfer_backends: passed\n");
    return 0;
}
