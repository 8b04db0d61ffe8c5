/*
 * Node constructors of the compact form (dtype_internal.h).  Every constructor normalizes as it
 * builds, which is what keeps regular types small:
 *   - a vector of one instance is its child, shifted;
 *   - a vector of blocks whose stride equals the block length is one block;
 *   - a vector of vectors that tile exactly is one vector;
 *   - lists of blocks merge adjacent runs, and equal runs at a constant stride become a vector;
 *   - a list whose entries share one child at a constant stride becomes a vector;
 *   - a node deeper than a cursor can walk is flattened into a BLOCKS leaf.
 * Sizes and bounds are computed with overflow checks: a type whose data size or bounds overflow
 * 64 bits fails with MPI_ERR_TYPE.
 */
#include "dtype/build.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

struct weft_arena_chunk {
    struct weft_arena_chunk *next;
    max_align_t data[];
};

void *weft_build_alloc(weft_build *b, size_t bytes)
{
    if (b->err)
        return NULL;
    struct weft_arena_chunk *c = malloc(sizeof *c + (bytes ? bytes : 1));
    if (!c) {
        b->err = -12; /* -ENOMEM */
        return NULL;
    }
    c->next = b->t->arena;
    b->t->arena = c;
    return c->data;
}

void weft_arena_free(struct weft_arena_chunk *c)
{
    while (c) {
        struct weft_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
}

static void overflow(weft_build *b)
{
    if (!b->err)
        b->err = WEFT_MPI_ERR(MPI_ERR_TYPE);
}

MPI_Offset weft_build_mul(weft_build *b, MPI_Offset x, MPI_Offset y)
{
    MPI_Offset r;
    if (__builtin_mul_overflow(x, y, &r)) {
        overflow(b);
        return 0;
    }
    return r;
}

MPI_Offset weft_build_add(weft_build *b, MPI_Offset x, MPI_Offset y)
{
    MPI_Offset r;
    if (__builtin_add_overflow(x, y, &r)) {
        overflow(b);
        return 0;
    }
    return r;
}

static weft_node *node_new(weft_build *b, int kind)
{
    weft_node *n = weft_build_alloc(b, sizeof *n);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->depth = 1;
    return n;
}

const weft_node *weft_mk_block(weft_build *b, MPI_Count len, MPI_Offset off)
{
    if (b->err || len <= 0)
        return NULL;
    weft_node *n = node_new(b, WEFT_NODE_BLOCK);
    if (!n)
        return NULL;
    n->size = len;
    n->off = off;
    n->lo = off;
    n->hi = weft_build_add(b, off, len);
    n->monotonic = 1;
    n->u.block.len = len;
    return n;
}

const weft_node *weft_mk_shift(weft_build *b, const weft_node *n, MPI_Offset d)
{
    if (!n || d == 0 || b->err)
        return b->err ? NULL : n;
    weft_node *c = weft_build_alloc(b, sizeof *c);
    if (!c)
        return NULL;
    *c = *n;
    c->off = weft_build_add(b, n->off, d);
    c->lo = weft_build_add(b, n->lo, d);
    c->hi = weft_build_add(b, n->hi, d);
    return c;
}

/* ---- Flattening a node that is too deep for the cursor ---------------------------------- */

struct runs {
    MPI_Offset *disp;
    MPI_Count *len;
    size_t n, cap;
    int err;
};

/* Blocks of a flattened subtree are bounded so that a pathological type fails cleanly
 * instead of exhausting memory. */
#define WEFT_FLATTEN_MAX_RUNS ((size_t)1 << 26)

static void runs_add(struct runs *r, MPI_Offset disp, MPI_Count len)
{
    if (r->err)
        return;
    if (r->n && r->disp[r->n - 1] + r->len[r->n - 1] == disp) {
        r->len[r->n - 1] += len;
        return;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        if (cap > WEFT_FLATTEN_MAX_RUNS) {
            r->err = WEFT_MPI_ERR(MPI_ERR_TYPE);
            return;
        }
        MPI_Offset *d = realloc(r->disp, cap * sizeof *d);
        if (d)
            r->disp = d;
        MPI_Count *l = realloc(r->len, cap * sizeof *l);
        if (l)
            r->len = l;
        if (!d || !l) {
            r->err = -12;
            return;
        }
        r->cap = cap;
    }
    r->disp[r->n] = disp;
    r->len[r->n] = len;
    r->n++;
}

static void runs_collect(struct runs *r, const weft_node *n, MPI_Offset origin)
{
    if (r->err)
        return;
    MPI_Offset o = origin + n->off;
    switch (n->kind) {
    case WEFT_NODE_BLOCK:
        runs_add(r, o, n->u.block.len);
        break;
    case WEFT_NODE_BLOCKS:
        for (size_t i = 0; i < n->u.list.n && !r->err; i++)
            runs_add(r, o + n->u.list.disp[i], n->u.list.len[i]);
        break;
    case WEFT_NODE_VECTOR:
        for (MPI_Count i = 0; i < n->u.vector.count && !r->err; i++)
            runs_collect(r, n->u.vector.child, o + i * n->u.vector.stride);
        break;
    case WEFT_NODE_LIST:
        for (size_t i = 0; i < n->u.list.n && !r->err; i++)
            runs_collect(r, n->u.list.child[i], o + n->u.list.disp[i]);
        break;
    }
}

static const weft_node *flatten_node(weft_build *b, const weft_node *n)
{
    struct runs r = {0};
    runs_collect(&r, n, 0);
    const weft_node *out = NULL;
    if (r.err)
        b->err = r.err;
    else
        out = weft_mk_runs(b, r.n, r.disp, r.len);
    free(r.disp);
    free(r.len);
    return out;
}

static const weft_node *finish(weft_build *b, weft_node *n)
{
    if (b->err || !n)
        return NULL;
    /* Blocks in order, without overlap, filling their bounds: the data is one run. */
    if (n->monotonic && n->size == n->hi - n->lo)
        return weft_mk_block(b, n->size, n->lo);
    if (n->depth > WEFT_NODE_MAX_DEPTH)
        return flatten_node(b, n);
    return n;
}

/* ---- Vector ------------------------------------------------------------------------------ */

const weft_node *weft_mk_vector(weft_build *b, MPI_Count count, MPI_Offset stride,
                                const weft_node *child, MPI_Offset off)
{
    if (b->err || !child || count == 0)
        return NULL;
    if (count < 0) {
        b->err = WEFT_MPI_ERR(MPI_ERR_TYPE);
        return NULL;
    }
    if (count == 1)
        return weft_mk_shift(b, child, off);
    if (child->kind == WEFT_NODE_BLOCK && child->u.block.len == stride)
        return weft_mk_block(b, weft_build_mul(b, count, stride), weft_build_add(b, off, child->off));
    if (child->kind == WEFT_NODE_VECTOR &&
        stride == (MPI_Offset)child->u.vector.count * child->u.vector.stride)
        return weft_mk_vector(b, weft_build_mul(b, count, child->u.vector.count),
                              child->u.vector.stride, child->u.vector.child,
                              weft_build_add(b, off, child->off));
    weft_node *n = node_new(b, WEFT_NODE_VECTOR);
    if (!n)
        return NULL;
    n->u.vector.count = count;
    n->u.vector.stride = stride;
    n->u.vector.child = child;
    n->size = weft_build_mul(b, count, child->size);
    n->off = off;
    MPI_Offset span = weft_build_mul(b, count - 1, stride);
    if (stride >= 0) {
        n->lo = weft_build_add(b, off, child->lo);
        n->hi = weft_build_add(b, weft_build_add(b, off, span), child->hi);
    } else {
        n->lo = weft_build_add(b, weft_build_add(b, off, span), child->lo);
        n->hi = weft_build_add(b, off, child->hi);
    }
    n->monotonic = child->monotonic && stride >= child->hi - child->lo;
    n->depth = child->depth + 1;
    return finish(b, n);
}

/* ---- Runs (a leaf list of blocks) ---------------------------------------------------------- */

const weft_node *weft_mk_runs(weft_build *b, size_t count, const MPI_Offset *disp,
                              const MPI_Count *len)
{
    if (b->err)
        return NULL;
    /* Merge adjacent runs and drop empty ones into arena arrays. */
    MPI_Offset *d = weft_build_alloc(b, (count ? count : 1) * sizeof *d);
    MPI_Count *l = weft_build_alloc(b, (count ? count : 1) * sizeof *l);
    if (!d || !l)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (len[i] < 0) {
            b->err = WEFT_MPI_ERR(MPI_ERR_TYPE);
            return NULL;
        }
        if (len[i] == 0)
            continue;
        if (n && d[n - 1] + l[n - 1] == disp[i]) {
            l[n - 1] = weft_build_add(b, l[n - 1], len[i]);
            continue;
        }
        d[n] = disp[i];
        l[n] = len[i];
        n++;
    }
    if (n == 0)
        return NULL;
    if (n == 1)
        return weft_mk_block(b, l[0], d[0]);
    int regular = 1;
    for (size_t i = 1; i < n && regular; i++)
        regular = l[i] == l[0] && d[i] - d[i - 1] == d[1] - d[0];
    if (regular)
        return weft_mk_vector(b, (MPI_Count)n, d[1] - d[0], weft_mk_block(b, l[0], 0), d[0]);

    weft_node *node = node_new(b, WEFT_NODE_BLOCKS);
    MPI_Count *prefix = weft_build_alloc(b, (n + 1) * sizeof *prefix);
    if (!node || !prefix)
        return NULL;
    prefix[0] = 0;
    node->lo = d[0];
    node->hi = d[0] + l[0];
    node->monotonic = 1;
    for (size_t i = 0; i < n; i++) {
        prefix[i + 1] = weft_build_add(b, prefix[i], l[i]);
        MPI_Offset end = weft_build_add(b, d[i], l[i]);
        if (i && d[i] < d[i - 1] + l[i - 1])
            node->monotonic = 0;
        if (d[i] < node->lo)
            node->lo = d[i];
        if (end > node->hi)
            node->hi = end;
    }
    node->size = prefix[n];
    node->u.list.n = n;
    node->u.list.disp = d;
    node->u.list.len = l;
    node->u.list.prefix = prefix;
    return b->err ? NULL : node;
}

