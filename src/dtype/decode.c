/*
 * Decoding MPI datatypes into the compact form, and the cache that keeps one decoding per type.
 *
 * The layout comes from MPI_Type_get_envelope/get_contents (the classic int versions: Open MPI
 * 4.1 has no MPI_Type_get_contents_c).  The bounds (lb, extent, true lb, true extent) come from
 * the host's MPI_Type_get_extent_x/get_true_extent_x: they are authoritative, and they are all
 * that resizing and the MPI_LB/MPI_UB markers change, so the tree itself never has to model
 * them.  A child's stride inside a constructor is likewise the host's extent of the child.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "dtype/build.h"

/* Open MPI without MPI-1 compatibility hides the *_INTEGER combiners (Fortran MPI-1 calls);
 * their enum slots keep OMPI_WAS_ names. */
#if defined(OPEN_MPI) && !OMPI_ENABLE_MPI1_COMPAT
#define COMBINER_HVECTOR_INTEGER OMPI_WAS_MPI_COMBINER_HVECTOR_INTEGER
#define COMBINER_HINDEXED_INTEGER OMPI_WAS_MPI_COMBINER_HINDEXED_INTEGER
#define COMBINER_STRUCT_INTEGER OMPI_WAS_MPI_COMBINER_STRUCT_INTEGER
#else
#define COMBINER_HVECTOR_INTEGER MPI_COMBINER_HVECTOR_INTEGER
#define COMBINER_HINDEXED_INTEGER MPI_COMBINER_HINDEXED_INTEGER
#define COMBINER_STRUCT_INTEGER MPI_COMBINER_STRUCT_INTEGER
#endif

static uint64_t decode_count;

uint64_t weft_dtype_decode_count(void)
{
    return __atomic_load_n(&decode_count, __ATOMIC_RELAXED);
}

static int bad_type(void) { return WEFT_MPI_ERR(MPI_ERR_TYPE); }

