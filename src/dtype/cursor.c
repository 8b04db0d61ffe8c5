/*
 * The datatype cursor (seed 002 §2): a stack with one frame per tree level.  Frame 0 walks the
 * copies of the type (the type's `top` node, a vector of the root by extent, whose count is the
 * cursor's); below it each frame records which instance/entry of its node the cursor is in and
 * the absolute origin of that node's instance.  The leaf block under the cursor is kept as
 * (block_offset, block_left), so `next` can look ahead one block to merge adjacent ones.
 *
 * A type whose copies touch (one block as long as the extent) needs no frames at all: the whole
 * data is one run, which is what lets a contiguous file view or buffer cost nothing.
 */
#include "common/error.h"
#include "dtype/dtype_internal.h"

/* The block length reported for an unbounded contiguous cursor: far past any real file. */
#define UNBOUNDED_RUN ((MPI_Count)1 << 62)

static MPI_Count cursor_total(const weft_cursor *c)
{
    MPI_Count total;
    if (c->count < 0)
        return -1;
    if (__builtin_mul_overflow(c->count, c->type->size, &total))
        return INT64_MAX;
    return total;
}

static void set_end(weft_cursor *c)
{
    c->depth = 0;
    c->block_left = 0;
}

/* Largest i in [0, n) with prefix[i] <= pos (prefix[0] == 0 <= pos). */
static size_t prefix_search(const MPI_Count *prefix, size_t n, MPI_Count pos)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (prefix[mid] <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Enter node n at depth d (instance origin `origin`) and go down to its first leaf block. */
static void descend(weft_cursor *c, int d, const weft_node *n, MPI_Offset origin)
{
    for (;;) {
        weft_cursor_frame *f = &c->stack[d];
        f->node = n;
        f->index = 0;
        f->origin = origin;
        MPI_Offset o = origin + n->off;
        switch (n->kind) {
        case WEFT_NODE_BLOCK:
            c->block_offset = o;
            c->block_left = n->u.block.len;
            c->depth = d + 1;
            return;
        case WEFT_NODE_BLOCKS:
            c->block_offset = o + n->u.list.disp[0];
            c->block_left = n->u.list.len[0];
            c->depth = d + 1;
            return;
        case WEFT_NODE_VECTOR:
            origin = o;
            n = n->u.vector.child;
            break;
        default: /* LIST */
            origin = o + n->u.list.disp[0];
            n = n->u.list.child[0];
            break;
        }
        d++;
    }
}

int weft_cursor_advance_block(weft_cursor *c)
{
    for (int d = c->depth - 1; d >= 0; d--) {
        weft_cursor_frame *f = &c->stack[d];
        const weft_node *n = f->node;
        MPI_Offset o = f->origin + n->off;
        switch (n->kind) {
        case WEFT_NODE_BLOCK:
            break;
        case WEFT_NODE_BLOCKS:
            if (++f->index < (MPI_Count)n->u.list.n) {
                c->block_offset = o + n->u.list.disp[f->index];
                c->block_left = n->u.list.len[f->index];
                c->depth = d + 1;
                return 1;
            }
            break;
        case WEFT_NODE_VECTOR: {
            MPI_Count limit = d == 0 ? c->count : n->u.vector.count;
            if (++f->index < limit || limit < 0) {
                descend(c, d + 1, n->u.vector.child, o + f->index * n->u.vector.stride);
                return 1;
            }
            break;
        }
        default: /* LIST */
            if (++f->index < (MPI_Count)n->u.list.n) {
                descend(c, d + 1, n->u.list.child[f->index], o + n->u.list.disp[f->index]);
                return 1;
            }
            break;
        }
    }
    set_end(c);
    return 0;
}

void weft_cursor_init(weft_cursor *c, const weft_dtype *t, MPI_Count count, MPI_Offset base)
{
    c->type = t;
    c->count = count;
    c->base = base;
    weft_cursor_seek(c, 0);
}

int weft_cursor_seek(weft_cursor *c, MPI_Count position)
{
    const weft_dtype *t = c->type;
    MPI_Count total = cursor_total(c);
    if (position < 0 || (total >= 0 && position > total))
        return WEFT_MPI_ERR(MPI_ERR_ARG);
    c->position = position;
    if (!t->root || position == total) {
        c->block_offset = c->base;
        set_end(c);
        return 0;
    }
    if (t->tile_contiguous) {
        c->depth = 0;
        c->block_offset = c->base + t->root->off + position;
        c->block_left = total < 0 ? UNBOUNDED_RUN : total - position;
        return 0;
    }
    MPI_Count copy = position / t->size, rem = position % t->size;
    c->stack[0].node = &t->top;
    c->stack[0].index = copy;
    c->stack[0].origin = c->base;
    const weft_node *n = t->root;
    MPI_Offset origin = c->base + copy * t->extent;
    for (int d = 1;; d++) {
        weft_cursor_frame *f = &c->stack[d];
        f->node = n;
        f->origin = origin;
        MPI_Offset o = origin + n->off;
        switch (n->kind) {
        case WEFT_NODE_BLOCK:
            f->index = 0;
            c->block_offset = o + rem;
            c->block_left = n->u.block.len - rem;
            c->depth = d + 1;
            return 0;
        case WEFT_NODE_BLOCKS: {
            size_t i = prefix_search(n->u.list.prefix, n->u.list.n, rem);
            MPI_Count in = rem - n->u.list.prefix[i];
            f->index = (MPI_Count)i;
            c->block_offset = o + n->u.list.disp[i] + in;
            c->block_left = n->u.list.len[i] - in;
            c->depth = d + 1;
            return 0;
        }
        case WEFT_NODE_VECTOR: {
            const weft_node *child = n->u.vector.child;
            MPI_Count i = rem / child->size;
            rem -= i * child->size;
            f->index = i;
            origin = o + i * n->u.vector.stride;
            n = child;
            break;
        }
        default: { /* LIST */
            size_t i = prefix_search(n->u.list.prefix, n->u.list.n, rem);
            rem -= n->u.list.prefix[i];
            f->index = (MPI_Count)i;
            origin = o + n->u.list.disp[i];
            n = n->u.list.child[i];
            break;
        }
        }
    }
}

MPI_Count weft_cursor_tell(const weft_cursor *c) { return c->position; }

int weft_cursor_next(weft_cursor *c, MPI_Offset *offset, MPI_Count *length, MPI_Count max)
{
    if (c->block_left == 0 && !weft_cursor_advance_block(c))
        return 0;
    MPI_Offset start = c->block_offset;
    MPI_Count got = 0;
    for (;;) {
        MPI_Count take = c->block_left;
        if (max > 0 && take > max - got)
            take = max - got;
        got += take;
        c->block_offset += take;
        c->block_left -= take;
        if (c->block_left > 0 || (max > 0 && got == max))
            break;
        /* Look ahead: an adjacent next block joins this piece, any other stays current. */
        if (!weft_cursor_advance_block(c) || c->block_offset != start + got)
            break;
    }
    c->position += got;
    *offset = start;
    *length = got;
    return 1;
}

int weft_cursor_peek(const weft_cursor *c, MPI_Offset *offset, MPI_Count *length, MPI_Count max)
{
    weft_cursor copy = *c;
    return weft_cursor_next(&copy, offset, length, max);
}

/* Data bytes of one instance of n that lie before the first data byte at offset >= r (r is
 * relative to the instance origin).  Exact for monotonic nodes, which is what seek by extent
 * is defined for (file views). */
static MPI_Count bytes_before(const weft_node *n, MPI_Offset r)
{
    r -= n->off;
    switch (n->kind) {
    case WEFT_NODE_BLOCK:
        return r <= 0 ? 0 : r >= n->u.block.len ? n->u.block.len : r;
    case WEFT_NODE_VECTOR: {
        const weft_node *child = n->u.vector.child;
        MPI_Offset stride = n->u.vector.stride;
        MPI_Count i = 0;
        if (stride > 0) {
            MPI_Offset x = r - child->hi; /* first i with i * stride + hi > r */
            i = x < 0 ? 0 : x / stride + 1;
            if (i >= n->u.vector.count)
                return n->size;
        }
        return i * child->size + bytes_before(child, r - i * stride);
    }
    default: { /* BLOCKS, LIST: first entry whose data ends after r */
        size_t lo = 0, hi = n->u.list.n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            MPI_Offset end = n->u.list.disp[mid] + (n->kind == WEFT_NODE_BLOCKS
                                                        ? n->u.list.len[mid]
                                                        : n->u.list.child[mid]->hi);
            if (end > r)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo == n->u.list.n)
            return n->size;
        MPI_Offset in = r - n->u.list.disp[lo];
        if (n->kind == WEFT_NODE_BLOCKS)
            return n->u.list.prefix[lo] + (in <= 0 ? 0 : in);
        return n->u.list.prefix[lo] + bytes_before(n->u.list.child[lo], in);
    }
    }
}

