/*
 * WEFT_TRACE=DIR: a per-rank timeline in the Chrome trace-event JSON format (opens in Perfetto
 * or chrome://tracing), one file DIR/weft-trace.<rank>.json per process, written at exit.
 * Spans are "complete" events (ph "X") with a name, a category, a lane (tid) and an optional
 * cycle number.  Recording is a few stores into a preallocated array; with WEFT_TRACE unset
 * every call returns at once.  Thread safe (the transfer backend's workers record too).
 */
#ifndef WEFT_TRACE_H
#define WEFT_TRACE_H

/* Lanes, shown as threads in the viewer. */
enum { WEFT_TRACE_LANE_MPI = 0, WEFT_TRACE_LANE_BACKEND = 1 };

int weft_trace_enabled(void);
/* Start of a span: returns a timestamp to hand to weft_trace_end (0 when tracing is off). */
double weft_trace_begin(void);
/* Record the span [began, now) as name/category on `lane`; cycle < 0: none. */
void weft_trace_end(double began, const char *name, const char *category, int lane, int cycle);
/* The rank that names this process's trace file (set once by the API layer). */
void weft_trace_set_rank(int rank);

#endif
