/*
 * Inside the collective engine (DESIGN.md §3.1-3.3): the structures every file of src/coll
 * shares, and the functions one file offers the others.  Nothing outside src/coll includes
 * this header; the layer's interface is coll.h.
 *
 * The map (docs/COLLECTIVE.md draws it):
 *   call.c         a call as a state machine: facts, plan, views, setup, cycles, agreement
 *   state.c        per-file state: nodes, the call table, kept buffers, pending calls
 *   exchange.c     the plan exchange: facts allgathered, the plan built, views shipped
 *   window.c       windows of a cycle, data positions inside them, the filled-bytes bitmap
 *   pieces.c       moving a rank's pieces: packing, scattering, staging layout
 *   shuffle_*.c    the shuffle primitives, each one weft_shuffle_ops table (shuffle.h)
 *   file_access.c  the aggregator's file access through the transfer backend
 *   schedule.c     the overlap schedules as data, their driver, and auto's choice
 */
#ifndef WEFT_COLL_ENGINE_H
#define WEFT_COLL_ENGINE_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/uio.h>

#include "coll/coll.h"
#include "coll/plan.h"
#include "coll/shuffle.h"
#include "xfer/xfer.h"

enum { TAG_VIEW = 0x5701, TAG_DATA = 0x5702 };

/* What every rank tells every other at the start of a call (one allgather). */
enum { F_RC, F_FIRST, F_END, F_POSITION, F_BYTES, F_FILE_SIZE, F_FLAGS, F_SHUFFLE, F_COUNT };
enum { FLAG_INDEPENDENT = 1 }; /* this rank wants (or needs) the independent path */

/* Per-file state of the engine, created collectively at open (state.c), freed at close. */
typedef struct weft_coll_file {
    int *node_of_rank;            /* node index per rank */
    int nnodes;
    const char **node_name;       /* host name per node (one allocation) */
    int auto_backend;             /* weft_backend=auto's pick for this rank (a weft_xfer_kind),
                                     from the ranks sharing its machine */
    void *table;                  /* per-rank table of a call's allgather and plan input, O(P) */
    int warned_config;            /* cb_config_list fallback reported (rank 0, once) */
    void *cycle_buffer;           /* the aggregator's buffer (isend), kept between calls */
    MPI_Offset cycle_buffer_size;
    void *staging[2];             /* packed streams of each half, kept between calls */
    MPI_Count staging_size[2];
    int overlap_chosen[2];        /* weft_overlap=auto's pick for reads [0] and writes [1],
                                     -1 until measured */
    weft_shuffle_state *shuffle;  /* windows and communicators of the shuffle primitives */
    struct weft_coll_call *pending_head, *pending_tail; /* nonblocking calls, in start order */
} weft_coll_file;

typedef struct remote_view {
    const weft_dtype *filetype; /* NULL: the rank sends nothing to this aggregator */
    MPI_Offset disp;
} remote_view;

/* An aggregator's window for one cycle: ranges of the file, back to back in its buffer. */
typedef struct window {
    int n;
    MPI_Offset *offset, *length, *at;
} window;

/* Bytes of a half that received data: a bitmap and the range [lo, hi) its marks lie in, so
 * that clearing and scanning cost what was marked, not the half's size (a sparse access's
 * cycles are mostly empty). */
typedef struct filled_map {
    uint64_t *bits;
    MPI_Offset lo, hi;          /* lo >= hi: nothing marked */
} filled_map;

/* One half of the cycle buffer, with everything one cycle in flight needs.  With an overlap
 * schedule two cycles are in flight, one per half (seed 000 §3.1.1). */
typedef struct half {
    int index;                  /* 0 or 1: which half (and which window) */
    int cycle;                  /* the cycle this half holds */
    window win;                 /* the aggregator's own window of that cycle */
    unsigned char *buffer;      /* aggregator: cycle_bytes of the cycle buffer */
    filled_map filled;          /* aggregator: bytes received */
    unsigned char *staging;     /* packed streams: outgoing (per aggregator), then incoming */
    MPI_Count staging_size;
    MPI_Count *out_at;          /* A + 1 offsets of my outgoing streams */
    MPI_Count *in_at;           /* P + 1 offsets of the incoming streams (aggregator) */
    MPI_Request *requests;
    int nreq;
    MPI_Request drained;        /* put-lock, shm in resumable calls: the "drained" Ibarrier */
    int moves_pending;          /* ... after which this rank's moves are still to be made */
    MPI_Datatype *types;        /* datatypes of transfers in flight, freed at completion */
    int ntypes;
    char *in_place;             /* isend: P flags (aggregator: rank r's data moves straight
                                   between MPI and the half) then A flags (mine: straight
                                   between MPI and the user's buffer) */
    weft_xfer_op *ops;          /* file access in flight */
    struct iovec *iov;
    int nops, ops_cap;
    double file_began;          /* trace: when this half's file access was submitted */
} half;

