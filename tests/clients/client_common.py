"""Shared by weft's real-client tests: the data layout and expected values.

Mirrors client_common.h (keep the two in step).  A global NY x NX int32 array is split over a
py x px process grid (rank = ry*px + rx) with uneven blocks; every value depends on the seed,
the global index and the owning rank, so misplaced data is caught.
"""

MASK32 = 0xFFFFFFFF


def grid(np_):
    """(py, px): px the largest divisor of np_ not above sqrt(np_)."""
    best = 1
    d = 1
    while d * d <= np_:
        if np_ % d == 0:
            best = d
        d += 1
    return np_ // best, best


def part_range(n, parts, idx):
    return n * idx // parts, n * (idx + 1) // parts


def part_of(n, parts, k):
    for p in range(parts):
        lo, hi = part_range(n, parts, p)
        if lo <= k < hi:
            return p
    raise ValueError("index out of range")


def block_of(np_, rank, ny, nx):
    """(y0, y1, x0, x1) of rank's block."""
    py, px = grid(np_)
    ry, rx = divmod(rank, px)
    y0, y1 = part_range(ny, py, ry)
    x0, x1 = part_range(nx, px, rx)
    return y0, y1, x0, x1


def owner(np_, ny, nx, i, j):
    py, px = grid(np_)
    return part_of(ny, py, i) * px + part_of(nx, px, j)


def value(seed, i, j, nx, own):
    h = (seed * 2654435761) & MASK32
    h ^= ((i * nx + j) * 40503) & MASK32
    h ^= ((own + 1) * 0x01000193) & MASK32
    h ^= h >> 13
    return h & 0x7FFFFFFF


def expected_array(seed, np_, ny, nx):
    """Row-major list of the whole array's expected values."""
    py, px = grid(np_)
    rows = [part_of(ny, py, i) for i in range(ny)]
    cols = [part_of(nx, px, j) for j in range(nx)]
    return [value(seed, i, j, nx, rows[i] * px + cols[j]) for i in range(ny) for j in range(nx)]
