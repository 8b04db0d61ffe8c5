/*
 * shm: ranks in the aggregator's shared-memory group (the virtual node of node_of_rank, split
 * again with MPI_COMM_TYPE_SHARED) memcpy their pieces straight into its half, which lives in
 * an MPI_Win_allocate_shared window over the group (pointers from MPI_Win_shared_query; the
 * window stays in a lock_all epoch, MPI_Win_sync around every barrier) — seed 002's collective
 * shared buffer with standard MPI.  Ranks of other groups use isend streams, exactly as the
 * isend primitive.  Synchronisation as put-lock's (shuffle_rma.c), over the group's half
 * communicators, and only in groups holding an aggregator of the call.  Reads: group members
 * copy out of the half, others get streams.  A call that must not wait (a blocking call polled
 * along with pending nonblocking ones) posts the "drained" barrier as an MPI_Ibarrier and
 * makes its copies once it completes (shm_advance).  Not resumable all the same: creating or
 * growing the window is a blocking collective, so nonblocking calls use isend.
 *
 * Also the release of every primitive's per-file windows and communicators.
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdlib.h>

/* Ranks outside my group stream to me. */
static int shm_streams_from(const engine *e, int r) { return e->S->shm_rank_of[r] < 0; }

/* I stream to aggregators outside my group. */
static int shm_streams_to(const engine *e, int ag) { return e->shm_ptr[ag] == NULL; }

static int shm_prepare(engine *e)
{
    int P = e->f->nprocs, A = e->plan.naggregators;
    weft_shuffle_state *S = weft_shuffle_state_of(e);
    if (!S)
        return -ENOMEM;
    e->shm_ptr = calloc((size_t)A + 1, sizeof *e->shm_ptr);
    e->shm_half = calloc((size_t)A + 1, sizeof *e->shm_half);
    if (!S->shm_group)
        S->shm_group = malloc(sizeof(int) * (size_t)P);
    if (!S->shm_rank_of)
        S->shm_rank_of = malloc(sizeof(int) * (size_t)P);
    if (!S->shm_have)
        S->shm_have = calloc((size_t)P, sizeof(MPI_Offset));
    return e->shm_ptr && e->shm_half && S->shm_group && S->shm_rank_of && S->shm_have ? 0
                                                                                    : -ENOMEM;
}

/* The group's communicators once; the window created or grown as the plan needs (decided
 * from the plan and the segment sizes every member keeps: no message). */
static void shm_setup(engine *e)
{
    weft_file *f = e->f;
    weft_shuffle_state *S = e->S;
    int A = e->plan.naggregators;
    MPI_Offset need = e->plan.cycle_bytes;
    if (!S->shm_comms) {
        int P = f->nprocs;
        MPI_Comm node;
        MPI_Comm_split(f->comm, e->cf->node_of_rank[f->rank], f->rank, &node);
        MPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &S->shm_comm);
        MPI_Comm_free(&node);
        MPI_Comm_rank(S->shm_comm, &S->shm_rank);
        MPI_Comm_size(S->shm_comm, &S->shm_size);
        int leader = f->rank;
        MPI_Allreduce(&f->rank, &leader, 1, MPI_INT, MPI_MIN, S->shm_comm);
        MPI_Allgather(&leader, 1, MPI_INT, S->shm_group, 1, MPI_INT, f->comm);
        for (int r = 0; r < P; r++)
            S->shm_rank_of[r] = -1;
        /* My group's members are the file ranks with my leader, in file-rank order, which is
         * their order in shm_comm (both splits keep the file's order). */
        for (int r = 0, n = 0; r < P; r++)
            if (S->shm_group[r] == leader)
                S->shm_rank_of[r] = n++;
        MPI_Comm_dup(S->shm_comm, &S->shm_half_comm[0]);
        MPI_Comm_dup(S->shm_comm, &S->shm_half_comm[1]);
        S->shm_comms = 1;
    }
    int grow = 0, any = 0;
    for (int ag = 0; ag < A; ag++) {
        int sr = S->shm_rank_of[e->plan.aggregator_rank[ag]];
        if (sr >= 0) {
            any = 1;
            if (S->shm_have[sr] < need)
                grow = 1;
        }
    }
    if (grow) {
        if (S->shm_window) {
            MPI_Win_unlock_all(S->shm_win);
            MPI_Win_free(&S->shm_win);
        }
        for (int ag = 0; ag < A; ag++) {
            int sr = S->shm_rank_of[e->plan.aggregator_rank[ag]];
            if (sr >= 0 && S->shm_have[sr] < need)
                S->shm_have[sr] = need;
        }
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each segment near its owner */
        void *base = NULL;
        MPI_Win_allocate_shared((MPI_Aint)(2 * S->shm_have[S->shm_rank]), 1, info, S->shm_comm,
                                &base, &S->shm_win);
        MPI_Info_free(&info);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, S->shm_win); /* for MPI_Win_sync, until freed */
        S->shm_window = 1;
    }
    e->shm_sync = any && S->shm_size > 1;
    for (int ag = 0; ag < A; ag++) {
        int sr = S->shm_rank_of[e->plan.aggregator_rank[ag]];
        if (sr < 0)
            continue;
        MPI_Aint size;
        int unit;
        void *ptr;
        MPI_Win_shared_query(S->shm_win, sr, &size, &unit, &ptr);
        e->shm_ptr[ag] = ptr;
        e->shm_half[ag] = S->shm_have[sr];
    }
    for (int k = 0; k < 2 && e->my_aggregator >= 0; k++)
        e->halves[k].buffer = e->shm_ptr[e->my_aggregator] + k * e->shm_half[e->my_aggregator];
}