/* Where the schedule driver is inside a run of cycles (schedule.c); kept between polls. */
typedef struct schedule_cursor {
    int schedule;               /* WEFT_OVERLAP_* (never AUTO) */
    int first, end;             /* cycles [first, end) */
    int k, step;                /* fixed order: the round and the step in it */
    int posted, shuffled, written; /* data flow: cycles past each phase */
    int shuffling[2], writing[2];
    int running;                /* 0 before the run's first step */
} schedule_cursor;

typedef struct engine engine;

/* A call's steps and blocking: blocking calls wait inside a step (and use the blocking MPI
 * collectives); resumable calls (nonblocking collectives) post, test and return. */
typedef enum { STEP_DONE = 0, STEP_PENDING = 1 } step_result;

struct engine {
    weft_file *f;
    weft_coll_file *cf;         /* f->coll */
    const weft_access *a;
    int blocking;               /* 1: may wait inside MPI; 0: only test (nonblocking call) */
    int64_t (*all)[F_COUNT];    /* per rank */
    weft_plan plan;
    int plan_built;
    int my_aggregator;          /* index in the plan, or -1 */
    remote_view *views;         /* aggregator: per rank */
    MPI_Offset file_size;       /* for reads: bytes past it do not exist */
    window scratch;             /* a window being looked at (sender side) */
    half halves[2];
    weft_xfer_backend *backend;
    weft_xfer_kind backend_kind;/* after any fallback */
    int backend_async;          /* file access can run while this rank does something else */
    int overlap;                /* weft_overlap in effect for this call */
    double shuffle_time, file_time; /* this call, this rank: what auto measures */
    int rc;                     /* first local failure */
    const struct weft_shuffle_ops *shuffle; /* the primitive of this call (rank 0's hint) */
    weft_shuffle_state *S;      /* cf->shuffle */
    unsigned char **shm_ptr;    /* shm: per aggregator, its segment if in my group, else NULL */
    MPI_Offset *shm_half;       /* shm: per aggregator, bytes of each half of its segment */
    int shm_sync;               /* shm: my group holds an aggregator and more than one rank */
    MPI_Offset *spans;          /* aggregator, reads: 2P offsets, the file spans ranks need
                                   in one window range */
    MPI_Aint *pdisp;            /* RMA/in-place types: landing places of one rank's pieces */
    int *plen;
    int npieces, pcap;
    schedule_cursor run;        /* the cycles being run */
};

/* Per-rank table of one call: the allgathered facts, then the plan input arrays and the
 * interleaving check's scratch.  Lives in the file's state (state.c), so a call allocates
 * nothing before its allgather. */
typedef struct call_table {
    int64_t (*all)[F_COUNT];
    MPI_Offset *first, *end;
    void *scratch;
} call_table;
call_table weft_call_table(const weft_file *f);

/* ---- exchange.c: the views of a call ---------------------------------------------------- */
typedef struct views_exchange {
    void *blob;                 /* my serialized filetype */
    size_t blob_len;
    unsigned char *message;     /* displacement + blob */
    MPI_Request *requests;      /* sends to aggregators, then receives */
    int nrequests;
    char *expected;             /* aggregator, per rank: 1 view to match, 2 matched */
    unsigned char **in;         /* per rank: the received message */
    int *in_len;
} views_exchange;
int weft_views_post(engine *e, views_exchange *x);
step_result weft_views_match(engine *e, views_exchange *x);
int weft_views_finish(engine *e, views_exchange *x);
void weft_views_free(engine *e, views_exchange *x);

/* ---- window.c ------------------------------------------------------------------------- */
void weft_positions_in(const weft_dtype *filetype, MPI_Offset disp, MPI_Count position,
                       MPI_Count bytes, MPI_Offset lo, MPI_Offset hi, MPI_Count *from,
                       MPI_Count *to);
void weft_range_of(const engine *e, const window *w, int i, MPI_Offset *lo, MPI_Offset *hi);
int weft_positions_in_range(const engine *e, const window *w, int i, const weft_dtype *filetype,
                            MPI_Offset disp, MPI_Count position, MPI_Count bytes,
                            MPI_Offset *lo, MPI_Count *from, MPI_Count *to);
void weft_cursor_in_half(weft_cursor *c, const weft_dtype *filetype, MPI_Offset disp,
                         unsigned char *buffer, const window *w, int i, MPI_Offset lo,
                         MPI_Count from);
MPI_Count weft_stream_size(const engine *e, const window *w, const weft_dtype *filetype,
                           MPI_Offset disp, int r);
int weft_window_alloc(window *w, int max);
void weft_window_free(window *w);
void weft_load_window(const engine *e, window *w, int aggregator, int cycle);
void weft_mark(filled_map *m, MPI_Offset from, MPI_Offset len);
void weft_clear_marks(filled_map *m);
int weft_next_run(const uint64_t *bits, MPI_Offset from, MPI_Offset limit, MPI_Offset *start,
                  MPI_Offset *end);