static int combiner_of(MPI_Datatype dt)
{
    int ni, na, nd, comb;
    if (MPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return -1;
    return comb;
}

/* ---- Named types ------------------------------------------------------------------------- */

/* The pair types of MPI_MINLOC/MAXLOC are named but have a hole: value at 0, int after it at
 * the C struct's alignment. */
struct pair_layout { MPI_Datatype type, value; size_t int_offset; };
struct float_int { float v; int i; };
struct double_int { double v; int i; };
struct long_int { long v; int i; };
struct short_int { short v; int i; };
struct long_double_int { long double v; int i; };

static const weft_node *decode_named(weft_build *b, MPI_Datatype dt)
{
    MPI_Count size, tlb, text;
    if (MPI_Type_size_x(dt, &size) != MPI_SUCCESS || size == MPI_UNDEFINED ||
        MPI_Type_get_true_extent_x(dt, &tlb, &text) != MPI_SUCCESS || text == MPI_UNDEFINED) {
        b->err = bad_type();
        return NULL;
    }
    if (size == 0)
        return NULL; /* MPI_LB, MPI_UB, or an empty named type */
    const struct pair_layout pairs[] = {
        {MPI_FLOAT_INT, MPI_FLOAT, offsetof(struct float_int, i)},
        {MPI_DOUBLE_INT, MPI_DOUBLE, offsetof(struct double_int, i)},
        {MPI_LONG_INT, MPI_LONG, offsetof(struct long_int, i)},
        {MPI_SHORT_INT, MPI_SHORT, offsetof(struct short_int, i)},
        {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, offsetof(struct long_double_int, i)},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (dt != pairs[i].type)
            continue;
        MPI_Count vsize;
        MPI_Type_size_x(pairs[i].value, &vsize);
        MPI_Offset disp[2] = {0, (MPI_Offset)pairs[i].int_offset};
        MPI_Count len[2] = {vsize, (MPI_Count)sizeof(int)};
        return weft_mk_runs(b, 2, disp, len);
    }
    /* Every other named type (MPI_2INT and the Fortran pairs too) is one block. */
    if (text != size) {
        b->err = bad_type();
        return NULL;
    }
    return weft_mk_block(b, size, tlb);
}

/* ---- Derived types ------------------------------------------------------------------------ */

static const weft_node *decode(weft_build *b, MPI_Datatype dt);

/* `blocklen` instances of child (extent ext) at each byte displacement disp[i]. */
static const weft_node *indexed(weft_build *b, int n, const MPI_Count *blocklen,
                                const MPI_Offset *disp, const weft_node *child, MPI_Offset ext)
{
    if (n < 0) {
        b->err = bad_type();
        return NULL;
    }
    if (!child || n == 0)
        return NULL;
    const weft_node *out = NULL;
    if (child->kind == WEFT_NODE_BLOCK && child->u.block.len == ext) {
        /* Contiguous element: the entries are runs of bytes. */
        MPI_Offset *d = malloc((size_t)n * sizeof *d);
        MPI_Count *l = malloc((size_t)n * sizeof *l);
        if (d && l) {
            for (int i = 0; i < n; i++) {
                d[i] = weft_build_add(b, disp[i], child->off);
                l[i] = weft_build_mul(b, blocklen[i], ext);
            }
            out = weft_mk_runs(b, (size_t)n, d, l);
        } else {
            b->err = -12;
        }
        free(d);
        free(l);
        return out;
    }
    const weft_node **c = malloc((size_t)n * sizeof *c);
    if (!c) {
        b->err = -12;
        return NULL;
    }
    const weft_node *prev = NULL;
    MPI_Count prev_len = -1;
    for (int i = 0; i < n; i++) {
        if (blocklen[i] != prev_len) { /* equal block lengths share one node */
            prev = weft_mk_vector(b, blocklen[i], ext, child, 0);
            prev_len = blocklen[i];
        }
        c[i] = prev;
    }
    out = weft_mk_list(b, (size_t)n, disp, c);
    free(c);
    return out;
}

/* One dimension of a darray: the global indices of [0, g) this process owns, each an instance
 * of `inner` at index * ds bytes, in increasing index order (MPI-3.1 §4.1.4). */
static const weft_node *darray_dim(weft_build *b, const weft_node *inner, MPI_Offset ds,
                                   MPI_Count g, int distrib, int darg, MPI_Count p, MPI_Count r)
{
    if (distrib == MPI_DISTRIBUTE_NONE)
        return weft_mk_vector(b, g, ds, inner, 0);
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        MPI_Count blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        MPI_Count start = r * blk, n = g - start;
        if (n > blk)
            n = blk;
        if (n <= 0)
            return NULL;
        return weft_mk_vector(b, n, ds, inner, weft_build_mul(b, start, ds));
    }
    /* Cyclic(k): block j of k indices belongs to process j mod p. */
    MPI_Count k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (k <= 0) {
        b->err = bad_type();
        return NULL;
    }
    MPI_Count nblocks = (g + k - 1) / k;
    if (nblocks <= r)
        return NULL;
    MPI_Count mine = (nblocks - r - 1) / p + 1;
    MPI_Count last = r + (mine - 1) * p, last_len = g - last * k;
    if (last_len > k)
        last_len = k;
    MPI_Count full = last_len == k ? mine : mine - 1;
    const weft_node *parts[2];
    MPI_Offset disp[2] = {0, 0};
    parts[0] = weft_mk_vector(b, full, weft_build_mul(b, p * k, ds),
                              weft_mk_vector(b, k, ds, inner, 0), weft_build_mul(b, r * k, ds));
    parts[1] = last_len == k ? NULL
                             : weft_mk_vector(b, last_len, ds, inner, weft_build_mul(b, last * k, ds));
    return weft_mk_list(b, 2, disp, parts);
}

