/*
 * Seeded random nested MPI datatypes for the datatype engine's differential tests: every
 * constructor, negative strides and displacements, nesting to a given depth.  Returned types
 * are committed; sizes stay small so thousands run in seconds.
 */
#ifndef WEFT_TEST_RANDOM_TYPES_H
#define WEFT_TEST_RANDOM_TYPES_H

#include "helpers.h"

/* Open MPI 4.1 mis-handles vectors with negative strides (MPI_Type_vector(3,1,-1,MPI_BYTE)
 * reports lb 0 and packs bytes 0,1,2 instead of 0,-1,-2), so the generator uses negative
 * strides only where the host gets them right. */
static int rt_host_negative_strides(void)
{
    static int ok = -1;
    if (ok < 0) {
        MPI_Datatype v;
        MPI_Aint lb, ext;
        MPI_Type_vector(2, 1, -1, MPI_BYTE, &v);
        MPI_Type_get_extent(v, &lb, &ext);
        ok = lb == -1;
        MPI_Type_free(&v);
    }
    return ok;
}

/* No MPI_LONG_DOUBLE(_INT): MPICH 4.0 packs long double as an x87 value and does not carry
 * its 6 padding bytes, so byte comparison with weft's plain copy would fail on padding. */
static MPI_Datatype rt_named(uint64_t *rng)
{
    MPI_Datatype named[] = {MPI_BYTE,      MPI_CHAR,       MPI_SHORT,    MPI_INT,
                            MPI_LONG,      MPI_FLOAT,      MPI_DOUBLE,   MPI_INT64_T,
                            MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT,
                            MPI_SHORT_INT, MPI_C_DOUBLE_COMPLEX};
    return named[test_rand_below(rng, sizeof named / sizeof named[0])];
}

/* Empty parts inside a type break both hosts: Open MPI 4.1 tiles a struct that has an empty
 * member by a different extent in MPI_Pack/MPI_Unpack than MPI_Type_get_extent reports, and
 * MPICH 4.0's MPI_Pack/MPI_Unpack divide by zero on some types with empty parts.  So block
 * lengths are >= 1 and empty types (an empty darray) appear only at the top. */
#define RT_MIN_BLOCK 1

static int rt_rand(uint64_t *rng, int lo, int hi) /* inclusive */
{
    return lo + (int)test_rand_below(rng, (uint64_t)(hi - lo + 1));
}

static void rt_free(MPI_Datatype *t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
}

static MPI_Datatype rt_darray(uint64_t *rng, MPI_Datatype child)
{
    int nd = rt_rand(rng, 1, 3), gs[3], dist[3], darg[3], ps[3], size = 1;
    for (int d = 0; d < nd; d++) {
        gs[d] = rt_rand(rng, 1, 7);
        ps[d] = rt_rand(rng, 1, 3);
        int k = rt_rand(rng, 0, 4);
        if (k == 0) {
            dist[d] = MPI_DISTRIBUTE_NONE;
            ps[d] = 1;
            darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
        } else if (k == 1) {
            dist[d] = MPI_DISTRIBUTE_BLOCK;
            darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
        } else if (k == 2) {
            dist[d] = MPI_DISTRIBUTE_BLOCK;
            darg[d] = (gs[d] + ps[d] - 1) / ps[d] + rt_rand(rng, 0, 2);
        } else if (k == 3) {
            dist[d] = MPI_DISTRIBUTE_CYCLIC;
            darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
        } else {
            dist[d] = MPI_DISTRIBUTE_CYCLIC;
            darg[d] = rt_rand(rng, 1, 3);
        }
        size *= ps[d];
    }
    MPI_Datatype t;
    int rank = rt_rand(rng, 0, size - 1), order = test_rand_below(rng, 2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order, child, &t);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS) /* Open MPI 4.1 refuses some darrays of resized children */
        CHECK_MPI(MPI_Type_contiguous(1, child, &t));
    return t;
}

