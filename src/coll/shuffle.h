/*
 * The shuffle primitives of the collective engine (hint weft_shuffle; DESIGN.md §3.3, seed 000
 * §3.1.2, seed 002), behind one interface.
 *
 * The data positions a rank has in an aggregator's window are known on both sides, and so is
 * where each piece lands in the aggregator's half: window.at[i] + (file offset - range lo).
 * Every primitive starts from the same place: a sender packs its data for each aggregator's
 * window into a stream (shuffle.c).  A stream travels as a message (MPI_Isend/Irecv) unless
 * the primitive moves it otherwise — one MPI_Put per aggregator and cycle whose target type is
 * the hindexed list of landing places (put-fence, put-lock), or a memcpy into a shared-memory
 * window (shm, within a node).  Reads mirror it.
 *
 * shuffle.c runs a cycle's shuffle phase for every primitive: it posts and completes the
 * streams and calls the primitive's table below for the rest.  The engine chooses a table
 * (rank 0's hint, or isend where the call cannot block); nothing branches on the kind.
 *
 *   isend      shuffle_isend.c  messages only; the default
 *   put-fence  shuffle_rma.c    MPI_Win_fence epochs; no testable completion, not resumable
 *   put-lock   shuffle_rma.c    lock(SHARED)/put/unlock with per-half barriers
 *   shm        shuffle_shm.c    memcpy through an MPI-3 shared window, isend across nodes
 *
 * Windows and communicators are per file (weft_shuffle_state): created by the first call that
 * needs them, grown collectively (decided from the plan alone, so identically on every rank)
 * and freed at close (weft_shuffle_release).
 */
#ifndef WEFT_COLL_SHUFFLE_H
#define WEFT_COLL_SHUFFLE_H

#include <mpi.h>

struct weft_file;
struct engine;
struct half;

typedef enum {
    WEFT_SHUFFLE_ISEND = 0,     /* MPI_Isend/Irecv of packed streams (default) */
    WEFT_SHUFFLE_PUT_FENCE = 1, /* MPI_Put into the aggregator's halves, MPI_Win_fence epochs */
    WEFT_SHUFFLE_PUT_LOCK = 2,  /* lock(SHARED)/MPI_Put/unlock + per-half barriers */
    WEFT_SHUFFLE_SHM = 3,       /* node-local memcpy into a shared window; isend across nodes */
} weft_shuffle_kind;

typedef struct weft_shuffle_ops {
    weft_shuffle_kind kind;     /* for statistics */
    /* Posts and completions never block on other ranks, so a nonblocking collective may use
     * it (the fences and barriers of the others would block inside MPI_Test). */
    int resumable;
    /* A cycle's completion shows in its requests (MPI_Testall), so the data-flow schedule
     * (write-comm-2) can run; put-fence's closing fence cannot be tested. */
    int testable;
    /* An aggregator's own data moves between the user's buffer and its half by one
     * two-cursor copy, not through the primitive. */
    int self_copies;
    /* Streams may move straight between MPI and the half or the user's buffer through an
     * hindexed type (long pieces) instead of the staging buffer. */
    int in_place;
    /* Local allocations of a call (no MPI); agreed on before setup.  NULL: none. */
    int (*prepare)(struct engine *e);
    /* Collective: create or grow the windows the plan needs and set the aggregator's half
     * buffers.  NULL: the halves live in the file's cycle buffer. */
    void (*setup)(struct engine *e);
    /* Aggregator: rank r's data arrives as a stream message. */
    int (*streams_from)(const struct engine *e, int r);
    /* Sender: my data for aggregator ag travels as a stream message. */
    int (*streams_to)(const struct engine *e, int ag);
    /* After the streams of a cycle are posted: move the rest (write: into the aggregators'
     * halves; read: out of them).  May add requests to the half.  NULL: nothing. */
    void (*post)(struct engine *e, struct half *h, int write);
    /* Calls that must not wait: what post left waiting on other ranks (put-lock's and shm's
     * "drained" barrier, posted as an MPI_Ibarrier there), tested; once it completed, the
     * moves and the rest are posted.  Returns 1 when all that is left is in the half's
     * requests.  NULL: post did everything (as it does in calls that may wait). */
    int (*advance)(struct engine *e, struct half *h, int write);
    /* After the half's requests completed: close what post opened.  NULL: nothing. */
    void (*complete)(struct engine *e, struct half *h, int write);
} weft_shuffle_ops;

extern const weft_shuffle_ops weft_shuffle_isend_ops, weft_shuffle_put_fence_ops,
    weft_shuffle_put_lock_ops, weft_shuffle_shm_ops;

/* The table of a weft_shuffle hint value. */
const weft_shuffle_ops *weft_shuffle_ops_of(int kind);

/* Per-file windows and communicators of the one-sided and shared-memory primitives. */
typedef struct weft_shuffle_state {
    /* put-fence / put-lock: one window per half over the file's communicator. */
    int rma_windows;            /* 1 once rma_win[] exist */
    MPI_Win rma_win[2];
    void *rma_base[2];
    MPI_Offset *rma_have;       /* per rank: bytes of each half window (same on all ranks) */
    int rma_comms;              /* 1 once rma_half_comm[] exist (put-lock barriers) */
    MPI_Comm rma_half_comm[2];
    /* shm: ranks of my (virtual) node that share memory. */
    int shm_comms;              /* 1 once shm_comm, shm_half_comm[], shm_group exist */
    MPI_Comm shm_comm;
    MPI_Comm shm_half_comm[2];
    int shm_rank, shm_size;
    int *shm_group;             /* per rank of the file: lowest file rank of its shm group */
    int *shm_rank_of;           /* per rank of the file: its rank in my shm_comm, or -1 */
    int shm_window;             /* 1 once shm_win exists (locked with lock_all until freed) */
    MPI_Win shm_win;
    MPI_Offset *shm_have;       /* per shm rank: bytes of each half (segment = 2 halves) */
} weft_shuffle_state;

/* The file's state, created on first use (local; NULL when out of memory). */
weft_shuffle_state *weft_shuffle_state_of(struct engine *e);

/* Collective over the file's communicator: frees every window and communicator (close). */
void weft_shuffle_release(weft_shuffle_state *S);

/* A cycle's shuffle phase (shuffle.c).  Writes: post packs and sends the streams and lets the
 * primitive move the rest; complete (once weft_requests_done) scatters what arrived into the
 * half and marks the filled bytes.  Reads: scatter_post sends each rank its part of the half,
 * scatter_complete unpacks it into the user's buffer. */
void weft_shuffle_post(struct engine *e, struct half *h, int cycle);
void weft_shuffle_complete(struct engine *e, struct half *h);
void weft_scatter_post(struct engine *e, struct half *h);
void weft_scatter_complete(struct engine *e, struct half *h);
/* May the half's shuffle complete without waiting?  (Advances the primitive's pending part.) */
int weft_shuffle_ready(struct engine *e, struct half *h);

#endif