static void shm_move(engine *e, half *h, int ag, int get)
{
    piece_ctx ctx = {.e = e, .half_buffer = e->shm_ptr[ag] + h->index * e->shm_half[ag],
                     .stream = h->staging + h->out_at[ag], .to_half = !get};
    weft_load_window(e, &e->scratch, ag, h->cycle);
    weft_walk_pieces(e, &e->scratch, e->f->view.filetype_t, e->f->view.disp, e->f->rank,
                     weft_piece_copy, &ctx);
}

/* The "full" Ibarrier once my copies are in (its request joins the half's). */
static void shm_moves(engine *e, half *h, int write)
{
    MPI_Win_sync(e->S->shm_win);
    weft_direct_moves(e, h, !write, shm_move);
    MPI_Win_sync(e->S->shm_win);
    MPI_Ibarrier(e->S->shm_half_comm[h->index], &h->requests[h->nreq++]);
}

/* "drained" barrier (waited on here, or tested by shm_advance in calls that must not wait),
 * my copies, then the "full" Ibarrier. */
static void shm_post(engine *e, half *h, int write)
{
    if (!e->shm_sync) {
        weft_direct_moves(e, h, !write, shm_move); /* group of one, or without aggregator */
        return;
    }
    MPI_Win_sync(e->S->shm_win);
    weft_drained_post(e, h, e->S->shm_half_comm[h->index], shm_moves, write);
}

static int shm_advance(engine *e, half *h, int write)
{
    return weft_drained_advance(e, h, shm_moves, write);
}

static void shm_complete(engine *e, half *h, int write)
{
    (void)h;
    if (write && e->shm_sync)
        MPI_Win_sync(e->S->shm_win); /* the copies are visible to my loads */
}

const weft_shuffle_ops weft_shuffle_shm_ops = {
    .kind = WEFT_SHUFFLE_SHM,
    .testable = 1,
    .prepare = shm_prepare,
    .setup = shm_setup,
    .streams_from = shm_streams_from,
    .streams_to = shm_streams_to,
    .post = shm_post,
    .advance = shm_advance,
    .complete = shm_complete,
};

void weft_shuffle_release(weft_shuffle_state *S)
{
    if (!S)
        return;
    /* The same objects in the same order on every rank (created by the same calls). */
    for (int k = 0; k < 2 && S->rma_windows; k++)
        MPI_Win_free(&S->rma_win[k]);
    for (int k = 0; k < 2 && S->rma_comms; k++)
        MPI_Comm_free(&S->rma_half_comm[k]);
    if (S->shm_window) {
        MPI_Win_unlock_all(S->shm_win);
        MPI_Win_free(&S->shm_win);
    }
    if (S->shm_comms) {
        MPI_Comm_free(&S->shm_half_comm[0]);
        MPI_Comm_free(&S->shm_half_comm[1]);
        MPI_Comm_free(&S->shm_comm);
    }
    free(S->rma_have);
    free(S->shm_group);
    free(S->shm_rank_of);
    free(S->shm_have);
    free(S);
}
