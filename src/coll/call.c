/*
 * A collective call as a state machine (DESIGN.md §3.1):
 *
 *   FACTS       every rank's (error, first byte, end, view position, bytes, file size, flags,
 *               shuffle) allgathered; every rank builds the same plan from them (plan.c), or
 *               goes straight to the file when accesses do not interleave
 *   PLAN        the plan's construction agreed on
 *   VIEWS       views sent to aggregators and matched (exchange.c)
 *   SETUP       the backend, cycle buffers and staging; one agreement on them and the views;
 *               then the primitive's windows
 *   AUTO_*      weft_overlap=auto: the first cycle measured, then trials (schedule.c)
 *   CYCLES      the cycles under the schedule (schedule.c)
 *   FINAL       the outcome agreed on
 *
 * Only nonblocking MPI moves a call along (MPI_Iallgather, MPI_Iallreduce, MPI_Isend/Irecv,
 * MPI_Improbe/Imrecv) and only the transfer backends touch the file, so a call can stop at any
 * step and continue later: that is how nonblocking collectives progress.  A blocking call runs
 * the same machine, waiting inside steps instead of returning — unless nonblocking calls are
 * pending, when it is polled along with them (waiting inside it could starve one of them that
 * another rank needs first).  Ranks thus issue the same MPI calls in the same order whatever
 * each of them waits for.
 *
 * Errors: the communication pattern depends only on the plan, so a rank whose file access
 * fails keeps exchanging (skipping its file access) and the final agreement makes every rank
 * return the error: nobody hangs.
 */
#include "coll/engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/trace.h"

/* MPI_STATUSES_IGNORE is (MPI_Status *)1 in MPICH, whose prototypes carry access attributes:
 * gcc 12 then warns of writing statuses into "a region of size 0".  One place says so. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
void weft_requests_wait(int n, MPI_Request *requests)
{
    if (n > 0)
        PMPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
}

int weft_requests_test(int n, MPI_Request *requests)
{
    int done = 1;
    if (n > 0)
        PMPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
    return done;
}
#pragma GCC diagnostic pop

int weft_requests_done(engine *e, int n, MPI_Request *requests)
{
    if (e->blocking) {
        weft_requests_wait(n, requests);
        return 1;
    }
    return weft_requests_test(n, requests);
}

/* ---- Agreement ---------------------------------------------------------------------------- */

/* Agree (minimum over ranks) on `rc`; the result is in c->agree_out once the stage's request
 * completes. */
static void agree_post(weft_coll_call *c, int rc)
{
    c->agree_in = rc;
    MPI_Iallreduce(&c->agree_in, &c->agree_out, 1, MPI_INT, MPI_MIN, c->e.f->comm, &c->request);
}

/* ---- Setup and teardown ------------------------------------------------------------------ */

static weft_partition_kind partition_of(const weft_hints *h)
{
    static const weft_partition_kind kinds[] = {WEFT_PARTITION_EVEN, WEFT_PARTITION_EVEN_ALIGNED,
                                                WEFT_PARTITION_STATIC_CYCLIC,
                                                WEFT_PARTITION_GROUP_CYCLIC};
    return kinds[h->value[WEFT_HINT_WEFT_PARTITION]];
}