static const weft_node *subarray(weft_build *b, const int *ints, const weft_node *child,
                                 MPI_Offset ext)
{
    int nd = ints[0];
    const int *sizes = ints + 1, *subs = ints + 1 + nd, *starts = ints + 1 + 2 * nd;
    int order = ints[1 + 3 * nd];
    const weft_node *n = child;
    MPI_Offset ds = ext;
    for (int i = 0; i < nd; i++) {
        int d = order == MPI_ORDER_C ? nd - 1 - i : i;
        n = weft_mk_vector(b, subs[d], ds, n, weft_build_mul(b, starts[d], ds));
        ds = weft_build_mul(b, ds, sizes[d]);
    }
    return n;
}

static const weft_node *darray(weft_build *b, const int *ints, const weft_node *child,
                               MPI_Offset ext)
{
    int rank = ints[1], nd = ints[2];
    const int *gsizes = ints + 3, *distribs = ints + 3 + nd, *dargs = ints + 3 + 2 * nd;
    const int *psizes = ints + 3 + 3 * nd;
    int order = ints[3 + 4 * nd];
    if (nd <= 0 || nd > 64) {
        b->err = bad_type();
        return NULL;
    }
    /* Processes form a row-major grid whatever the array order. */
    MPI_Count coords[64];
    int rest = rank;
    for (int d = nd - 1; d >= 0; d--) {
        if (psizes[d] <= 0) {
            b->err = bad_type();
            return NULL;
        }
        coords[d] = rest % psizes[d];
        rest /= psizes[d];
    }
    const weft_node *n = child;
    MPI_Offset ds = ext;
    for (int i = 0; i < nd; i++) {
        int d = order == MPI_ORDER_C ? nd - 1 - i : i;
        n = darray_dim(b, n, ds, gsizes[d], distribs[d], dargs[d], psizes[d], coords[d]);
        ds = weft_build_mul(b, ds, gsizes[d]);
    }
    return n;
}

static const weft_node *decode_contents(weft_build *b, int comb, const int *ints,
                                        const MPI_Aint *addrs, int nd, const weft_node **kid,
                                        const MPI_Offset *kext)
{
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* the new bounds are the host's to report */
        return kid[0];
    case MPI_COMBINER_CONTIGUOUS:
        return weft_mk_vector(b, ints[0], kext[0], kid[0], 0);
    case MPI_COMBINER_VECTOR:
        return weft_mk_vector(b, ints[0], weft_build_mul(b, ints[2], kext[0]),
                              weft_mk_vector(b, ints[1], kext[0], kid[0], 0), 0);
    case MPI_COMBINER_HVECTOR:
        return weft_mk_vector(b, ints[0], addrs[0], weft_mk_vector(b, ints[1], kext[0], kid[0], 0), 0);
    case COMBINER_HVECTOR_INTEGER:
        return weft_mk_vector(b, ints[0], ints[2], weft_mk_vector(b, ints[1], kext[0], kid[0], 0), 0);
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case COMBINER_HINDEXED_INTEGER:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
    case COMBINER_STRUCT_INTEGER: {
        int n = ints[0];
        if (n < 0) {
            b->err = bad_type();
            return NULL;
        }
        MPI_Offset *disp = malloc(((size_t)n + 1) * sizeof *disp);
        MPI_Count *bl = malloc(((size_t)n + 1) * sizeof *bl);
        const weft_node **c = malloc(((size_t)n + 1) * sizeof *c);
        const weft_node *out = NULL;
        if (!disp || !bl || !c) {
            b->err = -12;
            goto done;
        }
        int block = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK;
        for (int i = 0; i < n; i++) {
            bl[i] = block ? ints[1] : ints[1 + i];
            switch (comb) {
            case MPI_COMBINER_INDEXED:
                disp[i] = weft_build_mul(b, ints[1 + n + i], kext[0]);
                break;
            case MPI_COMBINER_INDEXED_BLOCK:
                disp[i] = weft_build_mul(b, ints[2 + i], kext[0]);
                break;
            case COMBINER_HINDEXED_INTEGER:
            case COMBINER_STRUCT_INTEGER:
                disp[i] = ints[1 + n + i];
                break;
            default:
                disp[i] = addrs[i];
            }
        }
        if (comb == MPI_COMBINER_STRUCT || comb == COMBINER_STRUCT_INTEGER) {
            for (int i = 0; i < n; i++)
                c[i] = weft_mk_vector(b, bl[i], kext[i], kid[i], 0);
            out = weft_mk_list(b, (size_t)n, disp, c);
        } else {
            out = indexed(b, n, bl, disp, kid[0], kext[0]);
        }
    done:
        free(disp);
        free(bl);
        free(c);
        return out;
    }
    case MPI_COMBINER_SUBARRAY:
        return subarray(b, ints, kid[0], kext[0]);
    case MPI_COMBINER_DARRAY:
        return darray(b, ints, kid[0], kext[0]);
    default:
        (void)nd;
        b->err = bad_type();
        return NULL;
    }
}

