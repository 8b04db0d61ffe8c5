/*
 * Differential test of the datatype engine against the host MPI, on thousands of seeded random
 * nested types (random_types.h):
 *   - size, lb, extent, true lb, true extent equal the host's;
 *   - weft_pack of the whole data and of random byte ranges equals MPI_Pack;
 *   - weft_unpack (whole, and in two random pieces) equals MPI_Unpack (non-overlapping types);
 *   - seek to a random position then iterate gives the same bytes as the packed data from
 *     there; pieces from next() are maximal (no two adjacent); tell follows;
 *   - flatten in small batches, concatenated, equals the pack;
 *   - weft_copy between two random layouts, in random chunks, equals MPI_Pack + MPI_Unpack;
 *   - is_monotonic and is_contiguous agree with a brute-force look at the pieces.
 * argv[1]: number of types (default 3000).  WEFT_TEST_SEED replays a run.
 */
#include "dtype/dtype.h"
#include "random_types.h"

struct buf {
    char *mem;     /* allocation */
    char *origin;  /* where copy 0's displacement 0 lies */
    size_t len;
};

struct info {
    MPI_Count size, lb, ext, tlb, text;
};

static struct info host_info(MPI_Datatype t)
{
    struct info i;
    MPI_Type_size_x(t, &i.size);
    MPI_Type_get_extent_x(t, &i.lb, &i.ext);
    MPI_Type_get_true_extent_x(t, &i.tlb, &i.text);
    return i;
}

/* A buffer covering `count` copies, filled with a byte pattern. */
static struct buf buf_new(const struct info *in, MPI_Count count, uint64_t *rng)
{
    MPI_Offset last = (count - 1) * in->ext;
    MPI_Offset lo = in->tlb + (last < 0 ? last : 0);
    MPI_Offset hi = in->tlb + in->text + (last > 0 ? last : 0);
    struct buf b;
    if (in->size == 0) /* no data: the true bounds of an empty type are not meaningful */
        lo = hi = 0;
    b.len = (size_t)(hi - lo) + 64;
    b.mem = malloc(b.len);
    CHECK(b.mem);
    for (size_t i = 0; i < b.len; i++)
        b.mem[i] = (char)test_rand(rng);
    b.origin = b.mem + 32 - lo;
    return b;
}

