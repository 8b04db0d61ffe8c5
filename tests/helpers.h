/*
 * Shared helpers for weft's test programs.  A test exits 0 on pass, 1 on failure, 77 when
 * skipped.  Failures print file:line, the rank and the failed condition, then abort every
 * rank (MPI_Abort) so a failed collective test never hangs.
 */
#ifndef WEFT_TEST_HELPERS_H
#define WEFT_TEST_HELPERS_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_SKIP 77

static int test_rank_(void)
{
    int init = 0, fin = 0, rank = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void test_fail_(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s:%d rank %d: ", file, line, test_rank_());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(cond, ...) \
    do { if (!(cond)) test_fail_(__FILE__, __LINE__, "check `" #cond "` failed: " __VA_ARGS__); } while (0)

/* An MPI call that must succeed; prints the MPI error string when it does not. */
#define CHECK_MPI(call) \
    do { \
        int rc_ = (call); \
        if (rc_ != MPI_SUCCESS) { \
            char msg_[MPI_MAX_ERROR_STRING]; int len_ = 0; \
            MPI_Error_string(rc_, msg_, &len_); \
            test_fail_(__FILE__, __LINE__, "%s returned %d: %s", #call, rc_, msg_); \
        } \
    } while (0)

/* An MPI call that must fail with error class `cls`. */
#define CHECK_MPI_CLASS(call, cls) \
    do { \
        int rc_ = (call), class_ = MPI_SUCCESS; \
        if (rc_ != MPI_SUCCESS) MPI_Error_class(rc_, &class_); \
        if (class_ != (cls)) { \
            char msg_[MPI_MAX_ERROR_STRING] = ""; int len_ = 0; \
            if (rc_ != MPI_SUCCESS) MPI_Error_string(rc_, msg_, &len_); \
            test_fail_(__FILE__, __LINE__, "%s: expected class %s (%d), got %d (%s)", #call, \
                       #cls, (int)(cls), class_, msg_); \
        } \
    } while (0)

/* Directory for scratch files: $WEFT_TEST_DIR, else /tmp. */
static const char *test_dir(void)
{
    const char *d = getenv("WEFT_TEST_DIR");
    return d && *d ? d : "/tmp";
}

/* A path unique to this test run (same on every rank: uses rank 0's pid). */
static void test_path(char *out, size_t size, const char *tag)
{
    long pid = (long)getpid();
    int init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(out, size, "%s/weft-test-%s-%ld", test_dir(), tag, pid);
}

/* Seed from $WEFT_TEST_SEED or the given default; printed so a failure can be replayed. */
static uint64_t test_seed(uint64_t fallback, const char *name)
{
    const char *s = getenv("WEFT_TEST_SEED");
    uint64_t seed = s && *s ? strtoull(s, NULL, 0) : fallback;
    if (test_rank_() == 0)
        printf("%s: seed %llu (replay with WEFT_TEST_SEED=%llu)\n", name,
               (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

/* xorshift64*: small, deterministic, identical on every platform. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}
static inline uint64_t test_rand_below(uint64_t *state, uint64_t n)
{
    return n ? test_rand(state) % n : 0;
}

#endif
