/*
 * The copy engine: pack, unpack and two-cursor copy, all on top of the cursor.
 *
 * Fast paths, taken from wherever the cursor stands (so a copy may start and stop at any byte):
 *   - a contiguous type is one block: one memcpy for the whole request;
 *   - a leaf block that is the child of a vector (vector, subarray rows, darray, copies of a
 *     one-block type) is copied by a tight strided loop over the remaining instances, with a
 *     fixed-size memcpy for 1/2/4/8/16-byte blocks that the compiler turns into a move;
 *   - a BLOCKS leaf (indexed, struct) is copied by a loop over its runs.
 * Everything else falls back to one block at a time.
 */
#include <string.h>

#include "dtype/dtype_internal.h"

static inline char *addr(MPI_Offset o) { return (char *)(intptr_t)o; }

/* n blocks of len bytes at mem, mem + stride, ... to/from the contiguous packed. */
#define STRIDED_LOOP(LEN)                                                                     \
    do {                                                                                      \
        if (unpack)                                                                           \
            for (MPI_Count i = 0; i < n; i++, mem += stride, packed += (LEN))                 \
                memcpy(mem, packed, (LEN));                                                   \
        else                                                                                  \
            for (MPI_Count i = 0; i < n; i++, mem += stride, packed += (LEN))                 \
                memcpy(packed, mem, (LEN));                                                   \
    } while (0)

static void strided(char *mem, MPI_Offset stride, MPI_Count len, MPI_Count n, char *packed,
                    int unpack)
{
    switch (len) {
    case 1: STRIDED_LOOP(1); break;
    case 2: STRIDED_LOOP(2); break;
    case 4: STRIDED_LOOP(4); break;
    case 8: STRIDED_LOOP(8); break;
    case 16: STRIDED_LOOP(16); break;
    case 32: STRIDED_LOOP(32); break;
    case 64: STRIDED_LOOP(64); break;
    case 128: STRIDED_LOOP(128); break;
    default: STRIDED_LOOP((size_t)len); break;
    }
}

/* Copy n bytes, n <= 64, without a call: two overlapping fixed-size moves cover any length
 * between the sizes (the tails overlap the heads, which is harmless for disjoint buffers).
 * Indexed and struct runs are mostly this short, and a libc call per run dominated them. */
