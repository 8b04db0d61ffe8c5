/*
 * put-fence and put-lock: the one-sided primitives (seed 000 §3.1.2).  The halves are two
 * MPI_Win_allocate windows over the file's communicator (cycle_bytes on aggregators, 0
 * elsewhere), kept with the file.  A sender packs its stream (shuffle.c) and moves it with ONE
 * MPI_Put per aggregator and cycle whose target type is an hindexed list of the landing places
 * (contiguous fast path for one piece), straight into the half: no staging on the aggregator
 * and no offsets to exchange; the aggregator marks its bitmap by walking the same pieces from
 * the views, without data.  Reads mirror it with MPI_Get.
 *
 * put-fence: post opens an epoch on the half's window with MPI_Win_fence and puts; complete
 * closes it with a second fence.  A fence is blocking and collective, so it has no "test": the
 * data-flow schedule write-comm-2 (whose order of posts and completions depends on each rank's
 * own MPI_Testall/backend results) could call the two windows' fences in different orders on
 * different ranks and deadlock, so the engine runs write-comm instead (not testable; counted
 * as `degraded`).  Every other schedule posts and completes in the same order everywhere.
 *
 * put-lock: puts inside MPI_Win_lock(SHARED)/MPI_Win_unlock per target (unlock completes them
 * at the target).  Synchronisation, per cycle, on a communicator of the half (a dup of the
 * file's): a barrier before the puts ("drained": every aggregator reached this cycle's start,
 * which in every schedule comes after the file access of the half's previous cycle; an
 * MPI_Ibarrier waited on at once) and an MPI_Ibarrier after the unlocks ("full"), whose request joins the half's
 * requests.  Why barriers rather than per-pair notification messages: a "drained" signal must
 * reach every sender before it may put, which with messages is a rendezvous (clear-to-send,
 * put, done: three messages per pair per cycle) costing more than isend itself; the barrier is
 * one collective per cycle whatever the pair count, and the Ibarrier makes "full" testable, so
 * write-comm-2 keeps its data flow.  Deadlock-free in any schedule: each half communicator sees
 * barrier(c), ibarrier(c), barrier(c+2), ... in the same order on every rank, and the only
 * blocking wait a rank enters before its puts is for others to reach the same cycle's start.
 *
 * Neither is resumable (fences block; creating or growing the windows is a blocking
 * collective): nonblocking collectives use isend instead.  A put-lock call that must not wait
 * (a blocking call polled along with pending nonblocking ones) posts "drained" as an
 * MPI_Ibarrier and makes its puts once it completes (lock_advance).
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdlib.h>

static int rma_none(const engine *e, int rank_or_aggregator)
{
    (void)e;
    (void)rank_or_aggregator;
    return 0; /* nothing travels as a stream */
}

static int rma_prepare(engine *e)
{
    weft_shuffle_state *S = weft_shuffle_state_of(e);
    if (S && !S->rma_have)
        S->rma_have = calloc((size_t)e->f->nprocs, sizeof(MPI_Offset));
    return S && S->rma_have ? 0 : -ENOMEM;
}

/* Create or grow the windows the plan needs.  Whether to grow is decided from the plan and
 * the sizes every rank keeps of every window segment, so all members of a window decide alike
 * without a message.  Sets the aggregator's half buffers. */
static void rma_setup(engine *e)
{
    weft_file *f = e->f;
    weft_shuffle_state *S = e->S;
    int A = e->plan.naggregators;
    MPI_Offset need = e->plan.cycle_bytes;
    int grow = !S->rma_windows;
    for (int ag = 0; ag < A; ag++)
        if (S->rma_have[e->plan.aggregator_rank[ag]] < need)
            grow = 1;
    if (grow) {
        for (int k = 0; k < 2 && S->rma_windows; k++)
            MPI_Win_free(&S->rma_win[k]);
        for (int ag = 0; ag < A; ag++)
            if (S->rma_have[e->plan.aggregator_rank[ag]] < need)
                S->rma_have[e->plan.aggregator_rank[ag]] = need;
        for (int k = 0; k < 2; k++)
            MPI_Win_allocate((MPI_Aint)S->rma_have[f->rank], 1, MPI_INFO_NULL, f->comm,
                             &S->rma_base[k], &S->rma_win[k]);
        S->rma_windows = 1;
    }
    if (e->shuffle->kind == WEFT_SHUFFLE_PUT_LOCK && !S->rma_comms) {
        MPI_Comm_dup(f->comm, &S->rma_half_comm[0]);
        MPI_Comm_dup(f->comm, &S->rma_half_comm[1]);
        S->rma_comms = 1;
    }
    for (int k = 0; k < 2 && e->my_aggregator >= 0; k++)
        e->halves[k].buffer = S->rma_base[k];
}

