#!/usr/bin/python3
"""Real-client test: h5py's mpio driver, used the way an h5py user would (no weft inside).

  mpirun -n N python3 h5py_client.py DIR SEED

Creates DIR/h5py_client.h5 with driver='mpio': a contiguous int32 dataset /temp (NY x NX) and a
chunked one /chunked, each rank writing its block of a 2-D process grid inside
`with dset.collective:`; a float64 /profile written row-wise; attributes.  Reopens it with the
mpio driver read-only and has every rank check the whole of every dataset; then rank 0 reopens
it serially (default driver, no MPI-IO).  The test also checks it with h5dump (verify_dump.py).
"""
import os
import sys

os.environ.setdefault("H5PY_ALWAYS_USE_MPI", "1")  # Debian: pick the MPI build of h5py
from mpi4py import MPI  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client_common as cc  # noqa: E402

NY, NX = 41, 29
NP_ROWS = 50

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
errors = []


def fail(msg):
    errors.append(msg)
    print(f"h5py_client: rank {rank}: {msg}", flush=True)


def check(name, got, want):
    if got.shape != want.shape:
        fail(f"{name}: shape {got.shape}, want {want.shape}")
        return
    bad = np.argwhere(got != want)
    for idx in bad[:5]:
        fail(f"{name}{list(idx)} = {got[tuple(idx)]}, want {want[tuple(idx)]}")


def profile(seed):
    rows = np.arange(NP_ROWS, dtype=np.float64)
    owners = np.array([cc.part_of(NP_ROWS, size, i) for i in range(NP_ROWS)], dtype=np.float64)
    return (seed % 1000) + rows * 0.25 + owners * 1000.0


def main():
    d, seed = sys.argv[1], int(sys.argv[2])
    path = os.path.join(d, "h5py_client.h5")
    if not h5py.get_config().mpi:
        print("h5py_client: this h5py has no MPI support", flush=True)
        return 77
    if rank == 0:
        print(f"h5py_client: np={size} seed={seed} file={path} h5py {h5py.version.version} "
              f"HDF5 {h5py.version.hdf5_version}", flush=True)
    want = np.array(cc.expected_array(seed, size, NY, NX), dtype=np.int32).reshape(NY, NX)
    y0, y1, x0, x1 = cc.block_of(size, rank, NY, NX)
    r0, r1 = cc.part_range(NP_ROWS, size, rank)

    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        f.attrs["seed"] = seed
        f.attrs["np"] = size
        temp = f.create_dataset("temp", (NY, NX), dtype="<i4")
        chunked = f.create_dataset("chunked", (NY, NX), dtype="<i4", chunks=(8, 8))
        prof = f.create_dataset("profile", (NP_ROWS,), dtype="<f8")
        temp.attrs["units"] = "kelvins"
        for dset in (temp, chunked):
            with dset.collective:
                dset[y0:y1, x0:x1] = want[y0:y1, x0:x1]
        with prof.collective:
            prof[r0:r1] = profile(seed)[r0:r1]

    with h5py.File(path, "r", driver="mpio", comm=comm) as f:
        if f.attrs["seed"] != seed or f.attrs["np"] != size:
            fail(f"attributes: seed={f.attrs['seed']} np={f.attrs['np']}")
        check("temp", f["temp"][...], want)
        check("chunked", f["chunked"][...], want)
        with f["temp"].collective:
            mine = f["temp"][y0:y1, x0:x1]
        check("temp (collective, own block)", mine, want[y0:y1, x0:x1])
        check("profile", f["profile"][...], profile(seed))

    comm.Barrier()
    if rank == 0:
        with h5py.File(path, "r") as f:  # serial: default driver, no MPI-IO
            check("serial temp", f["temp"][...], want)
            check("serial chunked", f["chunked"][...], want)
            check("serial profile", f["profile"][...], profile(seed))
            if f["temp"].attrs["units"] != "kelvins":
                fail("serial: attribute units wrong")

    nerr = comm.allreduce(len(errors))
    if rank == 0:
        print(f"h5py_client: {'FAIL' if nerr else 'PASS'} ({nerr} errors, seed {seed})",
              flush=True)
    return 1 if nerr else 0


if __name__ == "__main__":
    sys.exit(main())
