#include "common/trace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

typedef struct trace_event {
    double start, duration;
    const char *name, *category; /* string literals */
    int lane, cycle;
} trace_event;

/* Bounded: a long run keeps its first events rather than growing without limit. */
#define TRACE_MAX_EVENTS (1 << 20)

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static trace_event *events;
static size_t nevents;
static char trace_dir[512];
static int trace_rank = -1;
static double epoch;

static void write_trace(void)
{
    if (!events || nevents == 0)
        return;
    char path[600];
    snprintf(path, sizeof path, "%s/weft-trace.%d.json", trace_dir, trace_rank < 0 ? 0 : trace_rank);
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "weft: WEFT_TRACE: cannot write %s\n", path);
        return;
    }
    fprintf(out, "{\"traceEvents\":[\n");
    fprintf(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}},\n",
            trace_rank, trace_rank);
    fprintf(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"MPI thread\"}},\n",
            trace_rank);
    fprintf(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":1,\"args\":{\"name\":\"transfer backend\"}}",
            trace_rank);
    for (size_t i = 0; i < nevents; i++) {
        const trace_event *e = &events[i];
        fprintf(out, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,"
                     "\"ts\":%.3f,\"dur\":%.3f",
                e->name, e->category, trace_rank, e->lane, (e->start - epoch) * 1e6,
                e->duration * 1e6);
        if (e->cycle >= 0)
            fprintf(out, ",\"args\":{\"cycle\":%d}", e->cycle);
        fputc('}', out);
    }
    fprintf(out, "\n]}\n");
    fclose(out);
}

static void start(void)
{
    const char *dir = getenv("WEFT_TRACE");
    if (!dir || !*dir)
        return;
    events = malloc(sizeof *events * TRACE_MAX_EVENTS);
    if (!events)
        return;
    snprintf(trace_dir, sizeof trace_dir, "%s", dir);
    epoch = weft_now();
    atexit(write_trace);
}

int weft_trace_enabled(void)
{
    pthread_once(&trace_once, start);
    return events != NULL;
}

void weft_trace_set_rank(int rank)
{
    trace_rank = rank;
}

double weft_trace_begin(void)
{
    return weft_trace_enabled() ? weft_now() : 0;
}

void weft_trace_end(double began, const char *name, const char *category, int lane, int cycle)
{
    if (began == 0 || !events)
        return;
    double now = weft_now();
    pthread_mutex_lock(&trace_lock);
    if (nevents < TRACE_MAX_EVENTS)
        events[nevents++] = (trace_event){.start = began, .duration = now - began, .name = name,
                                          .category = category, .lane = lane, .cycle = cycle};
    pthread_mutex_unlock(&trace_lock);
}