static const weft_node *decode(weft_build *b, MPI_Datatype dt)
{
    int ni, na, nd, comb;
    if (b->err)
        return NULL;
    if (MPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        b->err = bad_type();
        return NULL;
    }
    if (comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
        comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER)
        return decode_named(b, dt);

    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *addrs = malloc(((size_t)na + 1) * sizeof *addrs);
    MPI_Datatype *types = malloc(((size_t)nd + 1) * sizeof *types);
    const weft_node **kid = malloc(((size_t)nd + 1) * sizeof *kid);
    MPI_Offset *kext = malloc(((size_t)nd + 1) * sizeof *kext);
    const weft_node *out = NULL;
    int got = 0;
    if (!ints || !addrs || !types || !kid || !kext) {
        b->err = -12;
        goto done;
    }
    if (MPI_Type_get_contents(dt, ni, na, nd, ints, addrs, types) != MPI_SUCCESS) {
        b->err = bad_type();
        goto done;
    }
    got = 1;
    for (int i = 0; i < nd; i++) {
        if (i > 0 && types[i] == types[i - 1]) { /* struct of repeated types: decode once */
            kid[i] = kid[i - 1];
            kext[i] = kext[i - 1];
            continue;
        }
        MPI_Count lb, ext;
        if (MPI_Type_get_extent_x(types[i], &lb, &ext) != MPI_SUCCESS || ext == MPI_UNDEFINED) {
            b->err = bad_type();
            goto done;
        }
        kext[i] = ext;
        kid[i] = decode(b, types[i]);
    }
    out = decode_contents(b, comb, ints, addrs, nd, kid, kext);
done:
    /* get_contents hands back new references to derived children: free those, never the
     * named ones. */
    if (got) {
        int *comb_of = malloc(((size_t)nd + 1) * sizeof *comb_of);
        for (int i = 0; i < nd && comb_of; i++)
            comb_of[i] = combiner_of(types[i]);
        for (int i = 0; i < nd && comb_of; i++)
            if (comb_of[i] != MPI_COMBINER_NAMED && comb_of[i] != MPI_COMBINER_F90_REAL &&
                comb_of[i] != MPI_COMBINER_F90_COMPLEX && comb_of[i] != MPI_COMBINER_F90_INTEGER &&
                comb_of[i] != -1)
                MPI_Type_free(&types[i]);
        free(comb_of);
    }
    free(ints);
    free(addrs);
    free(types);
    free(kid);
    free(kext);
    return b->err ? NULL : out;
}

/* ---- One decoding ------------------------------------------------------------------------- */

void weft_dtype_release(weft_dtype *t)
{
    if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        weft_arena_free(t->arena);
        free(t);
    }
}