/* The call's local memory: cycle buffer (isend), halves' arrays, staging, the primitive's. */
static int setup_local(engine *e)
{
    weft_file *f = e->f;
    weft_coll_file *cf = e->cf;
    int P = f->nprocs, A = e->plan.naggregators;
    int rc = weft_window_alloc(&e->scratch, weft_plan_window_max(&e->plan));
    MPI_Offset half_bytes = e->plan.cycle_bytes;
    int own_buffer = e->shuffle->setup == NULL; /* the primitive's windows hold no halves */
    if (e->my_aggregator >= 0 && rc == 0 && own_buffer) {
        MPI_Offset need = 2 * half_bytes;
        if (cf->cycle_buffer_size < need) {
            free(cf->cycle_buffer);
            cf->cycle_buffer = malloc((size_t)need);
            cf->cycle_buffer_size = cf->cycle_buffer ? need : 0;
        }
        if (!cf->cycle_buffer)
            rc = -ENOMEM;
    }
    if (e->my_aggregator >= 0 && rc == 0 && !e->a->write &&
        !(e->spans = malloc(sizeof(MPI_Offset) * 2 * (size_t)P)))
        rc = -ENOMEM;
    for (int k = 0; k < 2 && rc == 0; k++) {
        half *h = &e->halves[k];
        h->out_at = malloc(sizeof(MPI_Count) * (size_t)(A + 1));
        h->in_at = malloc(sizeof(MPI_Count) * (size_t)(P + 1));
        h->index = k;
        h->requests = malloc(sizeof(MPI_Request) * (size_t)(P + A + 1)); /* + a barrier */
        h->drained = MPI_REQUEST_NULL;
        h->types = malloc(sizeof(MPI_Datatype) * (size_t)(P + A + 1));
        h->in_place = calloc((size_t)(P + A), 1);
        if (!h->out_at || !h->in_at || !h->requests || !h->types || !h->in_place ||
            weft_window_alloc(&h->win, weft_plan_window_max(&e->plan)))
            rc = -ENOMEM;
        if (e->my_aggregator >= 0 && rc == 0) {
            if (own_buffer)
                h->buffer = (unsigned char *)cf->cycle_buffer + k * half_bytes;
            h->filled.bits = calloc((size_t)(half_bytes / 64 + 2), sizeof(uint64_t));
            weft_clear_marks(&h->filled); /* all zero already: sets the empty range */
            if (!h->filled.bits)
                rc = -ENOMEM;
        }
    }
    /* The staging buffers of the last call, kept by the file (engine_free hands them back). */
    for (int k = 0; k < 2; k++) {
        e->halves[k].staging = cf->staging[k];
        e->halves[k].staging_size = cf->staging_size[k];
        cf->staging[k] = NULL;
        cf->staging_size[k] = 0;
    }
    if (rc == 0)
        rc = weft_size_staging(e);
    if (rc == 0 && e->shuffle->prepare)
        rc = e->shuffle->prepare(e);
    return rc;
}

static void engine_free(engine *e)
{
    if (e->views) {
        for (int r = 0; r < e->f->nprocs; r++)
            if (e->views[r].filetype)
                weft_dtype_put(e->views[r].filetype);
        free(e->views);
    }
    for (int k = 0; k < 2; k++) {
        half *h = &e->halves[k];
        /* Staging stays with the file for the next call (no page faults on every call). */
        if (h->staging) {
            e->cf->staging[k] = h->staging;
            e->cf->staging_size[k] = h->staging_size;
        }
        weft_window_free(&h->win);
        free(h->filled.bits);
        free(h->out_at);
        free(h->in_at);
        free(h->requests);
        free(h->types);
        free(h->in_place);
        free(h->ops);
        free(h->iov);
    }
    weft_window_free(&e->scratch);
    free(e->shm_ptr);
    free(e->shm_half);
    free(e->spans);
    free(e->pdisp);
    free(e->plen);
    if (e->plan_built)
        weft_plan_free(&e->plan);
}

/* ---- weft_overlap=auto ---------------------------------------------------------------------
 * Step 1: the first cycle runs without overlap, measured; all ranks agree (max over ranks) on
 * shuffle and file time: overlap only pays when both phases take real time.  Every rank's
 * backend also says whether it is asynchronous (same answer on all ranks: backends are chosen
 * per rank, schedules must not be).
 * Step 2 (writes): which schedule wins depends on the MPI's progress, the backend and the
 * cores left over (seed 000 table 1), so each candidate runs AUTO_TRIAL_CYCLES cycles of the
 * call, timed from its first post to its last completion, and the one whose slowest rank was
 * fastest (one allreduce) takes the rest.  Through a synchronous backend a write blocks
 * wherever it is started, so write and write-comm are none with half-size cycles: the
 * candidates are then none, comm and write-comm-2.  Every rank runs the same cycles in the
 * same schedules, so the primitives' synchronisation stays matched.  No trials when they would
 * take more than half of the cycles left: a poor candidate should cost little.
 * The pick is remembered per file and direction (a read's measurement says nothing about the
 * write schedules).  A nonblocking call uses a pick but never makes one (stage_setup_agreed). */