/* An uncommitted random type of nesting depth <= depth. */
static MPI_Datatype rt_gen(uint64_t *rng, int depth)
{
    if (depth <= 0 || test_rand_below(rng, 5) == 0)
        return rt_named(rng);
    MPI_Datatype child = rt_gen(rng, depth - 1), t = MPI_DATATYPE_NULL;
    int child_size;
    MPI_Type_size(child, &child_size);
    if (child_size == 0) { /* see RT_MIN_BLOCK: empty types only at the top */
        rt_free(&child);
        child = MPI_INT;
    }
    MPI_Aint lb, ext;
    MPI_Type_get_extent(child, &lb, &ext);
    int n = rt_rand(rng, 1, 4), bl[4], di[4];
    MPI_Aint da[4];
    for (int i = 0; i < 4; i++) {
        bl[i] = rt_rand(rng, RT_MIN_BLOCK, 3);
        di[i] = rt_rand(rng, -4, 8);
        da[i] = rt_rand(rng, -64, 128);
    }
    switch (test_rand_below(rng, 12)) {
    case 0:
        CHECK_MPI(MPI_Type_contiguous(rt_rand(rng, RT_MIN_BLOCK, 4), child, &t));
        break;
    case 1:
        CHECK_MPI(MPI_Type_vector(rt_rand(rng, 1, 4), rt_rand(rng, RT_MIN_BLOCK, 3),
                                  rt_rand(rng, rt_host_negative_strides() ? -4 : 0, 6), child, &t));
        break;
    case 2:
        CHECK_MPI(MPI_Type_create_hvector(rt_rand(rng, 1, 4), rt_rand(rng, RT_MIN_BLOCK, 3),
                                          rt_rand(rng, rt_host_negative_strides() ? -80 : 0, 160),
                                          child, &t));
        break;
    case 3:
        CHECK_MPI(MPI_Type_indexed(n, bl, di, child, &t));
        break;
    case 4:
        CHECK_MPI(MPI_Type_create_hindexed(n, bl, da, child, &t));
        break;
    case 5:
        CHECK_MPI(MPI_Type_create_indexed_block(n, bl[0], di, child, &t));
        break;
    case 6:
        CHECK_MPI(MPI_Type_create_hindexed_block(n, bl[0], da, child, &t));
        break;
    case 7: {
        MPI_Datatype types[4];
        types[0] = child;
        for (int i = 1; i < n; i++)
            types[i] = rt_gen(rng, depth - 1);
        for (int i = 0; i < n; i++) { /* see RT_MIN_BLOCK */
            int size;
            MPI_Type_size(types[i], &size);
            if (size == 0)
                types[i] = MPI_BYTE; /* leaked on purpose: rare and tiny */
        }
        CHECK_MPI(MPI_Type_create_struct(n, bl, da, types, &t));
        for (int i = 1; i < n; i++)
            if (types[i] != child)
                rt_free(&types[i]);
        break;
    }
    case 8: {
        int nd = rt_rand(rng, 1, 3), sizes[3], subs[3], starts[3];
        for (int d = 0; d < nd; d++) {
            sizes[d] = rt_rand(rng, 1, 5);
            subs[d] = rt_rand(rng, 1, sizes[d]);
            starts[d] = rt_rand(rng, 0, sizes[d] - subs[d]);
        }
        CHECK_MPI(MPI_Type_create_subarray(nd, sizes, subs, starts,
                                           test_rand_below(rng, 2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                                           child, &t));
        break;
    }
    case 9:
        t = rt_darray(rng, child);
        break;
    case 10:
        CHECK_MPI(MPI_Type_create_resized(child, rt_rand(rng, -16, 16), rt_rand(rng, 1, 48), &t));
        break;
    default:
        CHECK_MPI(MPI_Type_dup(child, &t));
        break;
    }
    rt_free(&child);
    return t;
}

/* A committed random type of at most max_size data bytes and a modest true extent. */
static MPI_Datatype rt_type(uint64_t *rng, int depth, MPI_Count max_size)
{
    for (;;) {
        MPI_Datatype t = rt_gen(rng, depth);
        MPI_Count size, lb, ext, tlb, text;
        MPI_Type_size_x(t, &size);
        MPI_Type_get_extent_x(t, &lb, &ext);
        MPI_Type_get_true_extent_x(t, &tlb, &text);
        if (size <= max_size && text <= 16 * max_size && ext <= 16 * max_size &&
            ext >= -16 * max_size) {
            int ni, na, nd, comb;
            MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
            if (comb != MPI_COMBINER_NAMED)
                CHECK_MPI(MPI_Type_commit(&t));
            return t;
        }
        rt_free(&t);
    }
}

/* Print a type's constructor tree (for failure reports). */
static void rt_print(MPI_Datatype t, int indent)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    MPI_Count size, lb, ext;
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent_x(t, &lb, &ext);
    fprintf(stderr, "%*scombiner %d size %lld lb %lld ext %lld", indent, "", comb, (long long)size,
            (long long)lb, (long long)ext);
    if (comb == MPI_COMBINER_NAMED) {
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(t, name, &len);
        fprintf(stderr, " %s\n", name);
        return;
    }
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
    fprintf(stderr, " ints");
    for (int i = 0; i < ni; i++)
        fprintf(stderr, " %d", ints[i]);
    fprintf(stderr, " addrs");
    for (int i = 0; i < na; i++)
        fprintf(stderr, " %ld", (long)addrs[i]);
    fprintf(stderr, "\n");
    for (int i = 0; i < nd; i++) {
        rt_print(types[i], indent + 2);
        rt_free(&types[i]);
    }
    free(ints);
    free(addrs);
    free(types);
}

#endif
