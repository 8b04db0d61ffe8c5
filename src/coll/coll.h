/*
 * The collective engine (DESIGN.md §3.1): two-phase I/O.  Every rank's access is described to
 * the aggregators by its file view (shipped once per call as a compact layout, never as
 * per-element offset lists) plus its (position, bytes); the plan (plan.h) splits the accessed
 * range into file domains and cycles; in each cycle ranks send aggregators the data that falls
 * in their window (shuffle) and aggregators write the filled runs (file access).  Reads
 * mirror it: aggregators read their window and send each rank its part.
 */
#ifndef WEFT_COLL_H
#define WEFT_COLL_H

#include "access/access.h"

/* Called by every rank of f->comm with its part of a collective access (a->bytes may be 0).
 * `local_rc` is a failure this rank already has (0 if none): it takes part in the agreement.
 * Returns this rank's own failure (0 if none) and sets *agreed to the outcome every rank sees
 * (the most severe failure of any rank, or 0).  *done gets the bytes this rank moved (reads:
 * fewer at end of file). */
int weft_coll_access(weft_file *f, const weft_access *a, MPI_Count *done, int local_rc,
                     int *agreed);

/* Tests only: the cycle buffers' allocation fails with ENOMEM on this process (0 turns it
 * off).  Set from WEFT_TEST_INJECT=ENOMEM@RANK, to check that a failure after the plan, on one
 * rank, still reaches every rank before any data moves. */
void weft_coll_inject_alloc_failure(int on);

#endif