static const char *const trial_span[] = {"auto trial: none", "auto trial: comm",
                                         "auto trial: write", "auto trial: write-comm",
                                         "auto trial: write-comm-2"};

static int *remembered(weft_coll_call *c) { return &c->e.cf->overlap_chosen[c->a.write ? 1 : 0]; }

static void auto_settle(weft_coll_call *c, int schedule, int first, int remember)
{
    engine *e = &c->e;
    if (remember && !c->nonblocking)
        *remembered(c) = schedule;
    e->overlap = schedule;
    weft_schedule_begin(e, schedule, first, e->plan.ncycles);
    c->stage = CYCLES;
}

/* After the first cycle: does overlap pay, and which candidates to try. */
static void auto_decide(weft_coll_call *c)
{
    engine *e = &c->e;
    double shuffle = c->most[0], file = c->most[1];
    double small = shuffle < file ? shuffle : file, large = shuffle < file ? file : shuffle;
    int all_async = c->most[2] == 0;
    int pays = !(large < 50e-6 || small < 0.1 * large);
    /* Tests make the trials run whatever the first cycle measured (WEFT_TEST_AUTO_TRIAL=1,
     * set on every rank), since tiny test cycles rarely take real time. */
    if (!pays && !getenv("WEFT_TEST_AUTO_TRIAL")) {
        auto_settle(c, WEFT_OVERLAP_NONE, 1, 1);
        return;
    }
    /* A read prefetches only when every backend is asynchronous: a synchronous backend reads
     * the next window before this one is scattered, which overlaps nothing and keeps two
     * windows in cache (2 ranks, tmpfs and ext4: reads of 8 to 512-byte pieces 4-15 % faster
     * without). */
    if (!e->a->write) {
        auto_settle(c, all_async ? WEFT_OVERLAP_WRITE_COMM : WEFT_OVERLAP_NONE, 1, 1);
        return;
    }
    int n = 0;
    c->candidates[n++] = all_async ? WEFT_OVERLAP_WRITE_COMM : WEFT_OVERLAP_NONE;
    if (e->shuffle->testable)
        c->candidates[n++] = WEFT_OVERLAP_WRITE_COMM_2;
    if (all_async)
        c->candidates[n++] = WEFT_OVERLAP_WRITE;
    c->candidates[n++] = WEFT_OVERLAP_COMM;
    c->ncandidates = n;
    if (e->plan.ncycles - 1 < 2 * n * AUTO_TRIAL_CYCLES) {
        /* Too short for trials: write-comm-2 keeps two shuffles in flight whatever the
         * backend (the fastest fixed schedule, or within the spread of it, on every
         * small-piece case measured; docs/COLLECTIVE.md); nothing remembered, so a later,
         * longer write still measures. */
        auto_settle(c, e->shuffle->testable ? WEFT_OVERLAP_WRITE_COMM_2 : WEFT_OVERLAP_WRITE_COMM,
                    1, 0);
        return;
    }
    c->trial = 0;
    c->trial_began = weft_now();
    e->overlap = c->candidates[0];
    weft_schedule_begin(e, e->overlap, 1, 1 + AUTO_TRIAL_CYCLES);
    c->stage = AUTO_TRIAL;
}

/* ---- The machine --------------------------------------------------------------------------- */

