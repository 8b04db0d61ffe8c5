/*
 * Regularity of the compact form: huge regular types stay a handful of nodes and seek in
 * O(depth) (asserted through node counts and exact offsets, never time); contiguous structs
 * become one block; deeply nested types are collapsed to fit the cursor; named pair types
 * have their holes; file-view style unbounded tiling from a displacement.
 */
#include "dtype/dtype.h"
#include "helpers.h"

static const weft_dtype *get(MPI_Datatype t)
{
    const weft_dtype *d;
    CHECK(weft_dtype_get(t, &d) == 0);
    return d;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);

    /* A vector of 10^9 blocks: O(1) nodes, seek to the middle lands exactly. */
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(1000000000, 1, 2, MPI_INT, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    const weft_dtype *t = get(v);
    CHECK(weft_dtype_node_count(t) <= 2, "nodes %zu", weft_dtype_node_count(t));
    CHECK(weft_dtype_size(t) == 4000000000LL);
    weft_cursor c;
    weft_cursor_init(&c, t, 3, 0);
    MPI_Count mid = 3 * 4000000000LL / 2 + 2;
    CHECK(weft_cursor_seek(&c, mid) == 0);
    MPI_Offset off;
    MPI_Count len;
    CHECK(weft_cursor_next(&c, &off, &len, 0) == 1);
    MPI_Count copy = mid / 4000000000LL, in = mid % 4000000000LL;
    CHECK(off == copy * weft_dtype_extent(t) + (in / 4) * 8 + in % 4 && len == 4 - in % 4,
          "off %lld len %lld", (long long)off, (long long)len);
    CHECK(weft_cursor_seek_extent(&c, weft_dtype_extent(t) + 8 * 1000 + 1) == 0);
    CHECK(weft_cursor_tell(&c) == 4000000000LL + 4 * 1000 + 1, "tell %lld", (long long)weft_cursor_tell(&c));
    CHECK(weft_dtype_is_monotonic(t) && !weft_dtype_is_contiguous(t));

    /* Vector of vectors of 10^9 elements in total, and a huge 3-D subarray: still tiny. */
    MPI_Datatype hv, sub;
    CHECK_MPI(MPI_Type_create_hvector(1000, 1, 8 * 2000000, v, &hv));
    CHECK_MPI(MPI_Type_commit(&hv));
    CHECK(weft_dtype_node_count(get(hv)) <= 3);
    int sizes[3] = {100000, 100000, 1000}, subs[3] = {50000, 1000, 10}, starts[3] = {10, 20, 30};
    CHECK_MPI(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &sub));
    CHECK_MPI(MPI_Type_commit(&sub));
    t = get(sub);
    CHECK(weft_dtype_node_count(t) <= 3, "nodes %zu", weft_dtype_node_count(t));
    weft_cursor_init(&c, t, 1, 0);
    /* Plane 5, row 777, third double of the row. */
    MPI_Offset want = 8 * (((10LL + 5) * 100000 + (20 + 777)) * 1000 + 30) + 16;
    MPI_Count pos = (MPI_Count)8 * 10 * (5 * 1000 + 777) + 16;
    CHECK(weft_cursor_seek(&c, pos) == 0 && weft_cursor_next(&c, &off, &len, 0) == 1);
    CHECK(off == want && len == 64, "off %lld want %lld len %lld", (long long)off,
          (long long)want, (long long)len);

    /* A struct of one type that is really contiguous is one block. */
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {0, 4, 8};
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_DOUBLE}, st;
    CHECK_MPI(MPI_Type_create_struct(3, bl, disp, types, &st));
    CHECK_MPI(MPI_Type_commit(&st));
    t = get(st);
    CHECK(weft_dtype_node_count(t) == 1 && weft_dtype_is_contiguous(t));
    weft_cursor_init(&c, t, 1000, 64);
    CHECK(weft_cursor_next(&c, &off, &len, 0) == 1 && off == 64 && len == 16000);
    CHECK(weft_cursor_next(&c, &off, &len, 0) == 0);

    /* 20 nested vectors: deeper than the cursor, collapsed; pack still equals MPI_Pack. */
    MPI_Datatype deep = MPI_INT;
    for (int i = 0; i < 20; i++) {
        MPI_Datatype next;
        CHECK_MPI(MPI_Type_create_hvector(2, 1, i % 2 ? 12 * (1 << (i / 2)) : -20 * (1 << (i / 2)), deep, &next));
        if (deep != MPI_INT)
            MPI_Type_free(&deep);
        deep = next;
    }
    CHECK_MPI(MPI_Type_commit(&deep));
    t = get(deep);
    MPI_Count size = weft_dtype_size(t), lb = weft_dtype_true_lb(t), ext = weft_dtype_true_extent(t);
    char *mem = malloc((size_t)ext), *ref = malloc((size_t)size), *mine = malloc((size_t)size);
    for (MPI_Count i = 0; i < ext; i++)
        mem[i] = (char)(i * 31 + 7);
    int p = 0;
    CHECK_MPI(MPI_Pack(mem - lb, 1, deep, ref, (int)size, &p, MPI_COMM_SELF));
    CHECK(weft_pack(mem - lb, 1, t, 0, size, mine) == size && memcmp(ref, mine, (size_t)size) == 0);
    weft_cursor_init(&c, t, 1, 0);
    CHECK(weft_cursor_seek(&c, size / 3) == 0);

    /* Named pair types have holes; MPI_2INT has none. */
    t = get(MPI_DOUBLE_INT);
    CHECK(weft_dtype_size(t) == 12 && weft_dtype_extent(t) == 16 && !weft_dtype_is_contiguous(t));
    weft_cursor_init(&c, t, 2, 0);
    CHECK(weft_cursor_next(&c, &off, &len, 0) && off == 0 && len == 12);
    CHECK(weft_cursor_next(&c, &off, &len, 0) && off == 16 && len == 12);
    t = get(MPI_SHORT_INT);
    weft_cursor_init(&c, t, 1, 0);
    CHECK(weft_cursor_next(&c, &off, &len, 0) && off == 0 && len == 2);
    CHECK(weft_cursor_next(&c, &off, &len, 0) && off == 4 && len == 4);
    t = get(MPI_LONG_DOUBLE_INT);
    CHECK(weft_dtype_size(t) == (MPI_Count)sizeof(long double) + 4);
    CHECK(weft_dtype_is_contiguous(get(MPI_2INT)));

    /* File view: unbounded tiling from a displacement, pieces merged across copies. */
    MPI_Datatype ft;
    CHECK_MPI(MPI_Type_vector(2, 2, 4, MPI_INT, &ft)); /* 8 data, hole 8, 8 data; extent 24 */
    CHECK_MPI(MPI_Type_commit(&ft));
    t = get(ft);
    weft_cursor_init(&c, t, -1, 1000);
    MPI_Offset expect[] = {1000, 1016, 1040, 1064}; /* 1016+8 == 1024 touches copy 1's 1024 */
    MPI_Count elen[] = {8, 16, 16, 16};
    for (int i = 0; i < 4; i++) {
        CHECK(weft_cursor_next(&c, &off, &len, 0) == 1);
        CHECK(off == expect[i] && len == elen[i], "piece %d: %lld+%lld", i, (long long)off,
              (long long)len);
    }
    CHECK(weft_cursor_seek(&c, (MPI_Count)16 * 1000000000000LL) == 0); /* far into the file */
    CHECK(weft_cursor_tell_extent(&c) == 24 * 1000000000000LL);

    /* Decreasing displacements: not monotonic (set_view must reject it). */
    int ibl[2] = {1, 1}, idisp[2] = {4, 0};
    MPI_Datatype dec;
    CHECK_MPI(MPI_Type_indexed(2, ibl, idisp, MPI_INT, &dec));
    CHECK_MPI(MPI_Type_commit(&dec));
    CHECK(!weft_dtype_is_monotonic(get(dec)));
    CHECK(weft_dtype_is_monotonic(get(ft)));

    MPI_Type_free(&v);
    MPI_Type_free(&hv);
    MPI_Type_free(&sub);
    MPI_Type_free(&st);
    MPI_Type_free(&deep);
    MPI_Type_free(&ft);
    MPI_Type_free(&dec);
    free(mem);
    free(ref);
    free(mine);
    MPI_Finalize();
    return 0;
}
