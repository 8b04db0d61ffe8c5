/*
 * Per-file state of the collective engine's shuffle primitives (hint weft_shuffle; DESIGN.md
 * §3.3, seed 000 §3.1.2, seed 002): the RMA windows of put-fence/put-lock and the node-local
 * shared-memory window of shm.  Windows are collective and costly, so they are created by the
 * first collective call that needs them, grown (collectively) when a later call needs larger
 * halves, and freed at MPI_File_close (weft_shuffle_release, from free_file), where every rank
 * frees the same objects in the same order.  The engine (coll/engine.c) owns their use.
 */
#ifndef WEFT_COLL_SHUFFLE_H
#define WEFT_COLL_SHUFFLE_H

#include <mpi.h>

struct weft_file;

typedef enum {
    WEFT_SHUFFLE_ISEND = 0,     /* MPI_Isend/Irecv of packed streams (default) */
    WEFT_SHUFFLE_PUT_FENCE = 1, /* MPI_Put into the aggregator's halves, MPI_Win_fence epochs */
    WEFT_SHUFFLE_PUT_LOCK = 2,  /* lock(SHARED)/MPI_Put/unlock + per-half barriers */
    WEFT_SHUFFLE_SHM = 3,       /* node-local memcpy into a shared window; isend across nodes */
} weft_shuffle_kind;

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

/* Collective over the file's communicator: frees every window and communicator (close). */
void weft_shuffle_release(struct weft_file *f);

#endif
