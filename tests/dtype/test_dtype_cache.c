/*
 * The decoding cache and bad input:
 *   - a derived type is decoded once however often it is fetched (weft_dtype_decode_count);
 *   - MPI_Type_dup shares the decoding (no new decode); it survives freeing the original and
 *     is released with the last type (ASan builds check nothing leaks);
 *   - named types are decoded once too;
 *   - MPI_DATATYPE_NULL, an uncommitted type and a type whose size overflows MPI_Count fail
 *     with MPI_ERR_TYPE and do not crash.
 */
#include "common/error.h"
#include "dtype/dtype.h"
#include "helpers.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const weft_dtype *a, *b;

    MPI_Datatype v, d;
    CHECK_MPI(MPI_Type_vector(10, 2, 3, MPI_DOUBLE, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    uint64_t n0 = weft_dtype_decode_count();
    CHECK(weft_dtype_get(v, &a) == 0);
    CHECK(weft_dtype_decode_count() == n0 + 1);
    for (int i = 0; i < 1000; i++) {
        CHECK(weft_dtype_get(v, &b) == 0);
        CHECK(b == a);
    }
    CHECK(weft_dtype_decode_count() == n0 + 1, "decoded %llu times",
          (unsigned long long)(weft_dtype_decode_count() - n0));

    /* Dup shares it, and keeps it alive after the original is freed. */
    CHECK_MPI(MPI_Type_dup(v, &d));
    CHECK(weft_dtype_get(d, &b) == 0 && b == a);
    CHECK(weft_dtype_decode_count() == n0 + 1);
    MPI_Type_free(&v);
    CHECK(weft_dtype_size(b) == 160 && weft_dtype_extent(b) == 8 * 29);
    MPI_Type_free(&d);

    /* Many types created and freed: each decoded once, nothing left behind (ASan). */
    n0 = weft_dtype_decode_count();
    for (int i = 0; i < 200; i++) {
        MPI_Datatype t;
        CHECK_MPI(MPI_Type_contiguous(i + 1, MPI_INT, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        CHECK(weft_dtype_get(t, &a) == 0 && weft_dtype_get(t, &b) == 0 && a == b);
        CHECK(weft_dtype_size(a) == 4 * (i + 1) && weft_dtype_is_contiguous(a));
        MPI_Type_free(&t);
    }
    CHECK(weft_dtype_decode_count() == n0 + 200);

    /* Named types: decoded once. */
    CHECK(weft_dtype_get(MPI_INT, &a) == 0);
    n0 = weft_dtype_decode_count();
    CHECK(weft_dtype_get(MPI_INT, &b) == 0 && a == b && weft_dtype_decode_count() == n0);

    /* Bad input. */
    CHECK(weft_dtype_get(MPI_DATATYPE_NULL, &a) == WEFT_MPI_ERR(MPI_ERR_TYPE));
    MPI_Datatype u;
    CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &u));
    CHECK(weft_dtype_get(u, &a) == WEFT_MPI_ERR(MPI_ERR_TYPE)); /* not committed */
    CHECK_MPI(MPI_Type_commit(&u));
    CHECK(weft_dtype_get(u, &a) == 0 && weft_dtype_size(a) == 12);
    MPI_Type_free(&u);

    /* 2^30 * 2^30 * 2^30 doubles: the size overflows MPI_Count. */
    MPI_Datatype big = MPI_DOUBLE;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int created = 1;
    for (int i = 0; i < 3 && created; i++) {
        MPI_Datatype next;
        created = MPI_Type_contiguous(1 << 30, big, &next) == MPI_SUCCESS;
        if (big != MPI_DOUBLE)
            MPI_Type_free(&big);
        big = created ? next : MPI_DATATYPE_NULL;
    }
    if (created && MPI_Type_commit(&big) == MPI_SUCCESS) {
        int rc = weft_dtype_get(big, &a);
        CHECK(rc == WEFT_MPI_ERR(MPI_ERR_TYPE), "rc %d", rc);
        MPI_Type_free(&big);
    } else if (test_rank_() == 0) {
        printf("host refused the overflowing type itself; nothing to test there\n");
    }
    MPI_Finalize();
    return 0;
}
