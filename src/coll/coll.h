/*
 * The collective engine (DESIGN.md §3.1): two-phase I/O.  Every rank's access is described to
 * the aggregators by its file view (shipped once per call as a compact layout, never as
 * per-element offset lists) plus its (position, bytes); the plan (plan.h) splits the accessed
 * range into file domains and cycles; in each cycle ranks send aggregators the data that falls
 * in their window (shuffle) and aggregators write the filled runs (file access).  Reads
 * mirror it: aggregators read their window and send each rank its part.
 *
 * A call is a state machine (call.c).  Blocking calls run it to the end at once; nonblocking
 * ones (MPI_File_iwrite_all and friends, split collectives) start it and return, and it
 * advances whenever weft makes progress (weft_coll_progress), using only nonblocking MPI.
 */
#ifndef WEFT_COLL_H
#define WEFT_COLL_H

#include "access/access.h"

/* Collective over f->comm, at open: the per-file state every collective call needs (nodes,
 * host names, the call table).  Failures are agreed on; returns 0 or the agreed code. */
int weft_coll_open(weft_file *f);
/* Collective, at close: completes pending nonblocking calls, frees windows and state. */
void weft_coll_close(weft_file *f);

/* Called by every rank of f->comm with its part of a collective access (a->bytes may be 0).
 * `local_rc` is a failure this rank already has (0 if none): it takes part in the agreement.
 * Returns this rank's own failure (0 if none) and sets *agreed to the outcome every rank sees
 * (the most severe failure of any rank, or 0).  *done gets the bytes this rank moved (reads:
 * fewer at end of file).  Pending nonblocking calls on the file complete first. */
int weft_coll_access(weft_file *f, const weft_access *a, MPI_Count *done, int local_rc,
                     int *agreed);

/* ---- Nonblocking collective calls ---------------------------------------------------------
 * weft_coll_start queues a call behind the file's pending ones and returns at once (no call
 * waits on another rank); the oldest pending call of each file advances on every
 * weft_coll_progress, and the next begins when it completes, so calls on one file complete in
 * start order.  `a` is copied; a->buf and the memory type must stay valid until completion.
 * The call uses the isend primitive whatever weft_shuffle says (the others block in fences
 * and barriers).  Thread safe: every function here takes the progress lock (weft_coll_lock)
 * while it touches pending calls. */
typedef struct weft_coll_call weft_coll_call;

/* `on_complete(arg)`, if given, runs when the call completes (inside some progress, with the
 * progress lock held); it may read the results and free the call.  Returns 0 or -ENOMEM. */
int weft_coll_start(weft_file *f, const weft_access *a, int local_rc,
                    void (*on_complete)(void *arg), void *arg, weft_coll_call **call);
/* Advance every pending call of every file; never blocks.  Returns the number of calls that
 * completed in this pass. */
int weft_coll_progress(void);
/* Calls still pending, on every file (0: nothing to progress). */
int weft_coll_pending(void);
int weft_coll_done(const weft_coll_call *call);
/* Progress until `call` is complete (busy polling, yielding the core between passes). */
void weft_coll_wait(weft_coll_call *call);
/* Results of a completed call, as weft_coll_access returns them. */
int weft_coll_result(const weft_coll_call *call, MPI_Count *done, int *agreed);
void weft_coll_free(weft_coll_call *call);
/* Complete every pending call on the file (before any other collective call on it). */
void weft_coll_drain(weft_file *f);

/* The lock that serialises progress between the application's threads and weft's progress
 * thread (recursive: a completion callback may call back into weft). */
void weft_coll_lock(void);
void weft_coll_unlock(void);

/* Tests only: the cycle buffers' allocation fails with ENOMEM on this process (0 turns it
 * off).  Set from WEFT_TEST_INJECT=ENOMEM@RANK, to check that a failure after the plan, on one
 * rank, still reaches every rank before any data moves. */
void weft_coll_inject_alloc_failure(int on);

#endif