static MPI_Offset floor_div(MPI_Offset a, MPI_Offset b)
{
    MPI_Offset q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int weft_cursor_seek_extent(weft_cursor *c, MPI_Offset extent_offset)
{
    const weft_dtype *t = c->type;
    const weft_node *root = t->root;
    MPI_Count total = cursor_total(c);
    if (!root)
        return weft_cursor_seek(c, 0);
    if (extent_offset <= root->lo)
        return weft_cursor_seek(c, 0);
    MPI_Count position;
    if (t->tile_contiguous) {
        position = extent_offset - root->lo;
    } else {
        MPI_Count copy = 0;
        if (t->extent > 0) {
            copy = floor_div(extent_offset - root->hi, t->extent) + 1;
            if (copy < 0)
                copy = 0;
        }
        if (total >= 0 && copy >= c->count)
            return weft_cursor_seek(c, total);
        position = copy * t->size + bytes_before(root, extent_offset - copy * t->extent);
    }
    if (total >= 0 && position > total)
        position = total;
    return weft_cursor_seek(c, position);
}

MPI_Offset weft_cursor_tell_extent(const weft_cursor *c)
{
    if (c->block_left > 0)
        return c->block_offset - c->base;
    weft_cursor copy = *c;
    if (weft_cursor_advance_block(&copy))
        return copy.block_offset - c->base;
    return c->count > 0 ? c->count * c->type->extent : 0;
}

size_t weft_cursor_flatten(weft_cursor *c, MPI_Count bytes, MPI_Offset *offsets,
                           MPI_Count *lengths, size_t max_entries, MPI_Count *bytes_done)
{
    size_t n = 0;
    MPI_Count done = 0;
    while (n < max_entries && done < bytes &&
           weft_cursor_next(c, &offsets[n], &lengths[n], bytes - done)) {
        done += lengths[n];
        n++;
    }
    if (bytes_done)
        *bytes_done = done;
    return n;
}