static int cmp_off(const void *a, const void *b)
{
    const MPI_Offset *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* All pieces of `count` copies, via next(); checks maximality and tell on the way. */
static size_t pieces(const weft_dtype *t, MPI_Count count, MPI_Offset base, MPI_Offset **out)
{
    size_t n = 0, cap = 64;
    MPI_Offset *p = malloc(cap * 2 * sizeof *p);
    weft_cursor c;
    weft_cursor_init(&c, t, count, base);
    MPI_Offset off;
    MPI_Count len, pos = 0;
    while (weft_cursor_next(&c, &off, &len, 0)) {
        CHECK(len > 0);
        pos += len;
        CHECK(weft_cursor_tell(&c) == pos);
        if (n)
            CHECK(p[2 * n - 2] + p[2 * n - 1] != off, "adjacent pieces not merged");
        if (n == cap) {
            cap *= 2;
            p = realloc(p, cap * 2 * sizeof *p);
        }
        p[2 * n] = off;
        p[2 * n + 1] = len;
        n++;
    }
    CHECK(pos == count * weft_dtype_size(t));
    *out = p;
    return n;
}

static int overlapping(const weft_dtype *t, MPI_Count count)
{
    MPI_Offset *p;
    size_t n = pieces(t, count, 0, &p);
    qsort(p, n, 2 * sizeof *p, cmp_off);
    int overlap = 0;
    for (size_t i = 1; i < n; i++)
        if (p[2 * i] < p[2 * i - 2] + p[2 * i - 1])
            overlap = 1;
    free(p);
    return overlap;
}

static void check_flags(const weft_dtype *t, const struct info *in)
{
    /* is_monotonic speaks of one copy (the standard's rule for a filetype); with
     * tiles_in_order it must also hold for copies tiled by the extent. */
    MPI_Offset *one;
    size_t n1 = pieces(t, 1, 0, &one);
    int mono1 = 1;
    for (size_t i = 0; i < n1; i++)
        if (one[2 * i] < 0 || (i && one[2 * i] < one[2 * i - 2] + one[2 * i - 1]))
            mono1 = 0;
    free(one);
    CHECK(weft_dtype_is_monotonic(t) == mono1, "monotonic: weft %d, pieces %d",
          weft_dtype_is_monotonic(t), mono1);
    MPI_Offset *p;
    size_t n = pieces(t, 3, 0, &p);
    int mono = 1;
    for (size_t i = 0; i < n; i++) {
        if (p[2 * i] < 0 || (i && p[2 * i] < p[2 * i - 2] + p[2 * i - 1]))
            mono = 0;
    }
    CHECK((weft_dtype_is_monotonic(t) && weft_dtype_tiles_in_order(t)) == mono,
          "monotonic when tiled: weft %d/%d, pieces %d", weft_dtype_is_monotonic(t),
          weft_dtype_tiles_in_order(t), mono);
    int contig = in->size == in->ext &&
                 (in->size == 0 || (n == 1 && p[0] == in->lb && p[1] == 3 * in->size));
    CHECK(!!weft_dtype_is_contiguous(t) == contig, "contiguous: weft %d, pieces %d",
          weft_dtype_is_contiguous(t), contig);
    free(p);
}

/* A serialized and rebuilt layout has the same pieces, bounds and flags. */
static void check_serialized(const weft_dtype *t, int iter)
{
    void *blob;
    size_t len;
    CHECK(weft_dtype_serialize(t, &blob, &len) == 0, "iteration %d: serialize", iter);
    const weft_dtype *back;
    CHECK(weft_dtype_deserialize(blob, len, &back) == 0, "iteration %d: deserialize", iter);
    CHECK(weft_dtype_size(back) == weft_dtype_size(t) && weft_dtype_lb(back) == weft_dtype_lb(t) &&
          weft_dtype_extent(back) == weft_dtype_extent(t) &&
          weft_dtype_true_lb(back) == weft_dtype_true_lb(t) &&
          weft_dtype_true_extent(back) == weft_dtype_true_extent(t) &&
          weft_dtype_is_monotonic(back) == weft_dtype_is_monotonic(t) &&
          weft_dtype_is_contiguous(back) == weft_dtype_is_contiguous(t), "iteration %d: bounds", iter);
    MPI_Offset *a, *b;
    size_t na = pieces(t, 2, 0, &a), nb = pieces(back, 2, 0, &b);
    CHECK(na == nb && memcmp(a, b, na * 2 * sizeof *a) == 0, "iteration %d: pieces differ after "
          "serialization (%zu vs %zu)", iter, na, nb);
    free(a);
    free(b);
    /* Truncated input is rejected, never read past. */
    const weft_dtype *bad;
    CHECK(weft_dtype_deserialize(blob, len - 1, &bad) != 0, "iteration %d: truncated accepted", iter);
    weft_dtype_put(back);
    free(blob);
}

static void check_type(MPI_Datatype type, uint64_t *rng, int iter)
{
    const weft_dtype *t;
    int rc = weft_dtype_get(type, &t);
    CHECK(rc == 0, "iteration %d: weft_dtype_get failed %d", iter, rc);
    struct info in = host_info(type);
    CHECK(weft_dtype_size(t) == in.size && weft_dtype_lb(t) == in.lb &&
              weft_dtype_extent(t) == in.ext && weft_dtype_true_lb(t) == in.tlb &&
              weft_dtype_true_extent(t) == in.text,
          "iteration %d: bounds differ", iter);
    CHECK(weft_dtype_node_count(t) <= 4096);
    check_flags(t, &in);
    check_serialized(t, iter);

    MPI_Count count = 1 + (MPI_Count)test_rand_below(rng, 3);
    MPI_Count total = count * in.size;
    struct buf src = buf_new(&in, count, rng);
    if (total == 0) { /* MPICH 4.0's MPI_Pack/MPI_Unpack divide by zero on some empty types */
        char dummy;
        CHECK(weft_pack(src.origin, count, t, 0, 1, &dummy) == 0);
        free(src.mem);
        return;
    }
    char *ref = malloc((size_t)total + 1), *mine = malloc((size_t)total + 1);
    int pos = 0;
    CHECK_MPI(MPI_Pack(src.origin, (int)count, type, ref, (int)total + 1, &pos, MPI_COMM_SELF));
    CHECK(pos == total);

    /* Whole pack, and a random range. */
    CHECK(weft_pack(src.origin, count, t, 0, total, mine) == total);
    if (memcmp(mine, ref, (size_t)total) != 0) {
        rt_print(type, 0);
        for (MPI_Count i = 0; i < total; i++)
            fprintf(stderr, "%s%02x/%02x", i % 16 ? " " : "\n", (unsigned char)mine[i], (unsigned char)ref[i]);
        fprintf(stderr, "\ncount %lld\n", (long long)count);
        CHECK(0, "iteration %d: pack differs", iter);
    }
    if (total > 0) {
        MPI_Count first = (MPI_Count)test_rand_below(rng, (uint64_t)total);
        MPI_Count bytes = 1 + (MPI_Count)test_rand_below(rng, (uint64_t)(total - first));
        CHECK(weft_pack(src.origin, count, t, first, bytes, mine) == bytes);
        CHECK(memcmp(mine, ref + first, (size_t)bytes) == 0, "iteration %d: partial pack", iter);
        /* The same from a cursor left where a seek put it, in two calls. */
        weft_cursor c;
        weft_cursor_init(&c, t, count, (MPI_Offset)(intptr_t)src.origin);
        CHECK(weft_cursor_seek(&c, first) == 0);
        MPI_Count part = (MPI_Count)test_rand_below(rng, (uint64_t)bytes + 1);
        memset(mine, 0, (size_t)bytes);
        CHECK(weft_pack_cursor(&c, part, mine) == part);
        CHECK(weft_pack_cursor(&c, bytes - part, mine + part) == bytes - part);
        CHECK(weft_cursor_tell(&c) == first + bytes);
        CHECK(memcmp(mine, ref + first, (size_t)bytes) == 0, "iteration %d: cursor pack", iter);
        /* Seek then iterate == the packed bytes from there. */
        weft_cursor_init(&c, t, count, (MPI_Offset)(intptr_t)src.origin);
        CHECK(weft_cursor_seek(&c, first) == 0 && weft_cursor_tell(&c) == first);
        MPI_Offset off;
        MPI_Count len, at = first;
        while (weft_cursor_next(&c, &off, &len, 1 + (MPI_Count)test_rand_below(rng, 64))) {
            CHECK(memcmp((char *)(intptr_t)off, ref + at, (size_t)len) == 0,
                  "iteration %d: seek/next differs at %lld", iter, (long long)at);
            at += len;
        }
        CHECK(at == total);
        /* Flatten in small batches, then seek by extent round trip on monotonic types. */
        weft_cursor_init(&c, t, count, (MPI_Offset)(intptr_t)src.origin);
        MPI_Offset offs[3];
        MPI_Count lens[3], done, at2 = 0;
        size_t k;
        while ((k = weft_cursor_flatten(&c, 1 + (MPI_Count)test_rand_below(rng, 50), offs, lens,
                                        3, &done)) > 0) {
            for (size_t i = 0; i < k; i++) {
                CHECK(memcmp((char *)(intptr_t)offs[i], ref + at2, (size_t)lens[i]) == 0);
                at2 += lens[i];
            }
            CHECK(weft_cursor_tell(&c) == at2);
        }
        CHECK(at2 == total);
        if (weft_dtype_is_monotonic(t) && weft_dtype_tiles_in_order(t)) {
            weft_cursor_init(&c, t, count, 0);
            CHECK(weft_cursor_seek(&c, first) == 0);
            MPI_Offset x = weft_cursor_tell_extent(&c);
            weft_cursor d;
            weft_cursor_init(&d, t, count, 0);
            CHECK(weft_cursor_seek_extent(&d, x) == 0);
            CHECK(weft_cursor_tell(&d) == first, "iteration %d: seek_extent(%lld) -> %lld, want %lld",
                  iter, (long long)x, (long long)weft_cursor_tell(&d), (long long)first);
        }
    }

    /* Unpack, whole and in two pieces, against MPI_Unpack. */
    if (!overlapping(t, count)) {
        struct buf d1 = buf_new(&in, count, rng), d2;
        d2 = d1;
        d2.mem = malloc(d1.len);
        memcpy(d2.mem, d1.mem, d1.len);
        d2.origin = d2.mem + (d1.origin - d1.mem);
        unsigned char *before = malloc(d1.len);
        memcpy(before, d1.mem, d1.len);
        pos = 0;
        CHECK_MPI(MPI_Unpack(ref, (int)total + 1, &pos, d1.origin, (int)count, type, MPI_COMM_SELF));
        MPI_Count split = total ? (MPI_Count)test_rand_below(rng, (uint64_t)total + 1) : 0;
        CHECK(weft_unpack(ref, split, d2.origin, count, t, 0) == split);
        CHECK(weft_unpack(ref + split, total - split, d2.origin, count, t, split) == total - split);
        CHECK(memcmp(d1.mem, d2.mem, d1.len) == 0, "iteration %d: unpack differs", iter);
        /* And the second piece through a cursor seeked to the split. */
        memcpy(d2.mem, before, d1.len);
        CHECK(weft_unpack(ref, split, d2.origin, count, t, 0) == split);
        weft_cursor u;
        weft_cursor_init(&u, t, count, (MPI_Offset)(intptr_t)d2.origin);
        CHECK(weft_cursor_seek(&u, split) == 0);
        CHECK(weft_unpack_cursor(&u, ref + split, total - split) == total - split);
        CHECK(memcmp(d1.mem, d2.mem, d1.len) == 0, "iteration %d: cursor unpack differs", iter);
        free(before);
        free(d1.mem);
        free(d2.mem);
    }
    free(src.mem);
    free(ref);
    free(mine);
}

/* weft_copy from (s, sc copies) into (d, dc copies) == MPI_Pack + MPI_Unpack. */
static void check_copy(MPI_Datatype s, MPI_Datatype d, uint64_t *rng, int iter)
{
    const weft_dtype *ts, *td;
    CHECK(weft_dtype_get(s, &ts) == 0 && weft_dtype_get(d, &td) == 0);
    struct info is = host_info(s), id = host_info(d);
    if (is.size == 0 || id.size == 0)
        return;
    MPI_Count dc = 1 + (MPI_Count)test_rand_below(rng, 3), total = dc * id.size;
    MPI_Count sc = (total + is.size - 1) / is.size;
    if (overlapping(td, dc))
        return;
    struct buf src = buf_new(&is, sc, rng), d1 = buf_new(&id, dc, rng), d2 = d1;
    d2.mem = malloc(d1.len);
    memcpy(d2.mem, d1.mem, d1.len);
    d2.origin = d2.mem + (d1.origin - d1.mem);
    char *ref = malloc((size_t)(sc * is.size) + 1);
    int pos = 0;
    CHECK_MPI(MPI_Pack(src.origin, (int)sc, s, ref, (int)(sc * is.size) + 1, &pos, MPI_COMM_SELF));
    pos = 0;
    CHECK_MPI(MPI_Unpack(ref, (int)(sc * is.size) + 1, &pos, d1.origin, (int)dc, d, MPI_COMM_SELF));

    weft_cursor cs, cd;
    weft_cursor_init(&cs, ts, sc, (MPI_Offset)(intptr_t)src.origin);
    weft_cursor_init(&cd, td, dc, (MPI_Offset)(intptr_t)d2.origin);
    MPI_Count done = 0;
    if (test_rand_below(rng, 2)) { /* start in the middle: both cursors seek */
        done = (MPI_Count)test_rand_below(rng, (uint64_t)total);
        CHECK(weft_cursor_seek(&cs, done) == 0 && weft_cursor_seek(&cd, done) == 0);
        char *tmp = malloc((size_t)done + 1);
        CHECK(weft_pack(src.origin, sc, ts, 0, done, tmp) == done);
        CHECK(weft_unpack(tmp, done, d2.origin, dc, td, 0) == done);
        free(tmp);
    }
    while (done < total) {
        MPI_Count chunk = 1 + (MPI_Count)test_rand_below(rng, 40);
        if (chunk > total - done)
            chunk = total - done;
        CHECK(weft_copy(&cd, &cs, chunk) == chunk);
        done += chunk;
        CHECK(weft_cursor_tell(&cd) == done && weft_cursor_tell(&cs) == done);
    }
    if (memcmp(d1.mem, d2.mem, d1.len) != 0) {
        fprintf(stderr, "src (count %lld):\n", (long long)sc);
        rt_print(s, 0);
        fprintf(stderr, "dst (count %lld):\n", (long long)dc);
        rt_print(d, 0);
        CHECK(0, "iteration %d: copy differs", iter);
    }
    free(src.mem);
    free(d1.mem);
    free(d2.mem);
    free(ref);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int iters = argc > 1 ? atoi(argv[1]) : 3000;
    uint64_t rng = test_seed(20240605, "test_dtype_diff") + (uint64_t)rank * 7919;
    for (int i = 0; i < iters; i++) {
        int depth = 1 + (int)test_rand_below(&rng, 4);
        MPI_Datatype a = rt_type(&rng, depth, 4096), b = rt_type(&rng, depth, 4096);
        check_type(a, &rng, i);
        check_copy(a, b, &rng, i);
        rt_free(&a);
        rt_free(&b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_dtype_diff: %d random types OK\n", iters);
    MPI_Finalize();
    return 0;
}
