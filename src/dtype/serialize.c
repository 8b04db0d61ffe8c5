/*
 * Serialized decoded types: the collective engine ships each rank's file view (its filetype's
 * compact tree) to the aggregators once, so an aggregator computes where every sender's bytes
 * go from the layout itself and no per-element offset lists cross the network.  The format is
 * the tree in pre-order, little more than the nodes themselves: a vector of 10^9 blocks is a
 * few dozen bytes.  Shared subtrees are written once per use.
 */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "dtype/build.h"

#define FORMAT_TAG 0x77656674 /* "weft" */

typedef struct writer {
    unsigned char *data;
    size_t len, cap;
    int err;
} writer;

static void put(writer *w, const void *p, size_t n)
{
    if (w->err)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 256;
        while (cap < w->len + n)
            cap *= 2;
        unsigned char *grown = realloc(w->data, cap);
        if (!grown) {
            w->err = -12; /* -ENOMEM */
            return;
        }
        w->data = grown;
        w->cap = cap;
    }
    memcpy(w->data + w->len, p, n);
    w->len += n;
}

static void put64(writer *w, int64_t v) { put(w, &v, sizeof v); }

static void put_node(writer *w, const weft_node *n)
{
    put64(w, n->kind);
    put64(w, n->off);
    switch (n->kind) {
    case WEFT_NODE_BLOCK: put64(w, n->u.block.len); break;
    case WEFT_NODE_VECTOR:
        put64(w, n->u.vector.count);
        put64(w, n->u.vector.stride);
        put_node(w, n->u.vector.child);
        break;
    case WEFT_NODE_BLOCKS:
        put64(w, (int64_t)n->u.list.n);
        put(w, n->u.list.disp, n->u.list.n * sizeof *n->u.list.disp);
        put(w, n->u.list.len, n->u.list.n * sizeof *n->u.list.len);
        break;
    case WEFT_NODE_LIST:
        put64(w, (int64_t)n->u.list.n);
        put(w, n->u.list.disp, n->u.list.n * sizeof *n->u.list.disp);
        for (size_t i = 0; i < n->u.list.n; i++)
            put_node(w, n->u.list.child[i]);
        break;
    }
}

int weft_dtype_serialize(const weft_dtype *t, void **buffer, size_t *length)
{
    writer w = {0};
    int64_t header[7] = {FORMAT_TAG, t->size, t->lb, t->extent, t->true_lb, t->true_extent,
                         t->root != NULL};
    put(&w, header, sizeof header);
    if (t->root)
        put_node(&w, t->root);
    if (w.err) {
        free(w.data);
        return w.err;
    }
    *buffer = w.data;
    *length = w.len;
    return 0;
}

typedef struct reader {
    const unsigned char *data;
    size_t len, at;
    int bad;
} reader;

static const void *take(reader *r, size_t n)
{
    if (r->bad || n > r->len - r->at) {
        r->bad = 1;
        return NULL;
    }
    const void *p = r->data + r->at;
    r->at += n;
    return p;
}

static int64_t take64(reader *r)
{
    int64_t v = 0;
    const void *p = take(r, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

static const weft_node *take_node(weft_build *b, reader *r, int depth)
{
    if (depth > WEFT_NODE_MAX_DEPTH) {
        r->bad = 1;
        return NULL;
    }
    int64_t kind = take64(r), off = take64(r);
    switch (kind) {
    case WEFT_NODE_BLOCK: return weft_mk_block(b, take64(r), off);
    case WEFT_NODE_VECTOR: {
        int64_t count = take64(r), stride = take64(r);
        const weft_node *child = take_node(b, r, depth + 1);
        return r->bad ? NULL : weft_mk_vector(b, count, stride, child, off);
    }
    case WEFT_NODE_BLOCKS:
    case WEFT_NODE_LIST: {
        int64_t n = take64(r);
        if (n <= 0 || (uint64_t)n > (r->len - r->at) / sizeof(int64_t)) {
            r->bad = 1;
            return NULL;
        }
        MPI_Offset *disp = malloc((size_t)n * sizeof *disp);
        if (!disp) {
            b->err = -12;
            return NULL;
        }
        const void *p = take(r, (size_t)n * sizeof *disp);
        if (p)
            memcpy(disp, p, (size_t)n * sizeof *disp);
        const weft_node *made = NULL;
        if (kind == WEFT_NODE_BLOCKS) {
            MPI_Count *len = malloc((size_t)n * sizeof *len);
            p = take(r, (size_t)n * sizeof *len);
            if (len && p) {
                memcpy(len, p, (size_t)n * sizeof *len);
                made = weft_mk_runs(b, (size_t)n, disp, len);
            }
            free(len);
        } else {
            const weft_node **kids = calloc((size_t)n, sizeof *kids);
            for (int64_t i = 0; kids && i < n && !r->bad; i++)
                kids[i] = take_node(b, r, depth + 1);
            if (kids && !r->bad)
                made = weft_mk_list(b, (size_t)n, disp, kids);
            free(kids);
        }
        free(disp);
        return r->bad ? NULL : weft_mk_shift(b, made, off);
    }
    default: r->bad = 1; return NULL;
    }
}

int weft_dtype_deserialize(const void *buffer, size_t length, const weft_dtype **out)
{
    reader r = {.data = buffer, .len = length};
    int64_t header[7];
    for (int i = 0; i < 7; i++)
        header[i] = take64(&r);
    if (r.bad || header[0] != FORMAT_TAG)
        return WEFT_MPI_ERR(MPI_ERR_TYPE);
    weft_dtype *t = calloc(1, sizeof *t);
    if (!t)
        return -12;
    weft_build b = {.t = t, .err = 0};
    const weft_node *root = header[6] ? take_node(&b, &r, 1) : NULL;
    if (!b.err && (r.bad || r.at != r.len || (root ? root->size : 0) != header[1]))
        b.err = WEFT_MPI_ERR(MPI_ERR_TYPE);
    if (b.err) {
        weft_arena_free(t->arena);
        free(t);
        return b.err;
    }
    weft_dtype_finish(t, root, header[1], header[2], header[3], header[4], header[5]);
    *out = t;
    return 0;
}

void weft_dtype_put(const weft_dtype *t)
{
    weft_dtype_release((weft_dtype *)t);
}