/* RMA: my data for aggregator ag in the half's cycle, as one MPI_Put (or MPI_Get) between my
 * packed stream and the landing places in the aggregator's half window. */
static void rma_move(engine *e, half *h, int ag, MPI_Win win, int get)
{
    weft_file *f = e->f;
    MPI_Count size = h->out_at[ag + 1] - h->out_at[ag];
    unsigned char *origin = h->staging + h->out_at[ag];
    int target = e->plan.aggregator_rank[ag];
    piece_ctx ctx = {.e = e};
    weft_load_window(e, &e->scratch, ag, h->cycle);
    e->npieces = 0;
    weft_walk_pieces(e, &e->scratch, f->view.filetype_t, f->view.disp, f->rank, weft_piece_collect, &ctx);
    if (e->npieces < 0) { /* out of memory: skip the transfer; the final agreement reports it */
        weft_note_failure(e, -ENOMEM);
        return;
    }
    if (e->npieces == 1) {
        if (get)
            MPI_Get(origin, (int)size, MPI_BYTE, target, e->pdisp[0], (int)size, MPI_BYTE, win);
        else
            MPI_Put(origin, (int)size, MPI_BYTE, target, e->pdisp[0], (int)size, MPI_BYTE, win);
        return;
    }
    MPI_Datatype type;
    MPI_Type_create_hindexed(e->npieces, e->plen, e->pdisp, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    if (get)
        MPI_Get(origin, (int)size, MPI_BYTE, target, 0, 1, type, win);
    else
        MPI_Put(origin, (int)size, MPI_BYTE, target, 0, 1, type, win);
    /* Kept until the epoch closes (freeing now is allowed, but costs nothing to avoid). */
    h->types[h->ntypes++] = type;
}

/* MPI_Win_sync on my own half window: my loads/stores and the window's public copy agree. */
static void rma_sync_self(engine *e, half *h)
{
    MPI_Win win = e->S->rma_win[h->index];
    MPI_Win_lock(MPI_LOCK_SHARED, e->f->rank, 0, win);
    MPI_Win_sync(win);
    MPI_Win_unlock(e->f->rank, win);
}

static void fence_move(engine *e, half *h, int ag, int get)
{
    rma_move(e, h, ag, e->S->rma_win[h->index], get);
}

/* Writes: open the epoch and put; reads: the data read into the halves is exposed, get. */
static void fence_post(engine *e, half *h, int write)
{
    MPI_Win_fence(0, e->S->rma_win[h->index]);
    weft_direct_moves(e, h, !write, fence_move);
}

/* Writes: every put is in place; reads: every get is done, the half is free. */
static void fence_complete(engine *e, half *h, int write)
{
    (void)write;
    MPI_Win_fence(0, e->S->rma_win[h->index]);
}

const weft_shuffle_ops weft_shuffle_put_fence_ops = {
    .kind = WEFT_SHUFFLE_PUT_FENCE,
    .prepare = rma_prepare,
    .setup = rma_setup,
    .streams_from = rma_none,
    .streams_to = rma_none,
    .post = fence_post,
    .complete = fence_complete,
};

static void lock_move(engine *e, half *h, int ag, int get)
{
    MPI_Win win = e->S->rma_win[h->index];
    int target = e->plan.aggregator_rank[ag];
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    rma_move(e, h, ag, win, get);
    MPI_Win_unlock(target, win);
    weft_free_types(h);
}

/* My moves, then the "full" Ibarrier whose request joins the half's. */
static void lock_moves(engine *e, half *h, int write)
{
    weft_direct_moves(e, h, !write, lock_move);
    MPI_Ibarrier(e->S->rma_half_comm[h->index], &h->requests[h->nreq++]);
}

/* "drained" barrier (waited on here, or tested by lock_advance in calls that must not wait),
 * then the moves. */
static void lock_post(engine *e, half *h, int write)
{
    if (e->my_aggregator >= 0 && !write)
        rma_sync_self(e, h); /* the file data read into my half is public */
    weft_drained_post(e, h, e->S->rma_half_comm[h->index], lock_moves, write);
}

static int lock_advance(engine *e, half *h, int write)
{
    return weft_drained_advance(e, h, lock_moves, write);
}

static void lock_complete(engine *e, half *h, int write)
{
    if (write && e->my_aggregator >= 0)
        rma_sync_self(e, h); /* the puts are visible to my loads */
}

const weft_shuffle_ops weft_shuffle_put_lock_ops = {
    .kind = WEFT_SHUFFLE_PUT_LOCK,
    .testable = 1,
    .prepare = rma_prepare,
    .setup = rma_setup,
    .streams_from = rma_none,
    .streams_to = rma_none,
    .post = lock_post,
    .advance = lock_advance,
    .complete = lock_complete,
};
