#!/usr/bin/python3
"""Real-client test: mpi4py's MPI.File, used the way an mpi4py user would (no weft inside).

  mpirun -n N python3 mpi4py_client.py DIR SEED [--host|--weft]

Writes DIR/mpi4py_client.dat in three regions, then checks it serially on rank 0 with plain
open() (no MPI-IO at all):
  A  NB blocks of B ints per rank, dealt round-robin (block k of rank r is block k*N+r):
     Set_view with a resized contiguous filetype, Write_all; Get_position/Get_byte_offset;
     Read_at through the view.
  B  an NY x NX int array split by columns: Set_view with a subarray filetype, Write_at_all.
  C  one HDR-byte text header per rank: byte view, Iwrite_at + Wait.
  D  DN ints per rank: Iwrite_at_all + Wait (nonblocking collective), read back with
     Iread_at_all from the next rank's part.
Also Get_size, Get_info, Get_view, Get_amode, and the error classes of failing calls
(missing file, MODE_EXCL on an existing file, writing a read-only file, bad amode).
--weft (the weft variant) holds the library to DESIGN.md: Get_info must list hints.
"""
import array
import os
import sys

from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client_common as cc  # noqa: E402

NB, B = 5, 7          # region A: blocks per rank, ints per block
NY, NX = 9, 23        # region B
HDR = 40              # region C: bytes per rank
DN = 13               # region D: ints per rank
INT = 4

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
errors = []


def fail(msg):
    errors.append(msg)
    print(f"mpi4py_client: rank {rank}: {msg}", flush=True)


def a_values(seed, r):
    return [cc.value(seed ^ 0xA5A5, k * size + r, i, B, r) for k in range(NB) for i in range(B)]


def b_owner(j):
    return cc.part_of(NX, size, j)


def header(seed, r):
    return f"rank {r} of {size} seed {seed}".ljust(HDR, ".").encode()


def d_values(seed, r):
    return [cc.value(seed ^ 0xD00D, r, k, DN, r) for k in range(DN)]


def expect_error(what, eclass, fn, alternatives=()):
    """fn() must raise MPI.Exception of class eclass (or, on the host, one of alternatives)."""
    try:
        fn()
    except MPI.Exception as e:
        got = e.Get_error_class()
        if got == eclass:
            return
        if got in alternatives and not STRICT:
            print(f"mpi4py_client: {what}: host gives error class {got} "
                  f"({MPI.Get_error_string(got)}), tolerated on the host", flush=True)
            return
        fail(f"{what}: error class {got} ({e.Get_error_string()}), want {eclass}")
        return
    fail(f"{what}: no error raised")