/* ---- pieces.c -------------------------------------------------------------------------- */
typedef struct piece_ctx {
    engine *e;
    unsigned char *half_buffer; /* shm: the aggregator's half; NULL for other uses */
    unsigned char *stream;      /* shm: my packed stream for that aggregator */
    filled_map *filled;         /* bytes to mark (mark-only walks; scatters of streams) */
    int to_half;                /* shm: 1 stream -> half (write), 0 half -> stream (read) */
} piece_ctx;
typedef void (*piece_fn)(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at);

void weft_note_failure(engine *e, int rc);
int weft_grow(void **p, size_t *have, size_t need);
MPI_Count weft_move_user_data(engine *e, const window *w, unsigned char *stream, int pack);
void weft_walk_pieces(const engine *e, const window *w, const weft_dtype *filetype,
                      MPI_Offset disp, int r, piece_fn fn, piece_ctx *ctx);
void weft_piece_mark(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at);
void weft_piece_copy(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at);
void weft_piece_collect(piece_ctx *ctx, MPI_Offset in_buffer, MPI_Count length, MPI_Count at);
void weft_move_stream(engine *e, half *h, int r, unsigned char *stream, int to_buffer);
void weft_self_move(engine *e, half *h, int to_half);
int weft_size_staging(engine *e);
void weft_prepare_half(engine *e, half *h, int cycle);
MPI_Count weft_incoming(const engine *e, const half *h, int r);
void weft_free_types(half *h);

/* ---- shuffle.c (for the primitives) ----------------------------------------------------- */
void weft_direct_moves(engine *e, half *h, int get,
                       void (*move_one)(engine *e, half *h, int ag, int get));
/* put-lock and shm: a half's moves wait for the "drained" barrier on `comm` (every member's
 * half is free).  post: MPI_Ibarrier, waited on and followed by the moves at once in a
 * blocking call; advance (the primitive's hook): 1 once the barrier completed and the moves
 * were made, 0 while it is still pending. */
void weft_drained_post(engine *e, half *h, MPI_Comm comm,
                       void (*moves)(engine *e, half *h, int write), int write);
int weft_drained_advance(engine *e, half *h, void (*moves)(engine *e, half *h, int write),
                         int write);

/* ---- file_access.c --------------------------------------------------------------------- */
void weft_file_start(engine *e, half *h);
int weft_file_ready(engine *e, half *h);   /* every op of the half complete (never blocks) */
void weft_file_finish(engine *e, half *h);

/* ---- schedule.c ------------------------------------------------------------------------ */
/* Start running cycles [first, end) under `schedule`; then weft_schedule_advance until done. */
void weft_schedule_begin(engine *e, int which, int first, int end);
step_result weft_schedule_advance(engine *e);

/* ---- A call (call.c) -------------------------------------------------------------------- */
typedef enum {
    FACTS, DECIDE, INDEPENDENT_RUN, INDEPENDENT_AGREED, PLAN_AGREED, VIEWS_MATCH, SETUP,
    SETUP_AGREED, AUTO_FIRST, AUTO_PAYS, AUTO_TRIAL, AUTO_PICK, CYCLES, FINAL, FINAL_AGREED,
    END, DONE
} stage;

enum { AUTO_TRIAL_CYCLES = 3, AUTO_MAX_CANDIDATES = 4 };

struct weft_coll_call {
    engine e;
    weft_access a;              /* the engine points at this copy */
    int local_rc;
    int nonblocking;            /* started by weft_coll_start: resumable primitives only */
    stage stage;
    double t0;
    int hint;                   /* romio_cb_write or romio_cb_read */
    int64_t mine[F_COUNT];
    MPI_Request request;        /* the stage's collective */
    int agree_in, agree_out;
    views_exchange views;
    /* nonblocking, straight to the file: the access runs on a thread of its own */
    pthread_t worker;
    int worker_done;
    int degraded;
    /* auto */
    double measured[3], most[3];
    int candidates[AUTO_MAX_CANDIDATES], ncandidates, trial;
    double trial_began, took[AUTO_MAX_CANDIDATES], slowest[AUTO_MAX_CANDIDATES];
    /* results */
    MPI_Count done;
    int own_rc, agreed;
    /* nonblocking: the file's queue and the list of every pending call, in start order */
    struct weft_coll_call *next_in_file, *next_pending, *prev_pending;
    int pending;
    void (*on_complete)(void *arg);
    void *arg;
};

void weft_call_init(weft_coll_call *c, weft_file *f, const weft_access *a, int local_rc,
                    int nonblocking);
/* Run stages until one must wait (STEP_PENDING) or the call is complete (STEP_DONE). */
step_result weft_call_advance(weft_coll_call *c);

/* ---- MPI helpers (call.c) --------------------------------------------------------------- */
void weft_requests_wait(int n, MPI_Request *requests);
int weft_requests_test(int n, MPI_Request *requests);   /* 1 when all are complete */
/* Wait (calls that may block) or test; 1 when complete. */
int weft_requests_done(engine *e, int n, MPI_Request *requests);

#endif
