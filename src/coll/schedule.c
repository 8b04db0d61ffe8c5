/*
 * Overlap schedules (seed 000 §3.1.1, Algorithms 1-4), as data, and their driver.
 *
 * A cycle goes through four phases: its shuffle is posted and completed, its file access
 * submitted and completed (a write: shuffle first; a read: file first, then the scatter).  A
 * fixed-order schedule says which phases of which cycles run in each round k: a list of
 * (phase, cycle = k + delta) steps, rounds running from first - lead to last + lag, steps whose
 * cycle lies outside the run skipped.  Cycle c uses half c % 2 (or half 0 when the schedule
 * keeps one cycle in flight); a half is reused only after its previous cycle's file access
 * completed, which every table below respects.  The data-flow schedule (Algorithm 4) has no
 * fixed order: each completion posts its follow-up at once, decided by tests.
 *
 * The driver is resumable: a completion step whose requests or transfers are not done returns
 * STEP_PENDING (calls that may block wait instead), and the next call continues at that step.
 * Every rank runs the same steps in the same order (the data-flow schedule aside, which is only
 * used with primitives whose completions are testable and need no matching order).
 */
#include "coll/engine.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/trace.h"

typedef enum { SHUFFLE_POST, SHUFFLE_DONE, FILE_POST, FILE_DONE } phase;

typedef struct step {
    unsigned char phase;
    signed char delta;          /* the step's cycle is the round's + delta */
} step;

typedef struct schedule {
    int halves;                 /* cycles in flight: 1 (all in half 0) or 2 */
    int lead, lag;              /* rounds from first - lead to last + lag */
    int nsteps;
    step steps[4];
    int dataflow;               /* Algorithm 4: no fixed order */
} schedule;

#define STEPS(a, da, b, db, c, dc, d, dd) 4, {{a, da}, {b, db}, {c, dc}, {d, dd}}

/* Writes, by weft_overlap value (auto resolves to one of these). */
static const schedule write_schedules[WEFT_OVERLAP_COUNT] = {
    /* none: each cycle shuffled, then written */
    [WEFT_OVERLAP_NONE] = {1, 0, 0, STEPS(SHUFFLE_POST, 0, SHUFFLE_DONE, 0, FILE_POST, 0,
                                          FILE_DONE, 0)},
    /* comm (Algorithm 1): the next shuffle flies while this cycle is written */
    [WEFT_OVERLAP_COMM] = {2, 1, 0, STEPS(SHUFFLE_DONE, 0, SHUFFLE_POST, 1, FILE_POST, 0,
                                          FILE_DONE, 0)},
    /* write (Algorithm 2): blocking shuffle, asynchronous write completed two cycles later */
    [WEFT_OVERLAP_WRITE] = {2, 0, 2, STEPS(FILE_DONE, -2, SHUFFLE_POST, 0, SHUFFLE_DONE, 0,
                                           FILE_POST, 0)},
    /* write-comm (Algorithm 3): write c and shuffle c+1 in flight, completed together */
    [WEFT_OVERLAP_WRITE_COMM] = {2, 1, 0, STEPS(FILE_POST, 0, SHUFFLE_POST, 1, SHUFFLE_DONE, 1,
                                                FILE_DONE, 0)},
    /* write-comm-2 (Algorithm 4): data flow */
    [WEFT_OVERLAP_WRITE_COMM_2] = {.halves = 2, .dataflow = 1},
};

/* Reads: without overlap read then scatter; with any overlap the next cycle's read is in
 * flight while this cycle is scattered (prefetch). */
static const schedule read_none = {1, 0, 0, STEPS(FILE_POST, 0, FILE_DONE, 0, SHUFFLE_POST, 0,
                                                  SHUFFLE_DONE, 0)};
static const schedule read_prefetch = {2, 1, 0, STEPS(FILE_DONE, 0, FILE_POST, 1, SHUFFLE_POST,
                                                      0, SHUFFLE_DONE, 0)};

static const schedule *schedule_of(const engine *e)
{
    if (!e->a->write)
        return e->run.schedule == WEFT_OVERLAP_NONE ? &read_none : &read_prefetch;
    return &write_schedules[e->run.schedule];
}

static half *half_of(engine *e, const schedule *s, int cycle)
{
    return &e->halves[s->halves == 1 ? 0 : cycle % 2];
}

