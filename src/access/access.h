/*
 * Access paths (DESIGN.md §2 layer 3): the description of one access (weft_access), shared by
 * both paths, and the independent path — list I/O walking the file view and the memory layout
 * together with two datatype cursors, a bounce buffer for fragmented memory, and data sieving
 * for reads (independent.c).  The collective path is src/coll (coll/coll.h).
 */
#ifndef WEFT_ACCESS_H
#define WEFT_ACCESS_H

#include "file/file.h"

typedef struct weft_access {
    int write;                 /* 1 write, 0 read */
    MPI_Count view_position;   /* first byte of view data to access */
    void *buf;                 /* user buffer (may be MPI_BOTTOM) */
    MPI_Count count;
    const weft_dtype *memtype;
    MPI_Count bytes;           /* count * size of memtype */
} weft_access;

/* Run an independent access.  Returns 0 or a negative code; *done gets the bytes moved
 * (for reads, fewer than requested at end of file).  On error *offset_out (may be NULL) gets
 * the file offset at which the failing transfer started. */
int weft_access_independent(weft_file *f, const weft_access *a, MPI_Count *done,
                            MPI_Offset *offset_out);

#endif