def main():
    d, seed = sys.argv[1], int(sys.argv[2])
    path = os.path.join(d, "mpi4py_client.dat")
    if rank == 0:
        print(f"mpi4py_client: np={size} seed={seed} file={path} mpi4py {MPI.Get_version()} "
              f"{MPI.Get_library_version().strip(chr(0)).splitlines()[0]}", flush=True)
    off_b = NB * size * B * INT
    off_c = off_b + NY * NX * INT
    off_d = off_c + size * HDR
    total = off_d + size * DN * INT

    info = MPI.Info.Create()
    info.Set("cb_buffer_size", "4096")
    info.Set("romio_cb_write", "enable")
    fh = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR, info)
    info.Free()
    if fh.Get_amode() != MPI.MODE_CREATE | MPI.MODE_RDWR:
        fail(f"Get_amode = {fh.Get_amode()}")

    # ---- region A: interleaved blocks, resized contiguous filetype, Write_all ----
    blk = MPI.INT.Create_contiguous(B)
    ftype_a = blk.Create_resized(0, size * B * INT)
    ftype_a.Commit()
    fh.Set_view(rank * B * INT, MPI.INT, ftype_a, "native")
    disp = fh.Get_view()[0]  # (disp, etype, filetype, datarep)
    if disp != rank * B * INT:
        fail(f"Get_view disp = {disp}, want {rank * B * INT}")
    mine_a = array.array("i", a_values(seed, rank))
    fh.Write_all([mine_a, MPI.INT])
    if fh.Get_position() != NB * B:
        fail(f"Get_position after Write_all = {fh.Get_position()}, want {NB * B}")
    want_bo = rank * B * INT + (NB - 1) * size * B * INT + (B - 1) * INT
    if fh.Get_byte_offset(NB * B - 1) != want_bo:
        fail(f"Get_byte_offset({NB * B - 1}) = {fh.Get_byte_offset(NB * B - 1)}, want {want_bo}")

    # ---- region B: column blocks of a 2-D array, subarray filetype, Write_at_all ----
    x0, x1 = cc.part_range(NX, size, rank)
    ftype_b = MPI.INT.Create_subarray([NY, NX], [NY, max(x1 - x0, 0)], [0, x0])
    ftype_b.Commit()
    fh.Set_view(off_b, MPI.INT, ftype_b, "native")
    mine_b = array.array("i", [cc.value(seed, i, j, NX, rank)
                               for i in range(NY) for j in range(x0, x1)])
    fh.Write_at_all(0, [mine_b, MPI.INT])

    # ---- region C: per-rank header, byte view, Iwrite_at + Wait ----
    fh.Set_view(0, MPI.BYTE, MPI.BYTE, "native")
    hdr = bytearray(header(seed, rank))
    req = fh.Iwrite_at(off_c + rank * HDR, [hdr, MPI.BYTE])
    status = MPI.Status()
    req.Wait(status)
    if status.Get_count(MPI.BYTE) != HDR:
        fail(f"Iwrite_at status count = {status.Get_count(MPI.BYTE)}, want {HDR}")

    # ---- region D: nonblocking collective, Iwrite_at_all + Wait ----
    mine_d = array.array("i", d_values(seed, rank))
    req = fh.Iwrite_at_all(off_d + rank * DN * INT, [mine_d, MPI.INT])
    req.Wait(status)
    if status.Get_count(MPI.INT) != DN:
        fail(f"Iwrite_at_all status count = {status.Get_count(MPI.INT)}, want {DN}")

    # ---- read own data back through the views ----
    fh.Sync()
    comm.Barrier()
    fh.Sync()
    fh.Set_view(rank * B * INT, MPI.INT, ftype_a, "native")
    back = array.array("i", [0] * (NB * B))
    fh.Read_at(0, [back, MPI.INT])
    if back != mine_a:
        fail("Read_at of region A through the view differs from what was written")
    fh.Set_view(0, MPI.BYTE, MPI.BYTE, "native")
    right = (rank + 1) % size
    other = bytearray(HDR)
    fh.Read_at(off_c + right * HDR, [other, MPI.BYTE])
    if bytes(other) != header(seed, right):
        fail(f"Read_at of rank {right}'s header: {bytes(other)!r}")
    other_d = array.array("i", [0] * DN)
    fh.Iread_at_all(off_d + right * DN * INT, [other_d, MPI.INT]).Wait()
    if list(other_d) != d_values(seed, right):
        fail(f"Iread_at_all of rank {right}'s region D: {list(other_d)}")

    if fh.Get_size() != total:
        fail(f"Get_size = {fh.Get_size()}, want {total}")
    hints = fh.Get_info()
    keys = [hints.Get_nthkey(k) for k in range(hints.Get_nkeys())]
    if rank == 0:
        print("mpi4py_client: Get_info: " +
              (", ".join(f"{k}={hints.Get(k)}" for k in keys) or "(no hints)"), flush=True)
    if STRICT and not keys:
        fail("Get_info returned no hints (DESIGN.md: every hint in effect, with its value)")
    hints.Free()
    fh.Close()
    ftype_a.Free()
    ftype_b.Free()
    blk.Free()

    # ---- serial check on rank 0: plain POSIX read, no MPI-IO ----
    comm.Barrier()
    if rank == 0:
        with open(path, "rb") as f:
            raw = f.read()
        if len(raw) != total:
            fail(f"file is {len(raw)} bytes, want {total}")
        ints = array.array("i")
        ints.frombytes(raw[:off_c])
        bad = 0
        for r in range(size):
            vals = a_values(seed, r)
            for k in range(NB):
                at = (k * size + r) * B
                if list(ints[at:at + B]) != vals[k * B:(k + 1) * B]:
                    bad += 1
                    if bad <= 3:
                        fail(f"region A: block {k} of rank {r} wrong: {list(ints[at:at + B])}")
        for i in range(NY):
            for j in range(NX):
                got = ints[off_b // INT + i * NX + j]
                want = cc.value(seed, i, j, NX, b_owner(j))
                if got != want:
                    bad += 1
                    if bad <= 6:
                        fail(f"region B: [{i}][{j}] = {got}, want {want}")
        for r in range(size):
            got = raw[off_c + r * HDR: off_c + (r + 1) * HDR]
            if got != header(seed, r):
                fail(f"region C: header of rank {r} = {got!r}")
        ints_d = array.array("i")
        ints_d.frombytes(raw[off_d:total])
        for r in range(size):
            if list(ints_d[r * DN:(r + 1) * DN]) != d_values(seed, r):
                bad += 1
                fail(f"region D: rank {r}'s ints = {list(ints_d[r * DN:(r + 1) * DN])}")
        if not bad:
            print(f"mpi4py_client: serial read of {total} bytes matches", flush=True)
    comm.Barrier()

    # ---- error classes ----
    missing = os.path.join(d, "no-such-dir", "missing.dat")
    expect_error("Open of a missing file", MPI.ERR_NO_SUCH_FILE,
                 lambda: MPI.File.Open(comm, missing, MPI.MODE_RDONLY).Close(),
                 alternatives=(MPI.ERR_FILE, MPI.ERR_IO))
    expect_error("Open MODE_EXCL of an existing file", MPI.ERR_FILE_EXISTS,
                 lambda: MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_EXCL |
                                       MPI.MODE_WRONLY).Close(),
                 alternatives=(MPI.ERR_FILE, MPI.ERR_IO, MPI.ERR_ACCESS))
    expect_error("Open with MODE_RDONLY|MODE_RDWR", MPI.ERR_AMODE,
                 lambda: MPI.File.Open(comm, path, MPI.MODE_RDONLY | MPI.MODE_RDWR).Close(),
                 alternatives=(MPI.ERR_FILE, MPI.ERR_ARG))
    fh = MPI.File.Open(comm, path, MPI.MODE_RDONLY)
    expect_error("Write_at on a read-only file", MPI.ERR_READ_ONLY,
                 lambda: fh.Write_at(0, [bytearray(4), MPI.BYTE]),
                 alternatives=(MPI.ERR_ACCESS, MPI.ERR_FILE, MPI.ERR_IO, MPI.ERR_AMODE))
    fh.Close()
    comm.Barrier()
    if rank == 0:
        MPI.File.Delete(path)
        if os.path.exists(path):
            fail("file still exists after MPI.File.Delete")

    nerr = comm.allreduce(len(errors))
    if rank == 0:
        print(f"mpi4py_client: {'FAIL' if nerr else 'PASS'} ({nerr} errors, seed {seed})",
              flush=True)
    return 1 if nerr else 0


STRICT = "--weft" in sys.argv
if __name__ == "__main__":
    sys.exit(main())
