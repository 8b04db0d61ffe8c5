/*
 * dtbench: pack and unpack bandwidth of weft's datatype engine against the host MPI's
 * MPI_Pack/MPI_Unpack, and contiguous copies against memcpy.  Repetitions of the contenders
 * are interleaved and the median is reported.  It prints figures and never asserts timing.
 *   dtbench [reps]   (default 15), one rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"

#define MAX_REPS 101

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return v[n / 2];
}

struct bench {
    const char *name;
    MPI_Datatype type;
    int count;
};

static void run(struct bench *b, int reps)
{
    const weft_dtype *t;
    if (weft_dtype_get(b->type, &t) != 0) {
        printf("%-28s decode failed\n", b->name);
        return;
    }
    MPI_Count size = weft_dtype_size(t) * b->count;
    MPI_Count span = weft_dtype_true_extent(t) + (b->count - 1) * weft_dtype_extent(t);
    char *mem = malloc((size_t)span), *packed = malloc((size_t)size), *packed2 = malloc((size_t)size);
    char *origin = mem - weft_dtype_true_lb(t);
    memset(mem, 1, (size_t)span);
    double tw[MAX_REPS], tm[MAX_REPS], uw[MAX_REPS], um[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        int pos = 0;
        double t0 = MPI_Wtime();
        MPI_Pack(origin, b->count, b->type, packed2, (int)size, &pos, MPI_COMM_SELF);
        double t1 = MPI_Wtime();
        weft_pack(origin, b->count, t, 0, size, packed);
        double t2 = MPI_Wtime();
        pos = 0;
        MPI_Unpack(packed2, (int)size, &pos, origin, b->count, b->type, MPI_COMM_SELF);
        double t3 = MPI_Wtime();
        weft_unpack(packed, size, origin, b->count, t, 0);
        double t4 = MPI_Wtime();
        tm[r] = t1 - t0;
        tw[r] = t2 - t1;
        um[r] = t3 - t2;
        uw[r] = t4 - t3;
    }
    double gb = (double)size / 1e9;
    double pw = gb / median(tw, reps), pm = gb / median(tm, reps);
    double qw = gb / median(uw, reps), qm = gb / median(um, reps);
    printf("%-30s %9.1f %8.2f %8.2f %6.2fx %8.2f %8.2f %6.2fx\n", b->name, (double)size / 1048576,
           pw, pm, pw / pm, qw, qm, qw / qm);
    free(mem);
    free(packed);
    free(packed2);
}

static void contiguous_vs_memcpy(MPI_Count bytes, int reps)
{
    MPI_Datatype c;
    MPI_Type_contiguous((int)bytes, MPI_BYTE, &c);
    MPI_Type_commit(&c);
    const weft_dtype *t;
    weft_dtype_get(c, &t);
    char *a = malloc((size_t)bytes), *b = malloc((size_t)bytes);
    memset(a, 3, (size_t)bytes);
    memset(b, 4, (size_t)bytes);
    int inner = (int)(((MPI_Count)64 << 20) / bytes);
    if (inner < 1)
        inner = 1;
    double tw[MAX_REPS], tc[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < inner; i++)
            weft_pack(a, 1, t, 0, bytes, b);
        double t1 = MPI_Wtime();
        for (int i = 0; i < inner; i++) {
            memcpy(b, a, (size_t)bytes);
            __asm__ volatile("" ::"r"(b) : "memory");
        }
        double t2 = MPI_Wtime();
        tw[r] = t1 - t0;
        tc[r] = t2 - t1;
    }
    double gb = (double)bytes * inner / 1e9;
    double w = gb / median(tw, reps), m = gb / median(tc, reps);
    printf("contiguous %-8lld KiB weft pack %8.2f GB/s  memcpy %8.2f GB/s  ratio %5.2f\n",
           (long long)(bytes >> 10), w, m, w / m);
    MPI_Type_free(&c);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1 || reps > MAX_REPS)
        reps = 15;
    MPI_Datatype v8, v64, v4k, s2, s3, ix, st, b64, b4k;
    MPI_Type_vector(1 << 21, 1, 2, MPI_DOUBLE, &v8);          /* 8 B blocks, 16 MiB data */
    MPI_Type_contiguous(64, MPI_BYTE, &b64);
    MPI_Type_vector(1 << 18, 1, 2, b64, &v64);                /* 64 B blocks */
    MPI_Type_contiguous(4096, MPI_BYTE, &b4k);
    MPI_Type_vector(1 << 12, 1, 2, b4k, &v4k);                /* 4 KiB blocks */
    int sz2[2] = {2048, 2048}, sub2[2] = {1024, 1024}, st2[2] = {512, 512};
    MPI_Type_create_subarray(2, sz2, sub2, st2, MPI_ORDER_C, MPI_DOUBLE, &s2);
    int sz3[3] = {160, 160, 160}, sub3[3] = {128, 128, 64}, st3[3] = {16, 16, 48};
    MPI_Type_create_subarray(3, sz3, sub3, st3, MPI_ORDER_C, MPI_DOUBLE, &s3);
    int n = 1 << 18, *bl = malloc(sizeof(int) * (size_t)n), *di = malloc(sizeof(int) * (size_t)n);
    uint64_t rng = 12345;
    for (int i = 0, at = 0; i < n; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        bl[i] = 1 + (int)((rng >> 33) % 16);
        di[i] = at;
        at += bl[i] + 1 + (int)((rng >> 40) % 4);
    }
    MPI_Type_indexed(n, bl, di, MPI_INT, &ix);                /* random block lengths */
    int sbl[4] = {1, 1, 2, 1};
    MPI_Aint sdisp[4] = {0, 8, 16, 28};
    MPI_Datatype stypes[4] = {MPI_DOUBLE, MPI_INT, MPI_SHORT, MPI_FLOAT}, rec;
    MPI_Type_create_struct(4, sbl, sdisp, stypes, &rec);      /* 20 data bytes in 3 runs */
    MPI_Type_create_resized(rec, 0, 40, &st);
    MPI_Datatype all[] = {v8, v64, v4k, s2, s3, ix, st};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_Type_commit(&all[i]);
    struct bench benches[] = {
        {"vector 8 B blocks", all[0], 1},     {"vector 64 B blocks", all[1], 1},
        {"vector 4 KiB blocks", all[2], 1},   {"subarray 2-D doubles", all[3], 1},
        {"subarray 3-D doubles", all[4], 1},  {"indexed random blocks", all[5], 1},
        {"struct mixed x 500k", all[6], 500000},
    };
    printf("%-30s %9s %8s %8s %7s %8s %8s %7s\n", "case", "MiB", "pack", "host", "ratio",
           "unpack", "host", "ratio");
    printf("%-30s %9s %8s %8s %7s %8s %8s %7s\n", "", "", "GB/s", "GB/s", "", "GB/s", "GB/s", "");
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        run(&benches[i], reps);
    contiguous_vs_memcpy(64 << 10, reps);
    contiguous_vs_memcpy(1 << 20, reps);
    contiguous_vs_memcpy(16 << 20, reps);

    /* Seek cost into a vector of 10^9 blocks. */
    MPI_Datatype huge;
    MPI_Type_vector(1000000000, 1, 2, MPI_INT, &huge);
    MPI_Type_commit(&huge);
    const weft_dtype *t;
    weft_dtype_get(huge, &t);
    weft_cursor c;
    weft_cursor_init(&c, t, 1, 0);
    int seeks = 1000000;
    double t0 = MPI_Wtime();
    MPI_Count sum = 0;
    for (int i = 0; i < seeks; i++) {
        weft_cursor_seek(&c, (MPI_Count)(i * 2654435761u % 4000000000u));
        sum += c.block_left;
    }
    double dt = MPI_Wtime() - t0;
    printf("seek into 10^9-block vector: %.1f ns per seek (%zu nodes, checksum %lld)\n",
           dt / seeks * 1e9, weft_dtype_node_count(t), (long long)sum);
    MPI_Type_free(&huge);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_Type_free(&all[i]);
    MPI_Type_free(&b64);
    MPI_Type_free(&b4k);
    MPI_Type_free(&rec);
    free(bl);
    free(di);
    MPI_Finalize();
    return 0;
}
