/*
 * Internal error convention.  Functions below the API layer return 0 on success or a negative
 * code: -errno for an operating-system failure (so strerror can say why), or
 * WEFT_MPI_ERR(class) for a failure that is an MPI error class of its own (bad datatype,
 * bad argument, unsupported operation...).  The API layer converts once, at the boundary,
 * into a registered MPI error code whose string says what, where and why (api/errors.c).
 */
#ifndef WEFT_ERROR_H
#define WEFT_ERROR_H

#define WEFT_ERR_CLASS_BASE 0x40000
#define WEFT_MPI_ERR(cls) (-(WEFT_ERR_CLASS_BASE + (cls)))

static inline int weft_err_is_mpi_class(int rc) { return rc <= -WEFT_ERR_CLASS_BASE; }

/* MPI error class for an internal code (rc < 0); MPI_SUCCESS for rc >= 0. */
int weft_err_class(int rc);

/* Every rank of `comm` contributes its local result (0 or a negative code); returns the most
 * severe (the minimum), so all ranks leave a collective phase agreeing whether it failed. */


#include <mpi.h>
int weft_agree(MPI_Comm comm, int rc);

#endif