static void stage_facts(weft_coll_call *c)
{
    engine *e = &c->e;
    weft_file *f = e->f;
    const weft_access *a = e->a;
    int rc = c->local_rc;
    c->t0 = weft_now();
    int64_t *mine = c->mine;
    memset(mine, 0, sizeof c->mine);
    mine[F_RC] = rc;
    mine[F_FIRST] = mine[F_END] = -1;
    mine[F_POSITION] = a->view_position;
    mine[F_BYTES] = a->bytes;
    mine[F_SHUFFLE] = f->hints.value[WEFT_HINT_WEFT_SHUFFLE];
    if (rc == 0 && a->bytes > 0) {
        const weft_dtype *ft = f->view.filetype_t;
        mine[F_FIRST] = weft_view_byte_offset(&f->view, a->view_position);
        mine[F_END] = weft_view_byte_offset(&f->view, a->view_position + a->bytes - 1) + 1;
        if (!weft_dtype_is_monotonic(ft) || !weft_dtype_tiles_in_order(ft))
            mine[F_FLAGS] |= FLAG_INDEPENDENT; /* positions and offsets do not grow together */
    }
    c->hint = a->write ? WEFT_HINT_ROMIO_CB_WRITE : WEFT_HINT_ROMIO_CB_READ;
    if (f->hints.value[c->hint] == WEFT_CB_DISABLE)
        mine[F_FLAGS] |= FLAG_INDEPENDENT;
    if (!a->write && rc == 0) {
        MPI_Offset size = 0;
        int err = f->fs->get_size(f->fd, &size);
        if (err)
            mine[F_RC] = err;
        mine[F_FILE_SIZE] = size;
    }
    e->all = weft_call_table(f).all;
    MPI_Iallgather(mine, F_COUNT, MPI_INT64_T, e->all, F_COUNT, MPI_INT64_T, f->comm, &c->request);
    c->stage = DECIDE;
}

/* A nonblocking call that goes straight to the file runs the access on a thread of its own
 * (it makes no MPI call), so the application computes meanwhile — where a core is free for it:
 * the same rule as the transfer backends (weft_backend=auto picks threads only then). */