/* ---- List of children ---------------------------------------------------------------------- */

const weft_node *weft_mk_list(weft_build *b, size_t count, const MPI_Offset *disp,
                              const weft_node *const *child)
{
    if (b->err)
        return NULL;
    size_t n = 0, first = 0;
    int all_blocks = 1, same_child = 1;
    for (size_t i = 0; i < count; i++) {
        if (!child[i])
            continue;
        if (n == 0)
            first = i;
        else if (child[i] != child[first])
            same_child = 0;
        if (child[i]->kind != WEFT_NODE_BLOCK)
            all_blocks = 0;
        n++;
    }
    if (n == 0)
        return NULL;
    if (n == 1)
        return weft_mk_shift(b, child[first], disp[first]);

    MPI_Offset *d = malloc(n * sizeof *d);
    MPI_Count *l = malloc(n * sizeof *l);
    const weft_node **c = malloc(n * sizeof *c);
    const weft_node *out = NULL;
    if (!d || !l || !c) {
        b->err = -12;
        goto done;
    }
    n = 0;
    for (size_t i = 0; i < count; i++) {
        if (!child[i])
            continue;
        d[n] = disp[i];
        c[n] = child[i];
        l[n] = child[i]->size;
        n++;
    }
    if (all_blocks) {
        for (size_t i = 0; i < n; i++)
            d[i] = weft_build_add(b, d[i], c[i]->off);
        out = weft_mk_runs(b, n, d, l);
        goto done;
    }
    if (same_child) {
        int regular = 1;
        for (size_t i = 1; i < n && regular; i++)
            regular = d[i] - d[i - 1] == d[1] - d[0];
        if (regular) {
            out = weft_mk_vector(b, (MPI_Count)n, d[1] - d[0], c[0], d[0]);
            goto done;
        }
    }
    weft_node *node = node_new(b, WEFT_NODE_LIST);
    MPI_Offset *ad = weft_build_alloc(b, n * sizeof *ad);
    const weft_node **ac = weft_build_alloc(b, n * sizeof *ac);
    MPI_Count *prefix = weft_build_alloc(b, (n + 1) * sizeof *prefix);
    if (!node || !ad || !ac || !prefix)
        goto done;
    memcpy(ad, d, n * sizeof *ad);
    memcpy(ac, c, n * sizeof *ac);
    prefix[0] = 0;
    node->monotonic = 1;
    for (size_t i = 0; i < n; i++) {
        prefix[i + 1] = weft_build_add(b, prefix[i], c[i]->size);
        MPI_Offset lo = weft_build_add(b, d[i], c[i]->lo), hi = weft_build_add(b, d[i], c[i]->hi);
        if (i == 0 || lo < node->lo)
            node->lo = lo;
        if (i == 0 || hi > node->hi)
            node->hi = hi;
        if (!c[i]->monotonic || (i && lo < d[i - 1] + c[i - 1]->hi))
            node->monotonic = 0;
        if (c[i]->depth + 1 > node->depth)
            node->depth = c[i]->depth + 1;
    }
    node->size = prefix[n];
    node->u.list.n = n;
    node->u.list.disp = ad;
    node->u.list.child = ac;
    node->u.list.prefix = prefix;
    out = finish(b, node);
done:
    free(d);
    free(l);
    free(c);
    return b->err ? NULL : out;
}

size_t weft_node_count(const weft_node *n)
{
    if (!n)
        return 0;
    switch (n->kind) {
    case WEFT_NODE_VECTOR:
        return 1 + weft_node_count(n->u.vector.child);
    case WEFT_NODE_LIST: {
        size_t s = 1;
        for (size_t i = 0; i < n->u.list.n; i++)
            s += weft_node_count(n->u.list.child[i]);
        return s;
    }
    default:
        return 1;
    }
}
