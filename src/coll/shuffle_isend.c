/*
 * isend (the default primitive): every stream is a message, MPI_Isend/MPI_Irecv of packed
 * data, or of the pieces themselves through an hindexed type when they are long (shuffle.c).
 * An aggregator's own data never goes through MPI: one two-cursor copy.  Nothing but
 * point-to-point requests, so a cycle's completion is testable and nothing blocks: the
 * primitive of nonblocking collectives.
 */
#include "coll/engine.h"

/* Every rank but me sends me a stream. */
static int isend_streams_from(const engine *e, int r) { return r != e->f->rank; }

/* I send a stream to every aggregator but myself. */
static int isend_streams_to(const engine *e, int ag) { return ag != e->my_aggregator; }

const weft_shuffle_ops weft_shuffle_isend_ops = {
    .kind = WEFT_SHUFFLE_ISEND,
    .resumable = 1,
    .testable = 1,
    .self_copies = 1,
    .in_place = 1,
    .streams_from = isend_streams_from,
    .streams_to = isend_streams_to,
};
