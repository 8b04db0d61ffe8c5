/* Shared between the transfer backends (not part of the xfer.h interface). */
#ifndef WEFT_XFER_INTERNAL_H
#define WEFT_XFER_INTERNAL_H

#include "xfer/xfer.h"

#include <limits.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* Per-call limits: WEFT_XFER_MAX_PER_CALL and IOV_MAX unless a test lowered them. */
extern MPI_Count weft_xfer_max_bytes_;
extern int weft_xfer_max_iov_;

struct weft_xfer_backend {
    weft_xfer_kind kind;
    int (*submit)(weft_xfer_op *op);
    int (*wait)(weft_xfer_op *op);
    int (*test)(weft_xfer_op *op, int *complete);
};

/* Runs the op synchronously (weft_xfer_pwritev_all/preadv_all) and fills done/rc/syscalls. */
void weft_xfer_run_(weft_xfer_op *op);

/* The thread pool backend; 0 or -errno (workers start lazily, so this rarely fails). */
int weft_xfer_threads_get_(weft_xfer_backend **b);
/* The io_uring backend, or -errno (and *why, a static string) when unavailable. */
int weft_xfer_uring_get_(weft_xfer_backend **b, const char **why);

#define WEFT_XFER_IDLE 0
#define WEFT_XFER_INFLIGHT 1
#define WEFT_XFER_COMPLETE 2

#endif
