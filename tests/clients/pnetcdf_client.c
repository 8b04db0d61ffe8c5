/* Real-client test: a PnetCDF program (unmodified; it knows nothing of weft).
 *
 *   pnetcdf_client <dir> [seed]
 *
 * Creates <dir>/pnetcdf_client.nc (CDF-5) with a fixed-size 2-D int variable `temp` (NY x NX,
 * split over a 2-D process grid, written with ncmpi_put_vara_int_all) and a record variable
 * `rec` (time x NX, split by columns, written with nonblocking ncmpi_iput_vara_int +
 * ncmpi_wait_all).  Reopens it, reads all of `temp` collectively and its own block
 * independently, and all records collectively, checking every value.  The test then checks the
 * file with ncmpidump (verify_dump.py). */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_common.h"

#define NY 53
#define NX 38
#define NREC 3

static int rank;

#define NCCHECK(call)                                                                          \
    do {                                                                                       \
        int err_ = (call);                                                                     \
        if (err_ != NC_NOERR) {                                                                \
            fprintf(stderr, "rank %d: %s:%d: %s: %s\n", rank, __FILE__, __LINE__, #call,       \
                    ncmpi_strerror(err_));                                                     \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                      \
        }                                                                                      \
    } while (0)

/* Record t of `rec`: columns split over all ranks (1-D). */
static int32_t rec_value(uint32_t seed, int np, long t, long j)
{
    return client_value(seed + 7919u * (uint32_t)(t + 1), t, j, NX, client_part_of(NX, np, j));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s <dir> [seed]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint32_t seed = client_seed(argc, argv, 2);
    MPI_Bcast(&seed, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    char path[4096];
    snprintf(path, sizeof path, "%s/pnetcdf_client.nc", argv[1]);
    if (rank == 0)
        printf("pnetcdf_client: np=%d seed=%u file=%s dims=%dx%d records=%d\n", np, seed, path,
               NY, NX, NREC);

    int py, px;
    client_grid(np, &py, &px);
    long y0, y1, x0, x1, c0, c1;
    client_range(NY, py, rank / px, &y0, &y1);
    client_range(NX, px, rank % px, &x0, &x1);
    client_range(NX, np, rank, &c0, &c1);
    size_t nmine = (size_t)((y1 - y0) * (x1 - x0));
    int *mine = malloc((nmine ? nmine : 1) * sizeof *mine);
    for (long i = y0; i < y1; i++)
        for (long j = x0; j < x1; j++)
            mine[(i - y0) * (x1 - x0) + (j - x0)] = client_value(seed, i, j, NX, rank);
    int *recs = malloc((size_t)NREC * (size_t)(c1 - c0 + 1) * sizeof *recs);
    for (long t = 0; t < NREC; t++)
        for (long j = c0; j < c1; j++)
            recs[t * (c1 - c0) + (j - c0)] = rec_value(seed, np, t, j);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096"); /* weft's minimum */

    /* ---- define and write ---- */
    int ncid, dim_t, dim_y, dim_x, var_temp, var_rec;
    NCCHECK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, info, &ncid));
    NCCHECK(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dim_t));
    NCCHECK(ncmpi_def_dim(ncid, "y", NY, &dim_y));
    NCCHECK(ncmpi_def_dim(ncid, "x", NX, &dim_x));
    int d2[2] = {dim_y, dim_x};
    NCCHECK(ncmpi_def_var(ncid, "temp", NC_INT, 2, d2, &var_temp));
    int dr[2] = {dim_t, dim_x};
    NCCHECK(ncmpi_def_var(ncid, "rec", NC_INT, 2, dr, &var_rec));
    unsigned int useed = seed;
    NCCHECK(ncmpi_put_att_uint(ncid, NC_GLOBAL, "seed", NC_UINT, 1, &useed));
    NCCHECK(ncmpi_put_att_text(ncid, var_temp, "units", 7, "kelvins"));
    NCCHECK(ncmpi_enddef(ncid));

    MPI_Offset start[2] = {y0, x0}, count[2] = {y1 - y0, x1 - x0};
    NCCHECK(ncmpi_put_vara_int_all(ncid, var_temp, start, count, mine));
    int reqs[NREC], sts[NREC];
    for (int t = 0; t < NREC; t++) {
        MPI_Offset rs[2] = {t, c0}, rc[2] = {1, c1 - c0};
        NCCHECK(ncmpi_iput_vara_int(ncid, var_rec, rs, rc, recs + (size_t)t * (c1 - c0), &reqs[t]));
    }
    NCCHECK(ncmpi_wait_all(ncid, NREC, reqs, sts));
    for (int t = 0; t < NREC; t++)
        NCCHECK(sts[t]);
    NCCHECK(ncmpi_close(ncid));

    /* ---- reopen and read back ---- */
    NCCHECK(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, info, &ncid));
    NCCHECK(ncmpi_inq_varid(ncid, "temp", &var_temp));
    NCCHECK(ncmpi_inq_varid(ncid, "rec", &var_rec));
    MPI_Offset nrec_in_file = 0;
    NCCHECK(ncmpi_inq_dimlen(ncid, dim_t, &nrec_in_file));
    long errors = 0;
    if (nrec_in_file != NREC && errors++ < 5)
        fprintf(stderr, "rank %d: %lld records in file, want %d\n", rank, (long long)nrec_in_file,
                NREC);

    int *all = malloc((size_t)NY * NX * sizeof *all);
    MPI_Offset zero[2] = {0, 0}, full[2] = {NY, NX};
    memset(all, 0xff, (size_t)NY * NX * sizeof *all);
    NCCHECK(ncmpi_get_vara_int_all(ncid, var_temp, zero, full, all));
    for (long i = 0; i < NY; i++)
        for (long j = 0; j < NX; j++) {
            int want = client_value(seed, i, j, NX, client_owner(np, NY, NX, i, j));
            if (all[i * NX + j] != want && errors++ < 5)
                fprintf(stderr, "rank %d: temp[%ld][%ld] = %d, want %d\n", rank, i, j,
                        all[i * NX + j], want);
        }
    int *rall = malloc((size_t)NREC * NX * sizeof *rall);
    MPI_Offset rfull[2] = {NREC, NX};
    NCCHECK(ncmpi_get_vara_int_all(ncid, var_rec, zero, rfull, rall));
    for (long t = 0; t < NREC; t++)
        for (long j = 0; j < NX; j++)
            if (rall[t * NX + j] != rec_value(seed, np, t, j) && errors++ < 5)
                fprintf(stderr, "rank %d: rec[%ld][%ld] = %d, want %d\n", rank, t, j,
                        rall[t * NX + j], rec_value(seed, np, t, j));

    NCCHECK(ncmpi_begin_indep_data(ncid));
    int *back = malloc((nmine ? nmine : 1) * sizeof *back);
    memset(back, 0, (nmine ? nmine : 1) * sizeof *back);
    if (nmine)
        NCCHECK(ncmpi_get_vara_int(ncid, var_temp, start, count, back));
    if (nmine && memcmp(back, mine, nmine * sizeof *mine) != 0 && errors++ < 5)
        fprintf(stderr, "rank %d: independent read of own block differs\n", rank);
    NCCHECK(ncmpi_end_indep_data(ncid));
    NCCHECK(ncmpi_close(ncid));
    MPI_Info_free(&info);

    long total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pnetcdf_client: %s (%ld mismatches, seed %u)\n", total ? "FAIL" : "PASS", total,
               seed);
    free(all);
    free(rall);
    free(back);
    free(mine);
    free(recs);
    MPI_Finalize();
    return total ? 1 : 0;
}
