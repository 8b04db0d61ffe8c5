/*
 * Private to src/dtype: constructors of compact nodes (build.c), used by the decoder.
 * A constructor returns NULL for an empty layout or on error; errors stick in b->err (0 or a
 * negative code), so a decoder can chain constructors and check once.
 */
#ifndef WEFT_DTYPE_BUILD_H
#define WEFT_DTYPE_BUILD_H

#include "dtype/dtype_internal.h"

typedef struct weft_build {
    struct weft_dtype *t; /* owner of the arena */
    int err;
} weft_build;

void *weft_build_alloc(weft_build *b, size_t bytes);
void weft_arena_free(struct weft_arena_chunk *c);
MPI_Offset weft_build_mul(weft_build *b, MPI_Offset x, MPI_Offset y);
MPI_Offset weft_build_add(weft_build *b, MPI_Offset x, MPI_Offset y);

const weft_node *weft_mk_block(weft_build *b, MPI_Count len, MPI_Offset off);
const weft_node *weft_mk_shift(weft_build *b, const weft_node *n, MPI_Offset d);
const weft_node *weft_mk_vector(weft_build *b, MPI_Count count, MPI_Offset stride,
                                const weft_node *child, MPI_Offset off);
/* Runs of bytes (disp[i], len[i]) in typemap order; the arrays are copied. */
const weft_node *weft_mk_runs(weft_build *b, size_t n, const MPI_Offset *disp,
                              const MPI_Count *len);
/* Children (NULL ones are skipped) at disp[i]; the arrays are copied. */
const weft_node *weft_mk_list(weft_build *b, size_t n, const MPI_Offset *disp,
                              const weft_node *const *child);
size_t weft_node_count(const weft_node *n);

#endif