/* Fill a type's summary from its tree and the host's bounds (shared with serialize.c). */
void weft_dtype_finish(weft_dtype *t, const weft_node *root, MPI_Count size, MPI_Count lb,
                       MPI_Count extent, MPI_Count tlb, MPI_Count text)
{
    t->root = root;
    t->size = size;
    t->lb = lb;
    t->extent = extent;
    t->true_lb = tlb;
    t->true_extent = text;
    t->refs = 1;
    t->nodes = weft_node_count(root);
    t->top.kind = WEFT_NODE_VECTOR;
    t->top.size = size;
    t->top.u.vector.count = INT64_MAX;
    t->top.u.vector.stride = extent;
    t->top.u.vector.child = root;
    t->top.depth = root ? root->depth + 1 : 1;
    t->tile_contiguous = root && root->kind == WEFT_NODE_BLOCK && root->u.block.len == extent;
    t->contiguous = size == extent && (size == 0 || (t->tile_contiguous && root->off == lb));
    /* The standard asks a filetype's typemap (one copy) for non-negative, non-decreasing
     * displacements; whether copies tiled by the extent overlap is a separate question: HDF5's
     * chunked collective writes build structs of resized members whose sticky lb/ub (Open MPI
     * follows MPI's marker rules) give an extent shorter than the data, and access one copy. */
    t->monotonic = !root || (root->monotonic && root->lo >= 0);
    t->tiles_in_order = !root || extent >= root->hi - root->lo;
}

static int dtype_new(MPI_Datatype dt, weft_dtype **out)
{
    MPI_Count size, lb, extent, tlb, text;
    if (MPI_Type_size_x(dt, &size) != MPI_SUCCESS || size == MPI_UNDEFINED ||
        MPI_Type_get_extent_x(dt, &lb, &extent) != MPI_SUCCESS || extent == MPI_UNDEFINED ||
        lb == MPI_UNDEFINED ||
        MPI_Type_get_true_extent_x(dt, &tlb, &text) != MPI_SUCCESS || text == MPI_UNDEFINED ||
        tlb == MPI_UNDEFINED)
        return bad_type(); /* size or bounds overflow MPI_Count */
    weft_dtype *t = calloc(1, sizeof *t);
    if (!t)
        return -12;
    weft_build b = {.t = t, .err = 0};
    const weft_node *root = decode(&b, dt);
    if (!b.err && (root ? root->size : 0) != size)
        b.err = WEFT_MPI_ERR(MPI_ERR_INTERN); /* the decoder disagrees with the host: a bug */
    if (b.err) {
        weft_arena_free(t->arena);
        free(t);
        return b.err;
    }
    __atomic_add_fetch(&decode_count, 1, __ATOMIC_RELAXED);
    weft_dtype_finish(t, root, size, lb, extent, tlb, text);
    *out = t;
    return 0;
}

/* ---- Cache --------------------------------------------------------------------------------
 * Derived types carry their decoding as an attribute: MPI_Type_dup's copy callback shares it
 * (reference count), MPI_Type_free's delete callback drops it.  Named types cannot portably
 * carry attributes, so they live in a small table freed at MPI_Finalize (through a delete
 * callback on MPI_COMM_SELF, which MPI_Finalize runs first). */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int type_keyval = MPI_KEYVAL_INVALID;
static int self_keyval = MPI_KEYVAL_INVALID;
static struct named_entry { MPI_Datatype type; weft_dtype *t; } *named;
static size_t named_n, named_cap;

static int attr_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    weft_dtype *t = in;
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int attr_delete(MPI_Datatype type, int keyval, void *attr, void *extra)
{
    weft_dtype_release(attr);
    return MPI_SUCCESS;
}

static int finalize_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    pthread_mutex_lock(&cache_lock);
    for (size_t i = 0; i < named_n; i++)
        weft_dtype_release(named[i].t);
    free(named);
    named = NULL;
    named_n = named_cap = 0;
    if (type_keyval != MPI_KEYVAL_INVALID)
        MPI_Type_free_keyval(&type_keyval);
    pthread_mutex_unlock(&cache_lock);
    return MPI_SUCCESS;
}

