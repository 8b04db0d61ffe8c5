/*
 * The view exchange of a call (DESIGN.md §3.1 step 2): each rank sends its file view
 * (serialized compact layout + displacement) to the aggregators whose domains its range
 * touches; an aggregator receives the views of the ranks whose ranges touch its domain.  Both
 * sides enumerate the same pairs from the plan, so no sizes or counts are exchanged.
 *
 * Resumable: views_post sends; views_match matches the expected messages (MPI_Mprobe when the
 * call may block, MPI_Improbe otherwise) and posts MPI_Imrecv for each; views_finish, once the
 * requests completed, decodes them.
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

/* Which aggregators own some byte of rank r's range: walk the owner runs, marking `touches`
 * (A flags, cleared here).  Returns 1 when `stop_at` (an aggregator, or -1) is among them. */
static int touched_aggregators(const engine *e, int r, char *touches, int stop_at)
{
    int A = e->plan.naggregators, seen = 0;
    MPI_Offset at = e->all[r][F_FIRST], end = e->all[r][F_END];
    memset(touches, 0, (size_t)A);
    while (at < end && seen < A) {
        MPI_Offset run_end;
        int owner = weft_plan_owner(&e->plan, at, &run_end);
        if (!touches[owner]) {
            touches[owner] = 1;
            seen++;
        }
        if (owner == stop_at)
            return 1;
        at = run_end > at ? run_end : end;
    }
    return 0;
}

int weft_views_post(engine *e, views_exchange *x)
{
    weft_file *f = e->f;
    int P = f->nprocs, A = e->plan.naggregators;
    int rc = 0;
    x->requests = calloc((size_t)(A + P + 1), sizeof *x->requests);
    x->expected = calloc((size_t)P + 1, 1);
    x->in = calloc((size_t)P + 1, sizeof *x->in);
    x->in_len = calloc((size_t)P + 1, sizeof *x->in_len);
    char *touches = calloc((size_t)A + 1, 1);
    if (!x->requests || !x->expected || !x->in || !x->in_len || !touches) {
        free(touches);
        return -ENOMEM; /* nothing posted: the agreement after the exchange reports it */
    }
    x->nrequests = 0;
    if (e->all[f->rank][F_BYTES] > 0) {
        rc = weft_dtype_serialize(f->view.filetype_t, &x->blob, &x->blob_len);
        x->message = rc == 0 ? malloc(x->blob_len + sizeof(MPI_Offset)) : NULL;
        if (rc == 0 && !x->message)
            rc = -ENOMEM;
        if (rc == 0) {
            memcpy(x->message, &f->view.disp, sizeof(MPI_Offset));
            memcpy(x->message + sizeof(MPI_Offset), x->blob, x->blob_len);
            touched_aggregators(e, f->rank, touches, -1);
            for (int a = 0; a < A; a++)
                if (touches[a])
                    MPI_Isend(x->message, (int)(x->blob_len + sizeof(MPI_Offset)), MPI_BYTE,
                              e->plan.aggregator_rank[a], TAG_VIEW, f->comm,
                              &x->requests[x->nrequests++]);
        }
    }
    if (e->my_aggregator >= 0) {
        e->views = calloc((size_t)P, sizeof *e->views);
        if (!e->views && rc == 0)
            rc = -ENOMEM;
        /* Does r's range touch my domain?  The same walk as the sender's, from r's side. */
        for (int r = 0; e->views && r < P; r++)
            x->expected[r] = e->all[r][F_BYTES] > 0 &&
                             touched_aggregators(e, r, touches, e->my_aggregator);
    }
    free(touches);
    return rc;
}

/* The message was matched but there is no memory for it: receive it empty (it is consumed
 * with MPI_ERR_TRUNCATE, which the communicator must return rather than abort on), and never
 * write through a NULL buffer. */
static void discard_matched(MPI_Comm comm, MPI_Message *msg)
{
    MPI_Errhandler previous;
    MPI_Status st;
    MPI_Comm_get_errhandler(comm, &previous);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Mrecv(NULL, 0, MPI_BYTE, msg, &st);
    MPI_Comm_set_errhandler(comm, previous);
    MPI_Errhandler_free(&previous);
}

step_result weft_views_match(engine *e, views_exchange *x)
{
    weft_file *f = e->f;
    int pending = 0;
    for (int r = 0; r < f->nprocs; r++) {
        if (x->expected[r] != 1)
            continue;
        MPI_Message msg;
        MPI_Status st;
        int found = 1, count = 0;
        if (e->blocking)
            MPI_Mprobe(r, TAG_VIEW, f->comm, &msg, &st);
        else
            MPI_Improbe(r, TAG_VIEW, f->comm, &found, &msg, &st);
        if (!found) {
            pending = 1;
            continue;
        }
        x->expected[r] = 2;
        MPI_Get_count(&st, MPI_BYTE, &count);
        x->in[r] = malloc((size_t)count + 1);
        x->in_len[r] = count;
        if (!x->in[r]) {
            discard_matched(f->comm, &msg);
            weft_note_failure(e, -ENOMEM);
            continue;
        }
        MPI_Imrecv(x->in[r], count, MPI_BYTE, &msg, &x->requests[x->nrequests++]);
    }
    return pending ? STEP_PENDING : STEP_DONE;
}

int weft_views_finish(engine *e, views_exchange *x)
{
    int rc = 0;
    for (int r = 0; x->in && r < e->f->nprocs; r++) {
        if (!x->in[r])
            continue;
        int count = x->in_len[r];
        if (count < (int)sizeof(MPI_Offset)) {
            if (rc == 0)
                rc = WEFT_MPI_ERR(MPI_ERR_INTERN);
        } else {
            memcpy(&e->views[r].disp, x->in[r], sizeof(MPI_Offset));
            int err = weft_dtype_deserialize(x->in[r] + sizeof(MPI_Offset),
                                             (size_t)count - sizeof(MPI_Offset),
                                             &e->views[r].filetype);
            if (err && rc == 0)
                rc = err;
        }
    }
    weft_views_free(e, x);
    return rc;
}

void weft_views_free(engine *e, views_exchange *x)
{
    for (int r = 0; x->in && r < e->f->nprocs; r++)
        free(x->in[r]);
    free(x->in);
    free(x->in_len);
    free(x->expected);
    free(x->requests);
    free(x->message);
    free(x->blob);
    memset(x, 0, sizeof *x);
}