/* May a completion step run now?  Calls that may block always may (the completion waits). */
static int ready(engine *e, half *h, int ph)
{
    if (e->blocking)
        return 1;
    if (ph == SHUFFLE_DONE)
        return weft_shuffle_ready(e, h);
    return weft_file_ready(e, h);
}

static void run_phase(engine *e, half *h, int ph, int cycle)
{
    int write = e->a->write;
    switch (ph) {
    case SHUFFLE_POST:
        if (write)
            weft_shuffle_post(e, h, cycle);
        else
            weft_scatter_post(e, h);
        break;
    case SHUFFLE_DONE:
        if (write)
            weft_shuffle_complete(e, h);
        else
            weft_scatter_complete(e, h);
        break;
    case FILE_POST:
        if (!write)
            weft_prepare_half(e, h, cycle);
        weft_file_start(e, h);
        break;
    default:
        weft_file_finish(e, h);
        break;
    }
}

void weft_schedule_begin(engine *e, int which, int first, int end)
{
    if (which < 0 || which >= WEFT_OVERLAP_AUTO) { /* auto is resolved before (call.c) */
        fprintf(stderr, "weft: internal error: no schedule %d\n", which);
        abort();
    }
    schedule_cursor *run = &e->run;
    *run = (schedule_cursor){.schedule = which, .first = first, .end = end};
    const schedule *s = schedule_of(e);
    run->k = first - s->lead;
    run->posted = run->shuffled = run->written = first;
}

static step_result advance_fixed(engine *e, const schedule *s)
{
    schedule_cursor *run = &e->run;
    for (; run->k < run->end + s->lag; run->k++, run->step = 0) {
        for (; run->step < s->nsteps; run->step++) {
            step st = s->steps[run->step];
            int cycle = run->k + st.delta;
            if (cycle < run->first || cycle >= run->end)
                continue;
            half *h = half_of(e, s, cycle);
            if ((st.phase == SHUFFLE_DONE || st.phase == FILE_DONE) && !ready(e, h, st.phase))
                return STEP_PENDING;
            run_phase(e, h, st.phase, cycle);
        }
    }
    return STEP_DONE;
}

/* Algorithm 4, writes only: a free half takes the next cycle's shuffle; the oldest shuffle
 * done is scattered and its write submitted; the oldest write done frees its half.  Nothing
 * ready: a call that may block blocks on the oldest shuffle (or, with no shuffle in flight,
 * the oldest write); a resumable one returns. */
static step_result advance_dataflow(engine *e)
{
    schedule_cursor *run = &e->run;
    half *H = e->halves;
    while (run->written < run->end) {
        int progressed = 0;
        int p = run->posted % 2, s = run->shuffled % 2, w = run->written % 2;
        if (run->posted < run->end && !run->shuffling[p] && !run->writing[p] &&
            (run->posted == run->shuffled || run->posted == run->shuffled + 1)) {
            weft_shuffle_post(e, &H[p], run->posted);
            run->shuffling[p] = 1;
            run->posted++;
            progressed = 1;
        }
        if (run->shuffled < run->posted && run->shuffling[s] && weft_shuffle_ready(e, &H[s])) {
            weft_shuffle_complete(e, &H[s]);
            run->shuffling[s] = 0;
            weft_file_start(e, &H[s]);
            run->writing[s] = 1;
            run->shuffled++;
            progressed = 1;
        }
        if (run->written < run->shuffled && run->writing[w]) {
            int alone = run->posted == run->shuffled && !run->shuffling[(run->written + 1) % 2];
            if (weft_file_ready(e, &H[w]) || (e->blocking && alone)) {
                weft_file_finish(e, &H[w]); /* nothing else to overlap with: block */
                run->writing[w] = 0;
                run->written++;
                progressed = 1;
            }
        }
        if (progressed)
            continue;
        if (!e->blocking)
            return STEP_PENDING;
        if (run->shuffled < run->posted) {
            s = run->shuffled % 2; /* nothing ready: block on the oldest shuffle */
            weft_shuffle_complete(e, &H[s]);
            run->shuffling[s] = 0;
            weft_file_start(e, &H[s]);
            run->writing[s] = 1;
            run->shuffled++;
        }
    }
    return STEP_DONE;
}

step_result weft_schedule_advance(engine *e)
{
    const schedule *s = schedule_of(e);
    return s->dataflow ? advance_dataflow(e) : advance_fixed(e, s);
}