/* Called with cache_lock held. */
static int cache_init(void)
{
    if (type_keyval != MPI_KEYVAL_INVALID)
        return 0;
    if (MPI_Type_create_keyval(attr_copy, attr_delete, &type_keyval, NULL) != MPI_SUCCESS)
        return WEFT_MPI_ERR(MPI_ERR_INTERN);
    if (self_keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &self_keyval, NULL) ==
            MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL);
    return 0;
}

/* MPI has no "is committed" query.  A zero-count MPI_Pack checks it on both hosts (Open MPI
 * 4.1 and MPICH 4.0 return MPI_ERR_TYPE for an uncommitted type and touch no memory), while
 * MPI_Pack_size on an uncommitted type crashes Open MPI 4.1.  Errors are returned, not
 * fatal, by switching MPI_COMM_SELF's handler around the probe. */
static int is_committed(MPI_Datatype dt)
{
    MPI_Errhandler old;
    if (MPI_Comm_get_errhandler(MPI_COMM_SELF, &old) != MPI_SUCCESS)
        return 0;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char in[1] = {0}, out[1];
    int position = 0;
    int rc = MPI_Pack(in, 0, dt, out, 0, &position, MPI_COMM_SELF);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, old);
    MPI_Errhandler_free(&old);
    return rc == MPI_SUCCESS;
}

int weft_dtype_get(MPI_Datatype type, const weft_dtype **out)
{
    if (type == MPI_DATATYPE_NULL)
        return bad_type();
    int comb = combiner_of(type);
    if (comb < 0)
        return bad_type();
    pthread_mutex_lock(&cache_lock);
    int rc = cache_init();
    if (rc)
        goto done;
    if (comb == MPI_COMBINER_NAMED) {
        for (size_t i = 0; i < named_n; i++)
            if (named[i].type == type) {
                *out = named[i].t;
                goto done;
            }
        if (named_n == named_cap) {
            size_t cap = named_cap ? 2 * named_cap : 64;
            struct named_entry *e = realloc(named, cap * sizeof *e);
            if (!e) {
                rc = -12;
                goto done;
            }
            named = e;
            named_cap = cap;
        }
        weft_dtype *t;
        rc = dtype_new(type, &t);
        if (rc)
            goto done;
        named[named_n].type = type;
        named[named_n].t = t;
        named_n++;
        *out = t;
        goto done;
    }
    void *attr = NULL;
    int flag = 0;
    if (MPI_Type_get_attr(type, type_keyval, &attr, &flag) == MPI_SUCCESS && flag) {
        *out = attr;
        goto done;
    }
    if (!is_committed(type)) {
        rc = bad_type();
        goto done;
    }
    weft_dtype *t;
    rc = dtype_new(type, &t);
    if (rc)
        goto done;
    if (MPI_Type_set_attr(type, type_keyval, t) != MPI_SUCCESS) {
        weft_dtype_release(t);
        rc = WEFT_MPI_ERR(MPI_ERR_INTERN);
        goto done;
    }
    *out = t;
done:
    pthread_mutex_unlock(&cache_lock);
    return rc;
}

/* ---- Queries -------------------------------------------------------------------------------- */

MPI_Count weft_dtype_size(const weft_dtype *t) { return t->size; }
MPI_Count weft_dtype_lb(const weft_dtype *t) { return t->lb; }
MPI_Count weft_dtype_extent(const weft_dtype *t) { return t->extent; }
MPI_Count weft_dtype_true_lb(const weft_dtype *t) { return t->true_lb; }
MPI_Count weft_dtype_true_extent(const weft_dtype *t) { return t->true_extent; }
int weft_dtype_is_contiguous(const weft_dtype *t) { return t->contiguous; }
int weft_dtype_is_monotonic(const weft_dtype *t) { return t->monotonic; }
int weft_dtype_tiles_in_order(const weft_dtype *t) { return t->tiles_in_order; }
size_t weft_dtype_node_count(const weft_dtype *t) { return t->nodes; }
