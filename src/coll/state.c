/*
 * The engine's per-file state (weft_coll_file): what every collective call on the file needs
 * and keeps — nodes, host names, the per-rank call table, the buffers kept between calls,
 * auto's picks, the shuffle primitives' windows and the queue of nonblocking calls.  Made
 * collectively at open, so that starting a nonblocking collective needs no collective call.
 */
#include "coll/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"

call_table weft_call_table(const weft_file *f)
{
    size_t P = (size_t)f->nprocs;
    call_table t;
    t.all = f->coll->table;
    t.first = (MPI_Offset *)(t.all + P);
    t.end = t.first + P;
    t.scratch = t.end + P;
    return t;
}

/* Host name of every node, for cb_config_list: each node's first rank contributes its
 * processor name (one allgatherv of nnodes names); virtual node i is "vnode<i>".  Names live
 * in one block after the pointer array.  `counts`, `displs`: P ints of scratch each. */
static void gather_node_names(weft_file *f, weft_coll_file *cf, int virtual_nodes, const char **names,
                              int *counts, int *displs)
{
    enum { LEN = MPI_MAX_PROCESSOR_NAME + 1 };
    char *block = (char *)(names + cf->nnodes);
    if (virtual_nodes) {
        for (int n = 0; n < cf->nnodes; n++) {
            names[n] = block + (size_t)n * LEN;
            snprintf(block + (size_t)n * LEN, LEN, "vnode%d", n);
        }
        return;
    }
    int seen = 0; /* nodes are numbered by their first rank, in rank order */
    for (int r = 0; r < f->nprocs; r++) {
        int first_of_node = cf->node_of_rank[r] == seen;
        counts[r] = first_of_node ? LEN : 0;
        displs[r] = first_of_node ? seen * LEN : 0;
        seen += first_of_node;
    }
    char mine[LEN] = "";
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    MPI_Allgatherv(mine, counts[f->rank], MPI_CHAR, block, counts, displs, MPI_CHAR, f->comm);
    for (int n = 0; n < cf->nnodes; n++) {
        names[n] = block + (size_t)n * LEN;
        block[(size_t)n * LEN + LEN - 1] = '\0';
    }
}

/* Set up, once per file and collectively, what every collective call needs: the node index
 * of every rank — ranks sharing memory (MPI_COMM_TYPE_SHARED) are a node, numbered by their
 * lowest rank; WEFT_VIRTUAL_NODES=k instead cuts the ranks into k consecutive blocks, so
 * per-node logic runs on one machine as on a cluster — the nodes' host names, and the call
 * table.  Allocation failures are agreed on here: a rank that skipped a collective would
 * leave the others waiting in it. */
int weft_coll_open(weft_file *f)
{
    size_t P = (size_t)f->nprocs;
    int *map = malloc(sizeof *map * P);
    int *number = malloc(sizeof *number * P * 2);
    void *table = malloc(P * (sizeof(int64_t[F_COUNT]) + 2 * sizeof(MPI_Offset)) +
                         weft_plan_interleaved_scratch_bytes(f->nprocs));
    weft_coll_file *cf = calloc(1, sizeof *cf);
    int rc = weft_agree(f->comm, cf && map && number && table ? 0 : -ENOMEM);
    if (rc < 0) {
        free(cf);
        free(map);
        free(number);
        free(table);
        return rc;
    }
    cf->overlap_chosen[0] = cf->overlap_chosen[1] = -1;
    const char *virtual_nodes = getenv("WEFT_VIRTUAL_NODES");
    int k = virtual_nodes ? atoi(virtual_nodes) : 0;
    MPI_Comm node;
    int leader = f->rank;
    MPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    int machine_ranks; /* real cores are shared by real ranks */
    MPI_Comm_size(node, &machine_ranks);
    cf->auto_backend = (int)weft_xfer_auto_kind(machine_ranks);
    if (k <= 0) /* real nodes: named by their lowest rank */
        MPI_Allreduce(&f->rank, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (k > 0) {
        if (k > f->nprocs)
            k = f->nprocs;
        for (int r = 0; r < f->nprocs; r++)
            map[r] = (int)((long long)r * k / f->nprocs);
        cf->nnodes = k;
    } else {
        MPI_Allgather(&leader, 1, MPI_INT, map, 1, MPI_INT, f->comm);
        for (int r = 0; r < f->nprocs; r++)
            number[r] = -1;
        cf->nnodes = 0;
        for (int r = 0; r < f->nprocs; r++) {
            if (number[map[r]] < 0)
                number[map[r]] = cf->nnodes++;
            map[r] = number[map[r]];
        }
    }
    const char **names = malloc((size_t)cf->nnodes * (sizeof(char *) + MPI_MAX_PROCESSOR_NAME + 1));
    rc = weft_agree(f->comm, names ? 0 : -ENOMEM);
    if (rc < 0) {
        free(map);
        free(number);
        free(table);
        free(names);
        free(cf);
        return rc;
    }
    cf->node_of_rank = map;
    gather_node_names(f, cf, k > 0, names, number, number + P);
    free(number);
    cf->node_name = names;
    cf->table = table;
    f->coll = cf;
    return 0;
}

void weft_coll_close(weft_file *f)
{
    weft_coll_file *cf = f->coll;
    if (!cf)
        return;
    weft_coll_drain(f);
    weft_shuffle_release(cf->shuffle); /* collective (windows): before the communicator goes */
    free(cf->node_of_rank);
    free(cf->table);
    free(cf->node_name);
    free(cf->cycle_buffer);
    free(cf->staging[0]);
    free(cf->staging[1]);
    free(cf);
    f->coll = NULL;
}