static inline void copy_small(char *to, const char *from, size_t n)
{
    if (n >= 16) {
        if (n > 32) {
            memcpy(to, from, 32);
            memcpy(to + n - 32, from + n - 32, 32);
        } else {
            memcpy(to, from, 16);
            memcpy(to + n - 16, from + n - 16, 16);
        }
    } else if (n >= 8) {
        memcpy(to, from, 8);
        memcpy(to + n - 8, from + n - 8, 8);
    } else if (n >= 4) {
        memcpy(to, from, 4);
        memcpy(to + n - 4, from + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            to[i] = from[i];
    }
}

static inline void move(char *mem, char *packed, MPI_Count len, int unpack)
{
    char *to = unpack ? mem : packed;
    const char *from = unpack ? packed : mem;
    if (len <= 64)
        copy_small(to, from, (size_t)len);
    else
        memcpy(to, from, (size_t)len);
}

/* Move up to `bytes` data bytes between the layout under c and the contiguous `packed`. */
static MPI_Count xfer(weft_cursor *c, char *packed, MPI_Count bytes, int unpack)
{
    MPI_Count done = 0;
    while (done < bytes) {
        if (c->block_left == 0 && !weft_cursor_advance_block(c))
            break;
        MPI_Count take = c->block_left < bytes - done ? c->block_left : bytes - done;
        move(addr(c->block_offset), packed + done, take, unpack);
        c->block_offset += take;
        c->block_left -= take;
        done += take;
        if (c->block_left > 0 || c->depth == 0)
            break; /* request done, or the one-run (contiguous) case */

        weft_cursor_frame *leaf = &c->stack[c->depth - 1];
        const weft_node *l = leaf->node;
        if (l->kind == WEFT_NODE_BLOCKS) {
            MPI_Offset o = leaf->origin + l->off;
            MPI_Count i = leaf->index + 1, n = (MPI_Count)l->u.list.n;
            for (; i < n && done + l->u.list.len[i] <= bytes; i++) {
                move(addr(o + l->u.list.disp[i]), packed + done, l->u.list.len[i], unpack);
                done += l->u.list.len[i];
            }
            leaf->index = i - 1; /* the last run fully moved; the cursor resumes after it */
            /* Whole further instances of the runs under a vector (an array of structs, an
             * indexed type repeated): loop here instead of one cursor step per instance. */
            if (i == n && c->depth >= 2 && ((const weft_node *)c->stack[c->depth - 2].node)->kind == WEFT_NODE_VECTOR) {
                weft_cursor_frame *pf = &c->stack[c->depth - 2];
                const weft_node *p = pf->node;
                MPI_Count limit = c->depth == 2 ? c->count : p->u.vector.count;
                MPI_Count m = (bytes - done) / l->size;
                if (limit >= 0 && m > limit - pf->index - 1)
                    m = limit - pf->index - 1;
                MPI_Offset stride = p->u.vector.stride;
                for (MPI_Count k = 1; k <= m; k++) {
                    MPI_Offset at = o + k * stride;
                    for (MPI_Count j = 0; j < n; j++) {
                        move(addr(at + l->u.list.disp[j]), packed + done, l->u.list.len[j], unpack);
                        done += l->u.list.len[j];
                    }
                }
                if (m > 0) {
                    pf->index += m;
                    leaf->origin += m * stride;
                }
            }
        } else if (l->kind == WEFT_NODE_BLOCK && c->depth >= 2) {
            weft_cursor_frame *pf = &c->stack[c->depth - 2];
            const weft_node *p = pf->node;
            if (p->kind != WEFT_NODE_VECTOR)
                continue;
            MPI_Count len = l->u.block.len;
            MPI_Count limit = c->depth == 2 ? c->count : p->u.vector.count;
            MPI_Count n = (bytes - done) / len;
            if (limit >= 0 && n > limit - pf->index - 1)
                n = limit - pf->index - 1;
            if (n <= 0)
                continue;
            MPI_Offset stride = p->u.vector.stride;
            MPI_Offset first = pf->origin + p->off + (pf->index + 1) * stride + l->off;
            strided(addr(first), stride, len, n, packed + done, unpack);
            pf->index += n;
            done += n * len;
        }
    }
    c->position += done;
    return done;
}

MPI_Count weft_pack(const void *buf, MPI_Count count, const weft_dtype *t, MPI_Count first,
                    MPI_Count bytes, void *packed)
{
    weft_cursor c;
    weft_cursor_init(&c, t, count, (MPI_Offset)(intptr_t)buf);
    if (bytes <= 0 || weft_cursor_seek(&c, first) != 0)
        return 0;
    return xfer(&c, packed, bytes, 0);
}

MPI_Count weft_unpack(const void *packed, MPI_Count bytes, void *buf, MPI_Count count,
                      const weft_dtype *t, MPI_Count first)
{
    weft_cursor c;
    weft_cursor_init(&c, t, count, (MPI_Offset)(intptr_t)buf);
    if (bytes <= 0 || weft_cursor_seek(&c, first) != 0)
        return 0;
    return xfer(&c, (char *)(uintptr_t)packed, bytes, 1);
}

MPI_Count weft_pack_cursor(weft_cursor *c, MPI_Count bytes, void *packed)
{
    return bytes > 0 ? xfer(c, packed, bytes, 0) : 0;
}

MPI_Count weft_unpack_cursor(weft_cursor *c, const void *packed, MPI_Count bytes)
{
    return bytes > 0 ? xfer(c, (char *)(uintptr_t)packed, bytes, 1) : 0;
}

static void consume(weft_cursor *c, MPI_Count n)
{
    c->block_offset += n;
    c->block_left -= n;
    c->position += n;
}

MPI_Count weft_copy(weft_cursor *dst, weft_cursor *src, MPI_Count bytes)
{
    MPI_Count done = 0;
    while (done < bytes) {
        if (src->block_left == 0 && !weft_cursor_advance_block(src))
            break;
        if (dst->block_left == 0 && !weft_cursor_advance_block(dst))
            break;
        MPI_Count want = bytes - done;
        /* One side has a single run for all that is left: the other side's fast paths. */
        if (src->block_left >= want) {
            MPI_Count n = xfer(dst, addr(src->block_offset), want, 1);
            consume(src, n);
            done += n;
            break;
        }
        if (dst->block_left >= want) {
            MPI_Count n = xfer(src, addr(dst->block_offset), want, 0);
            consume(dst, n);
            done += n;
            break;
        }
        MPI_Count n = src->block_left < dst->block_left ? src->block_left : dst->block_left;
        memcpy(addr(dst->block_offset), addr(src->block_offset), (size_t)n);
        consume(src, n);
        consume(dst, n);
        done += n;
    }
    return done;
}
