/* Real-client test: a parallel HDF5 program (unmodified; it knows nothing of weft).
 *
 *   hdf5_client <dir> [seed]
 *
 * Creates <dir>/hdf5_client.h5 through the MPI-IO file driver (H5Pset_fapl_mpio), with two 2-D
 * int32 datasets, /contig (contiguous layout) and /chunked (16x16 chunks), each rank writing its
 * block of a 2-D process grid collectively (H5FD_MPIO_COLLECTIVE).  It then reopens the file and
 * has every rank read the whole of both datasets independently and its own block collectively,
 * checking every value.  The test also checks the file serially with h5dump (verify_dump.py). */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_common.h"

#define NY 67
#define NX 45

static int rank;

#define H5OK(call)                                                                          \
    do {                                                                                       \
        if ((call) < 0) {                                                                      \
            fprintf(stderr, "rank %d: %s:%d: %s failed\n", rank, __FILE__, __LINE__, #call);   \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                      \
        }                                                                                      \
    } while (0)

static const char *const dsets[] = {"/contig", "/chunked"};

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
    snprintf(path, sizeof path, "%s/hdf5_client.h5", argv[1]);
    if (rank == 0)
        printf("hdf5_client: np=%d seed=%u file=%s dims=%dx%d\n", np, seed, path, NY, NX);

    int py, px;
    client_grid(np, &py, &px);
    long y0, y1, x0, x1;
    client_range(NY, py, rank / px, &y0, &y1);
    client_range(NX, px, rank % px, &x0, &x1);
    hsize_t start[2] = {(hsize_t)y0, (hsize_t)x0};
    hsize_t count[2] = {(hsize_t)(y1 - y0), (hsize_t)(x1 - x0)};
    size_t nmine = count[0] * count[1];
    int32_t *mine = malloc((nmine ? nmine : 1) * sizeof *mine);
    for (long i = y0; i < y1; i++)
        for (long j = x0; j < x1; j++)
            mine[(i - y0) * (x1 - x0) + (j - x0)] = client_value(seed, i, j, NX, rank);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "cb_buffer_size", "4096"); /* several cycles even for this small file */

    /* ---- collective write ---- */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5OK(fapl);
    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info));
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5OK(file);
    hsize_t dims[2] = {NY, NX};
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5OK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
    for (int d = 0; d < 2; d++) {
        hid_t fspace = H5Screate_simple(2, dims, NULL);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (d == 1) {
            hsize_t chunk[2] = {16, 16};
            H5OK(H5Pset_chunk(dcpl, 2, chunk));
        }
        hid_t dset = H5Dcreate2(file, dsets[d], H5T_STD_I32LE, fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5OK(dset);
        hid_t mspace = H5Screate_simple(2, count, NULL);
        H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
        if (nmine == 0) {
            H5OK(H5Sselect_none(fspace));
            H5OK(H5Sselect_none(mspace));
        }
        H5OK(H5Dwrite(dset, H5T_NATIVE_INT32, mspace, fspace, dxpl, mine));
        H5D_mpio_actual_io_mode_t mode;
        H5OK(H5Pget_mpio_actual_io_mode(dxpl, &mode));
        if (rank == 0)
            printf("hdf5_client: %s written, actual io mode %d\n", dsets[d], (int)mode);
        H5Sclose(mspace);
        H5Sclose(fspace);
        H5Pclose(dcpl);
        H5Dclose(dset);
    }
    hid_t aspace = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(file, "seed", H5T_STD_U32LE, aspace, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(attr);
    H5OK(H5Awrite(attr, H5T_NATIVE_UINT32, &seed));
    H5Aclose(attr);
    H5Sclose(aspace);
    H5OK(H5Fclose(file));

    /* ---- reopen, read back ---- */
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5OK(file);
    int32_t *all = malloc((size_t)NY * NX * sizeof *all);
    int32_t *back = malloc((nmine ? nmine : 1) * sizeof *back);
    hid_t dxpl_ind = H5Pcreate(H5P_DATASET_XFER);
    H5OK(H5Pset_dxpl_mpio(dxpl_ind, H5FD_MPIO_INDEPENDENT));
    long errors = 0;
    for (int d = 0; d < 2; d++) {
        hid_t dset = H5Dopen2(file, dsets[d], H5P_DEFAULT);
        H5OK(dset);
        memset(all, 0xff, (size_t)NY * NX * sizeof *all);
        H5OK(H5Dread(dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, dxpl_ind, all));
        for (long i = 0; i < NY; i++)
            for (long j = 0; j < NX; j++) {
                int32_t want = client_value(seed, i, j, NX, client_owner(np, NY, NX, i, j));
                if (all[i * NX + j] != want && errors++ < 5)
                    fprintf(stderr, "rank %d: %s[%ld][%ld] = %d, want %d\n", rank, dsets[d], i, j,
                            (int)all[i * NX + j], (int)want);
            }
        hid_t fspace = H5Dget_space(dset);
        hid_t mspace = H5Screate_simple(2, count, NULL);
        H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
        if (nmine == 0) {
            H5OK(H5Sselect_none(fspace));
            H5OK(H5Sselect_none(mspace));
        }
        memset(back, 0, (nmine ? nmine : 1) * sizeof *back);
        H5OK(H5Dread(dset, H5T_NATIVE_INT32, mspace, fspace, dxpl, back));
        if (nmine && memcmp(back, mine, nmine * sizeof *mine) != 0 && errors++ < 5)
            fprintf(stderr, "rank %d: %s: collective read of own block differs\n", rank, dsets[d]);
        H5Sclose(mspace);
        H5Sclose(fspace);
        H5Dclose(dset);
    }
    H5OK(H5Fclose(file));
    H5Pclose(dxpl);
    H5Pclose(dxpl_ind);
    H5Pclose(fapl);
    MPI_Info_free(&info);

    long total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hdf5_client: %s (%ld mismatches, seed %u)\n", total ? "FAIL" : "PASS", total, seed);
    free(all);
    free(back);
    free(mine);
    MPI_Finalize();
    return total ? 1 : 0;
}
