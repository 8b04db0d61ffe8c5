/*
 * Private to src/dtype: the compact form of a decoded datatype.
 *
 * A decoded type is a tree of immutable nodes describing where its data bytes lie, in typemap
 * order, relative to the type's origin (displacement 0).  Only the data layout lives in the
 * tree; lb/extent/true-lb/true-extent come from the host MPI (authoritative, and they are the
 * only thing MPI_LB/MPI_UB markers and resizing change).
 *
 * Four node kinds are enough to keep every regular type small:
 *   BLOCK    one contiguous run of `len` bytes at `off`                    (leaf)
 *   BLOCKS   n runs: run i is len[i] bytes at off + disp[i]               (leaf)
 *   VECTOR   count instances of child, instance i at off + i * stride
 *   LIST     n children, child i at off + disp[i]
 * An empty layout (no data) is a NULL node; no node ever has size 0.  Nodes may be shared
 * inside one tree (they are never modified once built) and all belong to the type's arena.
 */
#ifndef WEFT_DTYPE_INTERNAL_H
#define WEFT_DTYPE_INTERNAL_H

#include "dtype/dtype.h"

enum weft_node_kind { WEFT_NODE_BLOCK, WEFT_NODE_BLOCKS, WEFT_NODE_VECTOR, WEFT_NODE_LIST };

typedef struct weft_node weft_node;
struct weft_node {
    int kind;
    int depth;          /* levels including this one: leaves are 1 */
    MPI_Count size;     /* data bytes of one instance (> 0) */
    MPI_Offset off;     /* added to the instance origin */
    MPI_Offset lo, hi;  /* data bounds relative to the instance origin (off included) */
    int monotonic;      /* blocks in order, non-decreasing, non-overlapping */
    union {
        struct { MPI_Count len; } block;
        struct { MPI_Count count; MPI_Offset stride; const weft_node *child; } vector;
        struct {
            size_t n;
            const MPI_Offset *disp;
            const MPI_Count *len;      /* BLOCKS only */
            const weft_node *const *child; /* LIST only */
            const MPI_Count *prefix;   /* data bytes before entry i (n + 1 entries) */
        } list;
    } u;
};

/* The deepest tree a cursor can walk: one frame is used for the copies of the type. */
#define WEFT_NODE_MAX_DEPTH (WEFT_CURSOR_MAX_DEPTH - 1)

struct weft_arena_chunk;

struct weft_dtype {
    const weft_node *root;   /* NULL: the type has no data */
    weft_node top;           /* VECTOR of root by extent: the cursor's frame 0 (count per cursor) */
    MPI_Count size, lb, extent, true_lb, true_extent;
    int contiguous;          /* weft_dtype_is_contiguous */
    int tile_contiguous;     /* root is one block as long as the extent: copies touch */
    int monotonic;           /* weft_dtype_is_monotonic */
    int tiles_in_order;      /* weft_dtype_tiles_in_order */
    size_t nodes;
    int refs;                /* cache references (type and its dups) */
    struct weft_arena_chunk *arena;
};

void weft_dtype_finish(weft_dtype *t, const weft_node *root, MPI_Count size, MPI_Count lb,
                       MPI_Count extent, MPI_Count tlb, MPI_Count text);
/* Drop one reference; the last frees the tree (decode.c). */
void weft_dtype_release(weft_dtype *t);

/* Move the cursor to the next leaf block (no merging): 1, or 0 at the end (cursor.c). */
int weft_cursor_advance_block(weft_cursor *c);

#endif