static void *independent_worker(void *arg)
{
    weft_coll_call *c = arg;
    MPI_Offset failed_at;
    c->own_rc = weft_access_independent(c->e.f, c->e.a, &c->done, &failed_at);
    __atomic_store_n(&c->worker_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int offload_allowed(const weft_coll_call *c)
{
    const weft_file *f = c->e.f;
    long long backend = f->hints.value[WEFT_HINT_WEFT_BACKEND];
    int kind = backend == WEFT_BACKEND_AUTO ? c->e.cf->auto_backend : (int)backend;
    return kind != WEFT_XFER_SYNC;
}

/* The facts are in: agree, go straight to the file, or build the plan. */
static void stage_decide(weft_coll_call *c)
{
    engine *e = &c->e;
    weft_file *f = e->f;
    call_table t = weft_call_table(f);
    int agreed = 0, independent = 0;
    for (int r = 0; r < f->nprocs; r++) {
        if (e->all[r][F_RC] < agreed)
            agreed = (int)e->all[r][F_RC];
        if (e->all[r][F_FLAGS] & FLAG_INDEPENDENT)
            independent = 1;
        if (e->all[r][F_FILE_SIZE] > e->file_size)
            e->file_size = e->all[r][F_FILE_SIZE];
    }
    if (agreed < 0) {
        c->agreed = agreed;
        c->own_rc = (int)c->mine[F_RC];
        c->stage = DONE;
        return;
    }
    MPI_Offset total_bytes = 0;
    int senders = 0;
    for (int r = 0; r < f->nprocs; r++) {
        t.first[r] = e->all[r][F_BYTES] > 0 ? e->all[r][F_FIRST] : -1;
        t.end[r] = e->all[r][F_BYTES] > 0 ? e->all[r][F_END] : -1;
        total_bytes += e->all[r][F_BYTES];
        senders += e->all[r][F_BYTES] > 0;
    }
    /* With an overlap schedule two cycles are in flight, each in its share of the buffer. */
    MPI_Offset share = f->hints.value[WEFT_HINT_CB_BUFFER_SIZE] /
                       (e->overlap == WEFT_OVERLAP_NONE ? 1 : 2);
    MPI_Offset cycle_hint = f->hints.value[WEFT_HINT_WEFT_CYCLE_SIZE];
    weft_plan_input in = {
        .nprocs = f->nprocs,
        .first = t.first,
        .end = t.end,
        .node_of_rank = e->cf->node_of_rank,
        .nnodes = e->cf->nnodes,
        .cb_nodes = (int)f->hints.value[WEFT_HINT_CB_NODES],
        .cb_config_list = f->hints.text[WEFT_HINT_CB_CONFIG_LIST],
        .node_name = e->cf->node_name,
        /* auto keeps as many of the list's aggregators as the data fills cycles for (an
         * explicit cb_nodes is kept as given) */
        .aggregators_auto = f->hints.value[WEFT_HINT_WEFT_AGGREGATORS] == WEFT_AGGREGATORS_AUTO &&
                            f->hints.value[WEFT_HINT_CB_NODES] == 0,
        .total_bytes = total_bytes,
        .cb_buffer_size = weft_plan_cycle_size(share, cycle_hint, senders),
        .auto_bytes = 0, /* the cycle size */
        .partition = partition_of(&f->hints),
        .stripe_unit = f->hints.value[WEFT_HINT_STRIPING_UNIT],
        .stripe_count = (int)f->hints.value[WEFT_HINT_STRIPING_FACTOR],
    };
    /* automatic: aggregation pays when accesses interleave; otherwise each rank's own
     * contiguous-ish range goes straight to the file.  Every rank decides the same from the
     * same table, and the check cannot fail: no agreement needed before going. */
    if (!independent && f->hints.value[c->hint] == WEFT_CB_AUTOMATIC &&
        !weft_plan_interleaved_in(&in, t.scratch))
        independent = 1;
    if (independent) {
        f->stats.plan_seconds += weft_now() - c->t0;
        f->stats.collective_independent++;
        if (c->nonblocking && offload_allowed(c) &&
            pthread_create(&c->worker, NULL, independent_worker, c) == 0) {
            c->stage = INDEPENDENT_RUN;
            return;
        }
        MPI_Offset failed_at;
        c->own_rc = weft_access_independent(f, e->a, &c->done, &failed_at);
        agree_post(c, c->own_rc);
        c->stage = INDEPENDENT_AGREED;
        return;
    }
    int rc = weft_plan_build(&in, &e->plan);
    e->plan_built = rc == 0;
    weft_coll_file *cf = e->cf;
    if (rc == 0 && e->plan.config_fallback && !cf->warned_config && f->rank == 0)
        fprintf(stderr, "weft: %s: cb_config_list \"%s\" %s; using \"*:1\"\n", f->path,
                in.cb_config_list,
                e->plan.config_fallback == WEFT_PLAN_CONFIG_MALFORMED ? "is malformed"
                                                                      : "names no host of this job");
    cf->warned_config |= rc == 0 && e->plan.config_fallback;
    /* Everyone computed the same plan from the same input; a failure to build it (memory) is
     * agreed on before any data moves. */
    c->own_rc = rc;
    agree_post(c, rc);
    c->stage = PLAN_AGREED;
}

static void stage_plan_agreed(weft_coll_call *c)
{
    engine *e = &c->e;
    weft_file *f = e->f;
    if (c->agree_out < 0) {
        f->stats.plan_seconds += weft_now() - c->t0;
        c->agreed = c->agree_out;
        c->stage = DONE;
        engine_free(e);
        return;
    }
    for (int ag = 0; ag < e->plan.naggregators; ag++)
        if (e->plan.aggregator_rank[ag] == f->rank)
            e->my_aggregator = ag;
    /* The primitive is rank 0's hint, so every rank follows the same pattern; nonblocking
     * calls (the same on every rank) use a resumable one.  A primitive without testable
     * completions runs write-comm-2 as write-comm (see shuffle_rma.c). */
    e->shuffle = weft_shuffle_ops_of((int)e->all[0][F_SHUFFLE]);
    if (c->nonblocking && !e->shuffle->resumable)
        e->shuffle = &weft_shuffle_isend_ops;
    if (!e->shuffle->testable && e->overlap == WEFT_OVERLAP_WRITE_COMM_2) {
        e->overlap = WEFT_OVERLAP_WRITE_COMM;
        c->degraded = e->a->write; /* reads prefetch the same way under both */
    }
    f->stats.aggregators = e->plan.naggregators;
    f->stats.cycle_bytes = e->plan.cycle_bytes;
    f->stats.partition = (int)f->hints.value[WEFT_HINT_WEFT_PARTITION];
    weft_note_failure(e, weft_views_post(e, &c->views));
    c->stage = VIEWS_MATCH;
}

/* The views are in: the transfer backend and the call's memory, then one agreement on all of
 * it before any data moves. */
static void stage_setup(weft_coll_call *c)
{
    engine *e = &c->e;
    weft_file *f = e->f;
    weft_note_failure(e, weft_views_finish(e, &c->views));
    weft_xfer_kind kind = f->hints.value[WEFT_HINT_WEFT_BACKEND] == WEFT_BACKEND_AUTO
                              ? (weft_xfer_kind)e->cf->auto_backend
                              : (weft_xfer_kind)f->hints.value[WEFT_HINT_WEFT_BACKEND];
    e->backend_kind = WEFT_XFER_SYNC;
    weft_note_failure(e, weft_xfer_backend_get(kind, &e->backend, &e->backend_kind));
    e->backend_async = e->backend_kind != WEFT_XFER_SYNC;
    f->stats.plan_seconds += weft_now() - c->t0;
    weft_trace_end(c->t0, "plan + views", "plan", WEFT_TRACE_LANE_MPI, -1);
    if (e->rc == 0)
        weft_note_failure(e, setup_local(e));
    agree_post(c, e->rc);
    c->stage = SETUP_AGREED;
}

static void stage_setup_agreed(weft_coll_call *c)
{
    engine *e = &c->e;
    if (c->agree_out < 0) { /* views or memory failed somewhere: no data moves */
        c->agreed = c->agree_out;
        c->stage = END;
        return;
    }
    if (e->shuffle->setup) {
        if (!e->S)
            weft_shuffle_state_of(e);
        e->shuffle->setup(e); /* collective: windows created or grown */
    }
    if (e->overlap != WEFT_OVERLAP_AUTO) {
        weft_schedule_begin(e, e->overlap, 0, e->plan.ncycles);
        c->stage = CYCLES;
        return;
    }
    int chosen = *remembered(c);
    if (chosen >= 0) {
        auto_settle(c, chosen, 0, 0);
        return;
    }
    if (c->nonblocking) {
        /* Timing a nonblocking call times the application's polling, not the schedules:
         * data flow for writes (each completion posts its follow-up at once, whenever a poll
         * comes), prefetch for reads through an asynchronous backend.  isend needs no rank to
         * agree on the schedule (messages match by cycle whatever the order of phases). */
        auto_settle(c, e->a->write ? WEFT_OVERLAP_WRITE_COMM_2
                       : e->backend_async ? WEFT_OVERLAP_WRITE_COMM : WEFT_OVERLAP_NONE, 0, 0);
        return;
    }
    e->overlap = WEFT_OVERLAP_NONE;
    weft_schedule_begin(e, WEFT_OVERLAP_NONE, 0, 1);
    c->stage = AUTO_FIRST;
}

/* One pass: run stages until one must wait.  Returns STEP_DONE when the call is complete. */
step_result weft_call_advance(weft_coll_call *c)
{
    engine *e = &c->e;
    weft_file *f = e->f;
    for (;;) {
        if (c->request != MPI_REQUEST_NULL && !weft_requests_done(e, 1, &c->request))
            return STEP_PENDING;
        switch (c->stage) {
        case FACTS: stage_facts(c); break;
        case DECIDE: stage_decide(c); break;
        case INDEPENDENT_RUN:
            if (!__atomic_load_n(&c->worker_done, __ATOMIC_ACQUIRE))
                return STEP_PENDING; /* only nonblocking calls get here, never waiting */
            pthread_join(c->worker, NULL);
            agree_post(c, c->own_rc);
            c->stage = INDEPENDENT_AGREED;
            break;
        case INDEPENDENT_AGREED:
            c->agreed = c->agree_out;
            c->stage = DONE;
            break;
        case PLAN_AGREED: stage_plan_agreed(c); break;
        case VIEWS_MATCH:
            if (weft_views_match(e, &c->views) == STEP_PENDING)
                return STEP_PENDING;
            if (!weft_requests_done(e, c->views.nrequests, c->views.requests))
                return STEP_PENDING;
            c->stage = SETUP;
            break;
        case SETUP: stage_setup(c); break;
        case SETUP_AGREED: stage_setup_agreed(c); break;
        case AUTO_FIRST:
            if (weft_schedule_advance(e) == STEP_PENDING)
                return STEP_PENDING;
            c->measured[0] = e->shuffle_time;
            c->measured[1] = e->file_time;
            c->measured[2] = e->backend_async ? 0 : 1;
            MPI_Iallreduce(c->measured, c->most, 3, MPI_DOUBLE, MPI_MAX, f->comm, &c->request);
            c->stage = AUTO_PAYS;
            break;
        case AUTO_PAYS: auto_decide(c); break;
        case AUTO_TRIAL: {
            if (weft_schedule_advance(e) == STEP_PENDING)
                return STEP_PENDING;
            int first = 1 + c->trial * AUTO_TRIAL_CYCLES;
            c->took[c->trial] = weft_now() - c->trial_began;
            weft_trace_end(c->trial_began, trial_span[c->candidates[c->trial]], "overlap",
                           WEFT_TRACE_LANE_MPI, first);
            if (++c->trial < c->ncandidates) {
                c->trial_began = weft_now();
                e->overlap = c->candidates[c->trial];
                weft_schedule_begin(e, e->overlap, first + AUTO_TRIAL_CYCLES,
                                    first + 2 * AUTO_TRIAL_CYCLES);
                break;
            }
            MPI_Iallreduce(c->took, c->slowest, c->ncandidates, MPI_DOUBLE, MPI_MAX, f->comm,
                           &c->request);
            c->stage = AUTO_PICK;
            break;
        }
        case AUTO_PICK: {
            f->stats.auto_trials++;
            int best = 0;
            for (int k = 1; k < c->ncandidates; k++)
                if (c->slowest[k] < c->slowest[best])
                    best = k;
            auto_settle(c, c->candidates[best], 1 + c->ncandidates * AUTO_TRIAL_CYCLES, 1);
            break;
        }
        case CYCLES:
            if (weft_schedule_advance(e) == STEP_PENDING)
                return STEP_PENDING;
            c->stage = FINAL;
            break;
        case FINAL:
            agree_post(c, e->rc);
            c->stage = FINAL_AGREED;
            break;
        case FINAL_AGREED:
            c->agreed = c->agree_out;
            f->stats.shuffle_seconds += e->shuffle_time;
            f->stats.file_seconds += e->file_time;
            f->stats.overlap[e->a->write ? 1 : 0] = e->overlap;
            f->stats.backend = (int)e->backend_kind;
            f->stats.shuffle = (int)e->shuffle->kind;
            f->stats.degraded += (uint64_t)c->degraded;
            c->stage = END;
            break;
        case END:
            if (c->agreed == 0) {
                f->stats.collective_aggregated++;
                c->done = e->a->bytes;
                if (!e->a->write) {
                    MPI_Count exists =
                        weft_view_position_at(&f->view, e->file_size) - e->a->view_position;
                    c->done = exists < 0 ? 0 : exists < e->a->bytes ? exists : e->a->bytes;
                }
            }
            c->own_rc = e->rc;
            engine_free(e);
            c->stage = DONE;
            break;
        case DONE:
            return STEP_DONE;
        }
    }
}

void weft_call_init(weft_coll_call *c, weft_file *f, const weft_access *a, int local_rc,
                      int nonblocking)
{
    memset(c, 0, sizeof *c);
    c->a = *a;
    c->local_rc = local_rc;
    c->nonblocking = nonblocking;
    c->request = MPI_REQUEST_NULL;
    c->stage = FACTS;
    c->e.f = f;
    c->e.cf = f->coll;
    c->e.a = &c->a;
    c->e.my_aggregator = -1;
    c->e.overlap = (int)f->hints.value[WEFT_HINT_WEFT_OVERLAP];
    c->e.blocking = !nonblocking;
}
