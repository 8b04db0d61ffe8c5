/*
 * Datatype engine (DESIGN.md §2 layer 6, §3.5).
 *
 * Any MPI datatype is decoded once, through MPI_Type_get_envelope/get_contents, into a compact
 * tree that keeps regularity (a vector of 10^9 blocks is one node), cached on the MPI datatype
 * through a keyval attribute (freed with the type, shared by MPI_Type_dup).  Everything above
 * this layer sees datatypes only through this header: sizes and extents, a cursor that yields
 * contiguous (offset, length) pieces and can seek by data position, and copy routines.
 *
 * Conventions: all sizes and offsets are 64-bit.  Functions that can fail return 0 or a
 * negative code from common/error.h (WEFT_MPI_ERR(MPI_ERR_TYPE) for bad types).
 * No function here calls MPI from a context other than the calling MPI thread; the cursor and
 * copy routines make no MPI calls at all, so worker threads may use them.
 */
#ifndef WEFT_DTYPE_H
#define WEFT_DTYPE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct weft_dtype weft_dtype;

/* Decode `type` (or fetch the cached decoding).  Fails with WEFT_MPI_ERR(MPI_ERR_TYPE) for
 * MPI_DATATYPE_NULL, an uncommitted derived type, or a type whose size overflows MPI_Count.
 * The result is owned by the cache and lives as long as the MPI datatype does. */
int weft_dtype_get(MPI_Datatype type, const weft_dtype **out);

MPI_Count weft_dtype_size(const weft_dtype *t);        /* bytes of data in one copy */
MPI_Count weft_dtype_lb(const weft_dtype *t);
MPI_Count weft_dtype_extent(const weft_dtype *t);
MPI_Count weft_dtype_true_lb(const weft_dtype *t);
MPI_Count weft_dtype_true_extent(const weft_dtype *t);

/* Non-zero when `count` copies of the type form one contiguous run of data starting at lb
 * (size == extent and the data of one copy is a single block): the I/O fast path. */
int weft_dtype_is_contiguous(const weft_dtype *t);

/* Non-zero when the blocks of one copy of the type, in typemap order, have non-negative,
 * monotonically non-decreasing displacements that do not overlap: what MPI requires of a
 * filetype (and of an etype) in MPI_File_set_view. */
int weft_dtype_is_monotonic(const weft_dtype *t);

/* Non-zero when copies tiled by the extent do not overlap either (each copy's data lies
 * within lb + [0, extent) of its own tile's start). */
int weft_dtype_tiles_in_order(const weft_dtype *t);

/* Number of nodes of the compact form (tests assert regular types stay small). */
size_t weft_dtype_node_count(const weft_dtype *t);

/* How many times `type` has been decoded (not fetched from the cache) since start-up. */
uint64_t weft_dtype_decode_count(void);

/* ---- Cursor (seed 002 §2): walks the data of `count` copies of a type. ---------------------
 * Copy k starts at base + k * extent.  count < 0 means unbounded (a file view's filetype tiled
 * forever from the displacement).  Offsets returned are base-relative plus base, so for memory
 * pass base = (MPI_Offset)(intptr_t)buf and cast back; for a file view pass base = disp.
 * Positions ("data position") count bytes of data from the start of copy 0. */
#define WEFT_CURSOR_MAX_DEPTH 16
typedef struct weft_cursor_frame {
    const void *node;
    MPI_Count index;      /* which repetition / child of the node we are in */
    MPI_Offset origin;    /* byte offset of this node's copy */
} weft_cursor_frame;

typedef struct weft_cursor {
    const weft_dtype *type;
    MPI_Count count;          /* copies, < 0 unbounded */
    MPI_Offset base;
    MPI_Count position;       /* data bytes before the cursor */
    MPI_Offset block_offset;  /* current block: absolute offset of its next byte */
    MPI_Count block_left;     /* bytes left in the current block (0: need to advance) */
    int depth;
    weft_cursor_frame stack[WEFT_CURSOR_MAX_DEPTH];
} weft_cursor;

void weft_cursor_init(weft_cursor *c, const weft_dtype *t, MPI_Count count, MPI_Offset base);

/* Next contiguous piece of at most `max` bytes (max <= 0: no limit).  Adjacent blocks are
 * merged, across repetitions too.  Returns 1 and fills *offset and *length, or 0 at the end. */
int weft_cursor_next(weft_cursor *c, MPI_Offset *offset, MPI_Count *length, MPI_Count max);

/* Like next, but does not advance. */
int weft_cursor_peek(const weft_cursor *c, MPI_Offset *offset, MPI_Count *length, MPI_Count max);

/* Seek to data position `position` (bytes of data from the start) in O(depth).  Returns 0, or
 * WEFT_MPI_ERR(MPI_ERR_ARG) when position is negative or past the end of a bounded cursor. */
int weft_cursor_seek(weft_cursor *c, MPI_Count position);
MPI_Count weft_cursor_tell(const weft_cursor *c);

/* Seek by extent: place the cursor at the first data byte whose offset (relative to base) is
 * >= extent_offset; tell_extent returns the base-relative offset of the next data byte. */
int weft_cursor_seek_extent(weft_cursor *c, MPI_Offset extent_offset);
MPI_Offset weft_cursor_tell_extent(const weft_cursor *c);

/* Flatten the next `bytes` bytes of data (or fewer, if `max_entries` runs out or the cursor
 * ends) into offsets/lengths.  Returns the number of entries; *bytes_done gets the data size
 * they cover.  The cursor advances by *bytes_done. */
size_t weft_cursor_flatten(weft_cursor *c, MPI_Count bytes, MPI_Offset *offsets,
                           MPI_Count *lengths, size_t max_entries, MPI_Count *bytes_done);

/* ---- Copy engine ------------------------------------------------------------------------- */

/* Pack data bytes [first, first + bytes) of (buf, count, t) into the contiguous `packed`.
 * Returns the number of bytes copied (less than `bytes` only at the end of the data). */
MPI_Count weft_pack(const void *buf, MPI_Count count, const weft_dtype *t, MPI_Count first,
                    MPI_Count bytes, void *packed);
/* The inverse: scatter contiguous `packed` into data bytes [first, first + bytes). */
MPI_Count weft_unpack(const void *packed, MPI_Count bytes, void *buf, MPI_Count count,
                      const weft_dtype *t, MPI_Count first);

/* The same from wherever a cursor stands (over memory: offsets are addresses), advancing it:
 * for layouts that are not (buf, count, type), e.g. a file view shifted into a buffer. */
MPI_Count weft_pack_cursor(weft_cursor *c, MPI_Count bytes, void *packed);
MPI_Count weft_unpack_cursor(weft_cursor *c, const void *packed, MPI_Count bytes);

/* Two-cursor copy: move `bytes` bytes of data from the layout under `src` to the layout under
 * `dst` (both cursors over memory, offsets are addresses), advancing both.  Returns bytes
 * copied (less only if a cursor ends). */
MPI_Count weft_copy(weft_cursor *dst, weft_cursor *src, MPI_Count bytes);

/* ---- Shipping a layout to another process -------------------------------------------------
 * serialize writes a self-contained description (malloc'd, caller frees) of the layout and
 * bounds; deserialize rebuilds it (the result is the caller's: release with weft_dtype_put).
 * Both return 0 or a negative code; malformed input gives WEFT_MPI_ERR(MPI_ERR_TYPE). */
int weft_dtype_serialize(const weft_dtype *t, void **buffer, size_t *length);
int weft_dtype_deserialize(const void *buffer, size_t length, const weft_dtype **out);
void weft_dtype_put(const weft_dtype *t);

#endif
