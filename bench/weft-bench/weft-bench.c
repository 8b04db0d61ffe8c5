/*
 * weft-bench: one MPI program, the access patterns the field uses, every run verified.
 *
 * It is linked with the host MPI only.  Run it as it is to measure the host's MPI-IO (ROMIO,
 * OMPIO, selected with the MPI's own options), or with LD_PRELOAD=libweft.so to measure weft.
 * `--api posix` replaces MPI-IO by pwrite/pread of the same bytes (a raw baseline).
 *
 * Every byte written is a function of its file offset and a per-run seed (and so of the rank
 * that owns the offset).  Verification is twofold: every rank reads its data back through
 * MPI-IO into a poisoned buffer and checks the data and that memory gaps were left untouched;
 * then every rank checks a 1/P share of the whole file with plain pread (right size, right
 * bytes, holes zero), so an MPI-IO that writes to the wrong place and reads back from the same
 * wrong place is caught too.
 *
 * Output: one JSON object per measurement, one line each, on stdout (and appended to --json).
 */
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POISON 0xA5

/* ------------------------------------------------------------------------------------------ */
/* options */

typedef struct {
    const char *pattern, *dir, *file, *api, *label, *hints, *json_path, *mode;
    const char *nb_call;     /* --nonblocking: iwrite_all | iwrite_at_all (NULL: blocking only) */
    int reps, corrupt, keep, nosync, posix_check, nohole;
    long long block, xfer, elem, count, msg;
    int segments, tile_nx, tile_ny, n3, nvars, nxb, guard, nblocks, gap;
    int grid[3], ngrid;      /* --grid: process grid constraints (0 = MPI_Dims_create's choice) */
    int ck_n, ck_iters, ck_every, iters;
    unsigned long long seed;
} opts_t;

static opts_t O;
static int rank, nprocs;
static char mpi_version[256];
static int n_unexpected; /* runs whose verification result is not the expected one */

static void usage(FILE *f)
{
    fprintf(f,
"usage: weft-bench --pattern P [options]\n"
"patterns:\n"
"  ior        IOR-style 1-D: each rank a contiguous block per segment, segments interleaved\n"
"             --block-size B (1M) --segments S (4) --transfer-size T (=B) --mode indep|coll\n"
"  tile       mpi-tile-io 2-D tiles via subarray views, collective\n"
"             --elem-size E (8) --tile NX NY (64 64) --grid TY TX (tiles per column, row;\n"
"             0 = MPI_Dims_create's choice; --grid 1 0 puts all tiles in one row)\n"
"  block3d    coll_perf 3-D block distribution (darray), collective\n"
"             --n N (global edge, 64) --elem-size E (4) --grid PZ PY PX (as tile's;\n"
"             --grid 1 1 0 splits x only: every rank's rows are N/P elements)\n"
"  flash      FLASH-IO checkpoint: variables written one by one, guard cells stripped by a\n"
"             memory subarray, collective  --nvars V (24) --nxb X (8) --guard G (4) --blocks B (8)\n"
"  strided    independent, --mode memtype (E-byte elements with --gap-byte gaps in memory,\n"
"             Build-IO) or fileview (file view with --gap-byte holes, data sieving)\n"
"             --elem-size E (8) --count N (65536) --gap G (4)\n"
"  checkpoint Jacobi solver writing its matrix every K iterations, then restart and compare\n"
"             --n N (512) --iters I (40) --every K (10)\n"
"  pingpong   MPI ping-pong bandwidth between ranks 0 and 1  --msg B (4M) --iters I (20)\n"
"nonblocking collective writes (ior --mode coll, tile, block3d, flash):\n"
"  --nonblocking CALL     CALL = iwrite_all | iwrite_at_all.  Every repetition writes a new\n"
"                         file twice, each write read back and verified: first with the\n"
"                         blocking call (T_io: its write phase), then with CALL while every\n"
"                         rank runs a calibrated compute loop of T_io's length (T_comp, timed\n"
"                         alone in between), with MPI_Test on the request after every\n"
"                         millisecond of it, then MPI_Wait (T_total: from CALL to Wait's\n"
"                         return; n calls alternate call, 1/n of the loop, wait).  The record\n"
"                         adds t_io, t_comp, t_total, tests_called and\n"
"                         hidden = (T_io + T_comp - T_total) / T_io clamped to [0,1]; the\n"
"                         bandwidths are the blocking write's, --corrupt-for-test hits the\n"
"                         nonblocking write's file, --keep keeps that file.  One unreported\n"
"                         round (verified all the same) comes before the first repetition\n"
"common:\n"
"  --dir D | --file F     where the file goes (default /tmp)\n"
"  --api mpiio|posix      I/O interface (posix: pwrite/pread, not for checkpoint)\n"
"  --impl-label NAME      implementation name recorded in the output\n"
"  --hints 'k=v;k=v'      MPI_Info hints for open\n"
"  --reps N               repetitions in this process (1)\n"
"  --json FILE            also append the JSON lines to FILE\n"
"  --no-sync              skip MPI_File_sync / fsync after writing\n"
"  --no-posix-check       skip the pread check of the whole file\n"
"  --no-hole-check        do not require never-written holes to read as zero\n"
"  --keep                 keep the file\n"
"  --seed N               data seed (default: from the clock)\n"
"  --corrupt-for-test     flip one byte of the file between write and read-back\n"
"                         (the run must then report verified=false)\n"
"exit status: 0 when every run verified (with --corrupt-for-test: when every run\n"
"caught the corruption), 1 otherwise, 2 on bad usage, 3 on an MPI-IO error\n");
}

static long long parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    long long m = 1;
    switch (*end) {
    case 'k': case 'K': m = 1LL << 10; end++; break;
    case 'm': case 'M': m = 1LL << 20; end++; break;
    case 'g': case 'G': m = 1LL << 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B') end++;
    if (*end == 'B') end++;
    if (end == s || *end || v < 0) {
        if (rank == 0) fprintf(stderr, "weft-bench: bad size '%s'\n", s);
        MPI_Finalize();
        exit(2);
    }
    return (long long)(v * (double)m);
}

static void bad_usage(const char *fmt, ...)
{
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "weft-bench: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    memset(&O, 0, sizeof O);
    O.dir = "/tmp"; O.api = "mpiio"; O.label = NULL; O.reps = 1; O.posix_check = 1;
    O.block = 1 << 20; O.segments = 4; O.elem = -1; O.tile_nx = 64; O.tile_ny = 64;
    O.n3 = -1; O.nvars = 24; O.nxb = 8; O.guard = 4; O.nblocks = 8; O.count = 65536;
    O.gap = 4; O.ck_n = -1; O.ck_iters = -1; O.ck_every = 10; O.msg = 4 << 20; O.iters = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (bad_usage("%s needs a value", a), ""))
        if (!strcmp(a, "--pattern")) O.pattern = NEXT();
        else if (!strcmp(a, "--dir")) O.dir = NEXT();
        else if (!strcmp(a, "--file")) O.file = NEXT();
        else if (!strcmp(a, "--api")) O.api = NEXT();
        else if (!strcmp(a, "--impl-label")) O.label = NEXT();
        else if (!strcmp(a, "--hints")) O.hints = NEXT();
        else if (!strcmp(a, "--json")) O.json_path = NEXT();
        else if (!strcmp(a, "--mode")) O.mode = NEXT();
        else if (!strcmp(a, "--nonblocking")) O.nb_call = NEXT();
        else if (!strcmp(a, "--reps")) O.reps = atoi(NEXT());
        else if (!strcmp(a, "--block-size")) O.block = parse_size(NEXT());
        else if (!strcmp(a, "--transfer-size")) O.xfer = parse_size(NEXT());
        else if (!strcmp(a, "--segments")) O.segments = atoi(NEXT());
        else if (!strcmp(a, "--elem-size")) O.elem = parse_size(NEXT());
        else if (!strcmp(a, "--tile")) { O.tile_nx = atoi(NEXT()); O.tile_ny = atoi(NEXT()); }
        else if (!strcmp(a, "--grid")) {
            O.ngrid = 0;
            while (O.ngrid < 3 && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                O.grid[O.ngrid++] = atoi(argv[++i]);
        }
        else if (!strcmp(a, "--n")) O.n3 = O.ck_n = atoi(NEXT());
        else if (!strcmp(a, "--nvars")) O.nvars = atoi(NEXT());
        else if (!strcmp(a, "--nxb")) O.nxb = atoi(NEXT());
        else if (!strcmp(a, "--guard")) O.guard = atoi(NEXT());
        else if (!strcmp(a, "--blocks")) O.nblocks = atoi(NEXT());
        else if (!strcmp(a, "--count")) O.count = parse_size(NEXT());
        else if (!strcmp(a, "--gap")) O.gap = atoi(NEXT());
        else if (!strcmp(a, "--iters")) O.iters = O.ck_iters = atoi(NEXT());
        else if (!strcmp(a, "--every")) O.ck_every = atoi(NEXT());
        else if (!strcmp(a, "--msg")) O.msg = parse_size(NEXT());
        else if (!strcmp(a, "--seed")) O.seed = strtoull(NEXT(), NULL, 0);
        else if (!strcmp(a, "--no-sync")) O.nosync = 1;
        else if (!strcmp(a, "--no-posix-check")) O.posix_check = 0;
        else if (!strcmp(a, "--no-hole-check")) O.nohole = 1;
        else if (!strcmp(a, "--keep")) O.keep = 1;
        else if (!strcmp(a, "--corrupt-for-test")) O.corrupt = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (rank == 0) usage(stdout);
            MPI_Finalize();
            exit(0);
        } else bad_usage("unknown option '%s' (see --help)", a);
#undef NEXT
    }
    if (!O.pattern) bad_usage("--pattern is required (see --help)");
    if (strcmp(O.api, "mpiio") && strcmp(O.api, "posix")) bad_usage("unknown --api '%s'", O.api);
    if (!O.label) O.label = O.api;
    if (O.json_path && rank == 0) {
        FILE *f = fopen(O.json_path, "a");
        if (!f) bad_usage("cannot append to --json %s: %s", O.json_path, strerror(errno));
        fclose(f);
    }
    if (O.reps < 1) bad_usage("--reps must be >= 1");
    if (O.nb_call) {
        if (strcmp(O.nb_call, "iwrite_all") && strcmp(O.nb_call, "iwrite_at_all"))
            bad_usage("--nonblocking: iwrite_all or iwrite_at_all, not '%s'", O.nb_call);
        if (strcmp(O.api, "mpiio")) bad_usage("--nonblocking needs --api mpiio");
        if (!strcmp(O.pattern, "checkpoint") || !strcmp(O.pattern, "pingpong") || !strcmp(O.pattern, "strided"))
            bad_usage("--nonblocking: pattern %s has no collective write (ior --mode coll, tile, block3d, flash)", O.pattern);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* data: byte at file offset o is byte (o % 8) of mix(o / 8 ^ seed) */

static inline uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void gen_fill(uint8_t *d, uint64_t off, size_t len, uint64_t seed)
{
    while (len) {
        uint64_t w = mix((off >> 3) ^ seed);
        unsigned b = off & 7;
        if (b == 0 && len >= 8) {
            for (int k = 0; k < 8; k++) d[k] = (uint8_t)(w >> (8 * k));
            d += 8; off += 8; len -= 8;
        } else {
            *d++ = (uint8_t)(w >> (8 * b));
            off++; len--;
        }
    }
}

/* Returns the number of wrong bytes; *first gets the offset of the first (if any). */
static long long gen_check(const uint8_t *d, uint64_t off, size_t len, uint64_t seed, long long *first)
{
    long long bad = 0;
    while (len) {
        uint64_t w = mix((off >> 3) ^ seed);
        unsigned b = off & 7;
        for (; b < 8 && len; b++, d++, off++, len--)
            if (*d != (uint8_t)(w >> (8 * b))) {
                if (!bad && first) *first = (long long)off;
                bad++;
            }
    }
    return bad;
}

/* ------------------------------------------------------------------------------------------ */
/* patterns */

typedef struct {
    MPI_Offset off;
    size_t memoff;
    int count;
    MPI_Datatype mtype;
} call_t;

typedef void (*visit_fn)(void *ctx, size_t memoff, long long fileoff, size_t len);

typedef struct pat {
    const char *name;
    size_t bufsize;
    MPI_Offset disp;
    MPI_Datatype etype, ftype;
    int collective, ncalls;
    call_t *calls;
    long long bytes_local, file_bytes;
    long long period, datalen; /* file layout with holes: data [0,datalen) of every period */
    void (*visit)(struct pat *, visit_fn, void *);
    /* derived geometry */
    long long a[16];
    char params[512];
} pat_t;

static MPI_Datatype bytes_type(long long e)
{
    MPI_Datatype t;
    MPI_Type_contiguous((int)e, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* ior: a[0]=B a[1]=S */
static void ior_visit(pat_t *p, visit_fn f, void *c)
{
    long long B = p->a[0], S = p->a[1];
    for (long long s = 0; s < S; s++)
        f(c, (size_t)(s * B), (s * nprocs + rank) * B, (size_t)B);
}

static void setup_ior(pat_t *p)
{
    long long B = O.block, S = O.segments, T = O.xfer > 0 ? O.xfer : B;
    const char *mode = O.mode ? O.mode : "coll";
    if (B <= 0 || S <= 0 || B % T) bad_usage("ior: block size must be a multiple of transfer size");
    if (T > (1LL << 30)) bad_usage("ior: transfer size above 1 GiB");
    if (strcmp(mode, "coll") && strcmp(mode, "indep")) bad_usage("ior: --mode coll|indep");
    p->collective = !strcmp(mode, "coll");
    p->a[0] = B; p->a[1] = S;
    p->bufsize = (size_t)(B * S);
    p->bytes_local = B * S;
    p->file_bytes = B * S * nprocs;
    long long per = B / T;
    p->ncalls = (int)(S * per);
    p->calls = calloc((size_t)p->ncalls, sizeof(call_t));
    for (long long s = 0, k = 0; s < S; s++)
        for (long long t = 0; t < per; t++, k++) {
            p->calls[k].off = (s * nprocs + rank) * B + t * T;
            p->calls[k].memoff = (size_t)(s * B + t * T);
            p->calls[k].count = (int)T;
            p->calls[k].mtype = MPI_BYTE;
        }
    p->visit = ior_visit;
    snprintf(p->params, sizeof p->params,
             "{\"block_size\":%lld,\"segments\":%lld,\"transfer_size\":%lld,\"mode\":\"%s\"}", B, S, T, mode);
}

/* The process grid of tile (2-D) and block3d (3-D): --grid's entries where given and not 0,
 * MPI_Dims_create for the rest (the product must divide the rank count). */
static void process_grid(int ndims, int *dims)
{
    long long fixed = 1;
    for (int d = 0; d < ndims; d++) {
        dims[d] = d < O.ngrid && O.grid[d] > 0 ? O.grid[d] : 0;
        if (dims[d] < 0) bad_usage("--grid: negative entry");
        fixed *= dims[d] > 0 ? dims[d] : 1;
    }
    if (O.ngrid > ndims) bad_usage("--grid: %d entries for a %d-D pattern", O.ngrid, ndims);
    if (nprocs % fixed != 0) bad_usage("--grid: %lld processes do not divide %d", fixed, nprocs);
    MPI_Dims_create(nprocs, ndims, dims);
}

/* tile: a[0]=E a[1]=nx a[2]=ny a[3]=dx a[4]=dy a[5]=cx a[6]=cy */
static void tile_visit(pat_t *p, visit_fn f, void *c)
{
    long long E = p->a[0], nx = p->a[1], ny = p->a[2], dx = p->a[3], cx = p->a[5], cy = p->a[6];
    for (long long y = 0; y < ny; y++)
        f(c, (size_t)(y * nx * E), ((cy * ny + y) * (dx * nx) + cx * nx) * E, (size_t)(nx * E));
}

static void setup_tile(pat_t *p)
{
    long long E = O.elem > 0 ? O.elem : 8, nx = O.tile_nx, ny = O.tile_ny;
    if (nx <= 0 || ny <= 0 || E > (1 << 30)) bad_usage("tile: bad --tile or --elem-size");
    int dims[2] = {0, 0};
    process_grid(2, dims); /* dims[0] = rows of tiles (y), dims[1] = columns (x) */
    long long dy = dims[0], dx = dims[1], cy = rank / dx, cx = rank % dx;
    p->a[0] = E; p->a[1] = nx; p->a[2] = ny; p->a[3] = dx; p->a[4] = dy; p->a[5] = cx; p->a[6] = cy;
    MPI_Datatype el = bytes_type(E);
    int sizes[2] = {(int)(dy * ny), (int)(dx * nx)}, sub[2] = {(int)ny, (int)nx},
        st[2] = {(int)(cy * ny), (int)(cx * nx)};
    MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, el, &p->ftype);
    MPI_Type_commit(&p->ftype);
    p->etype = el;
    p->collective = 1;
    p->bufsize = (size_t)(nx * ny * E);
    p->bytes_local = nx * ny * E;
    p->file_bytes = p->bytes_local * nprocs;
    p->ncalls = 1;
    p->calls = calloc(1, sizeof(call_t));
    p->calls[0].count = (int)(nx * ny);
    p->calls[0].mtype = el;
    p->visit = tile_visit;
    snprintf(p->params, sizeof p->params,
             "{\"elem_size\":%lld,\"tile_nx\":%lld,\"tile_ny\":%lld,\"tiles_x\":%lld,\"tiles_y\":%lld}",
             E, nx, ny, dx, dy);
}

/* block3d: a[0]=E a[1]=N a[2..4]=local size z,y,x a[5..7]=global start z,y,x */
static void block3d_visit(pat_t *p, visit_fn f, void *c)
{
    long long E = p->a[0], N = p->a[1], lz = p->a[2], ly = p->a[3], lx = p->a[4];
    long long gz = p->a[5], gy = p->a[6], gx = p->a[7];
    for (long long z = 0; z < lz; z++)
        for (long long y = 0; y < ly; y++)
            f(c, (size_t)(((z * ly + y) * lx) * E), (((gz + z) * N + (gy + y)) * N + gx) * E,
              (size_t)(lx * E));
}

static void setup_block3d(pat_t *p)
{
    long long E = O.elem > 0 ? O.elem : 4, N = O.n3 > 0 ? O.n3 : 64;
    int dims[3] = {0, 0, 0};
    process_grid(3, dims);
    int c[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
    long long lo[3], ls[3];
    for (int d = 0; d < 3; d++) {
        long long b = (N + dims[d] - 1) / dims[d];
        lo[d] = c[d] * b;
        long long hi = lo[d] + b < N ? lo[d] + b : N;
        ls[d] = hi > lo[d] ? hi - lo[d] : 0;
        if (lo[d] > N) lo[d] = N;
    }
    p->a[0] = E; p->a[1] = N;
    for (int d = 0; d < 3; d++) { p->a[2 + d] = ls[d]; p->a[5 + d] = lo[d]; }
    MPI_Datatype el = bytes_type(E);
    int gs[3] = {(int)N, (int)N, (int)N}, distr[3], dargs[3];
    for (int d = 0; d < 3; d++) { distr[d] = MPI_DISTRIBUTE_BLOCK; dargs[d] = MPI_DISTRIBUTE_DFLT_DARG; }
    MPI_Type_create_darray(nprocs, rank, 3, gs, distr, dargs, dims, MPI_ORDER_C, el, &p->ftype);
    MPI_Type_commit(&p->ftype);
    p->etype = el;
    p->collective = 1;
    long long n = ls[0] * ls[1] * ls[2];
    p->bufsize = (size_t)(n * E) + 1;
    p->bytes_local = n * E;
    p->file_bytes = N * N * N * E;
    p->ncalls = 1;
    p->calls = calloc(1, sizeof(call_t));
    p->calls[0].count = (int)n;
    p->calls[0].mtype = el;
    p->visit = block3d_visit;
    snprintf(p->params, sizeof p->params,
             "{\"n\":%lld,\"elem_size\":%lld,\"procs\":[%d,%d,%d]}", N, E, dims[0], dims[1], dims[2]);
}

/* flash: a[0]=V a[1]=nxb a[2]=g a[3]=nb */
static void flash_visit(pat_t *p, visit_fn f, void *c)
{
    long long V = p->a[0], X = p->a[1], g = p->a[2], nb = p->a[3], XG = X + 2 * g;
    long long per = nb * X * X * X * 8;
    for (long long v = 0; v < V; v++)
        for (long long b = 0; b < nb; b++)
            for (long long z = 0; z < X; z++)
                for (long long y = 0; y < X; y++)
                    for (long long x = 0; x < X; x++)
                        f(c, (size_t)(((((b * XG + z + g) * XG + y + g) * XG + x + g) * V + v) * 8),
                          v * nprocs * per + rank * per + (((b * X + z) * X + y) * X + x) * 8, 8);
}

static void setup_flash(pat_t *p)
{
    long long V = O.nvars, X = O.nxb, g = O.guard, nb = O.nblocks, XG = X + 2 * g;
    if (V <= 0 || X <= 0 || g < 0 || nb <= 0) bad_usage("flash: bad --nvars/--nxb/--guard/--blocks");
    p->a[0] = V; p->a[1] = X; p->a[2] = g; p->a[3] = nb;
    long long per = nb * X * X * X * 8;
    p->collective = 1;
    p->bufsize = (size_t)(nb * XG * XG * XG * V * 8);
    p->bytes_local = per * V;
    p->file_bytes = per * V * nprocs;
    p->ncalls = (int)V;
    p->calls = calloc((size_t)V, sizeof(call_t));
    for (long long v = 0; v < V; v++) {
        int sizes[5] = {(int)nb, (int)XG, (int)XG, (int)XG, (int)V};
        int sub[5] = {(int)nb, (int)X, (int)X, (int)X, 1};
        int st[5] = {0, (int)g, (int)g, (int)g, (int)v};
        MPI_Type_create_subarray(5, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &p->calls[v].mtype);
        MPI_Type_commit(&p->calls[v].mtype);
        p->calls[v].count = 1;
        p->calls[v].off = v * nprocs * per + rank * per;
    }
    p->visit = flash_visit;
    snprintf(p->params, sizeof p->params,
             "{\"nvars\":%lld,\"nxb\":%lld,\"guard\":%lld,\"blocks\":%lld}", V, X, g, nb);
}

/* strided: a[0]=E a[1]=count a[2]=gap a[3]=fileview? */
static void strided_visit(pat_t *p, visit_fn f, void *c)
{
    long long E = p->a[0], n = p->a[1], H = p->a[2];
    if (p->a[3]) {
        for (long long i = 0; i < n; i++)
            f(c, (size_t)(i * E), (i * nprocs + rank) * (E + H), (size_t)E);
    } else {
        for (long long i = 0; i < n; i++)
            f(c, (size_t)(i * (E + H)), (rank * n + i) * E, (size_t)E);
    }
}

static void setup_strided(pat_t *p)
{
    long long E = O.elem > 0 ? O.elem : 8, n = O.count, H = O.gap;
    const char *mode = O.mode ? O.mode : "memtype";
    int fv;
    if (!strcmp(mode, "memtype")) fv = 0;
    else if (!strcmp(mode, "fileview")) fv = 1;
    else { bad_usage("strided: --mode memtype|fileview"); return; }
    if (E <= 0 || n <= 0 || H < 0 || n > (1LL << 30)) bad_usage("strided: bad --elem-size/--count/--gap");
    p->a[0] = E; p->a[1] = n; p->a[2] = H; p->a[3] = fv;
    p->collective = 0;
    p->bytes_local = n * E;
    p->ncalls = 1;
    p->calls = calloc(1, sizeof(call_t));
    if (!fv) {
        MPI_Datatype v;
        MPI_Type_vector((int)n, (int)E, (int)(E + H), MPI_BYTE, &v);
        MPI_Type_commit(&v);
        p->calls[0].mtype = v;
        p->calls[0].count = 1;
        p->calls[0].off = rank * n * E;
        p->bufsize = (size_t)(n * (E + H));
        p->file_bytes = n * E * nprocs;
    } else {
        MPI_Datatype h;
        int bl = (int)E;
        MPI_Aint d = (MPI_Aint)(rank * (E + H));
        MPI_Type_create_hindexed(1, &bl, &d, MPI_BYTE, &h);
        MPI_Type_create_resized(h, 0, (MPI_Aint)(nprocs * (E + H)), &p->ftype);
        MPI_Type_commit(&p->ftype);
        MPI_Type_free(&h);
        p->etype = MPI_BYTE;
        p->calls[0].mtype = MPI_BYTE;
        p->calls[0].count = (int)(n * E);
        p->bufsize = (size_t)(n * E);
        p->file_bytes = n * nprocs * (E + H) - H;
        p->period = E + H;
        p->datalen = E;
    }
    p->visit = strided_visit;
    snprintf(p->params, sizeof p->params,
             "{\"elem_size\":%lld,\"count\":%lld,\"gap\":%lld,\"mode\":\"%s\"}", E, n, H, mode);
}

/* ------------------------------------------------------------------------------------------ */
/* helpers */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch == '\n') fputs("\\n", f);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static MPI_Info make_info(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (!O.hints) return info;
    char *s = strdup(O.hints), *save = NULL;
    for (char *kv = strtok_r(s, ";,", &save); kv; kv = strtok_r(NULL, ";,", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) bad_usage("bad hint '%s' (want key=value)", kv);
        *eq = 0;
        MPI_Info_set(info, kv, eq + 1);
    }
    free(s);
    return info;
}

static void hints_json(FILE *f)
{
    fputc('{', f);
    if (O.hints) {
        char *s = strdup(O.hints), *save = NULL;
        int first = 1;
        for (char *kv = strtok_r(s, ";,", &save); kv; kv = strtok_r(NULL, ";,", &save)) {
            char *eq = strchr(kv, '=');
            if (!eq) continue;
            *eq = 0;
            if (!first) fputc(',', f);
            first = 0;
            json_str(f, kv); fputc(':', f); json_str(f, eq + 1);
        }
        free(s);
    }
    fputc('}', f);
}

static char info_buf[4096];

static void capture_info(MPI_File fh)
{
    MPI_Info info;
    int n = 0;
    info_buf[0] = 0;
    if (MPI_File_get_info(fh, &info) != MPI_SUCCESS) return;
    MPI_Info_get_nkeys(info, &n);
    FILE *f = fmemopen(info_buf, sizeof info_buf - 1, "w");
    if (!f) { MPI_Info_free(&info); return; }
    fputc('{', f);
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[256];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, sizeof val - 1, val, &flag);
        if (i) fputc(',', f);
        json_str(f, key); fputc(':', f); json_str(f, flag ? val : "");
    }
    fputc('}', f);
    fclose(f);
    info_buf[sizeof info_buf - 1] = 0;
    if (info_buf[strlen(info_buf) - 1] != '}') strcpy(info_buf, "{}"); /* truncated */
    MPI_Info_free(&info);
}

static void emit(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    if (O.json_path) {
        FILE *f = fopen(O.json_path, "a");
        if (f) {
            va_start(ap, fmt);
            vfprintf(f, fmt, ap);
            va_end(ap);
            fclose(f);
        }
    }
}

/* A failure: one JSON line from the failing rank, then abort (the others may be inside a
 * collective that will never complete). */
static void fail(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING + 64] = "";
    int len = 0;
    if (err != MPI_SUCCESS) MPI_Error_string(err, msg, &len);
    else snprintf(msg, sizeof msg, "%s", strerror(errno));
    char line[2048];
    FILE *f = fmemopen(line, sizeof line - 1, "w");
    fprintf(f, "{\"pattern\":\"%s\",\"impl\":", O.pattern);
    json_str(f, O.label);
    fprintf(f, ",\"ranks\":%d,\"rank\":%d,\"verified\":false,\"error\":", nprocs, rank);
    char full[1600];
    snprintf(full, sizeof full, "%s: %s", what, msg);
    json_str(f, full);
    fprintf(f, "}\n");
    fclose(f);
    line[sizeof line - 1] = 0;
    emit("%s", line);
    fflush(stdout);
    fprintf(stderr, "weft-bench: rank %d: %s\n", rank, full);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

#define CHK(what, call) do { int e_ = (call); if (e_ != MPI_SUCCESS) fail(what, e_); } while (0)

static void file_path(char *out, size_t n, int rep)
{
    if (O.file) { snprintf(out, n, "%s", O.file); return; }
    long id = 0;
    if (rank == 0) id = (long)getpid();
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(out, n, "%s/weft-bench.%s.%ld.%d.dat", O.dir, O.pattern, id, rep);
}

static uint64_t make_seed(int rep)
{
    uint64_t s = O.seed;
    if (!s) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = mix((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid());
    }
    s = mix(s + (uint64_t)rep);
    MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return s;
}

static void posix_flip(const char *path, long long off)
{
    int fd = open(path, O_RDWR);
    uint8_t b = 0;
    if (fd < 0 || pread(fd, &b, 1, off) != 1) { fail("corrupt-for-test: open/pread", MPI_SUCCESS); }
    b ^= 0x5a;
    if (pwrite(fd, &b, 1, off) != 1) fail("corrupt-for-test: pwrite", MPI_SUCCESS);
    close(fd);
}

/* ------------------------------------------------------------------------------------------ */
/* visitors: fill, verify, posix */

typedef struct {
    uint8_t *buf;
    uint64_t seed;
    long long bad, first_bad, first_file;
} vctx_t;

static void v_fill(void *c, size_t m, long long o, size_t len)
{
    vctx_t *v = c;
    if (v->first_file < 0) v->first_file = o;
    gen_fill(v->buf + m, (uint64_t)o, len, v->seed);
}

static void v_check(void *c, size_t m, long long o, size_t len)
{
    vctx_t *v = c;
    long long first = -1;
    long long b = gen_check(v->buf + m, (uint64_t)o, len, v->seed, &first);
    if (b && v->bad == 0) v->first_bad = first;
    v->bad += b;
    memset(v->buf + m, POISON, len); /* so that the gap check below sees only gaps */
}

/* posix transfer: pieces are gathered into runs contiguous in the file (packed through a
 * staging buffer when memory is not contiguous). */
typedef struct {
    int fd, writing;
    uint8_t *buf, *stage;
    size_t cap, used;
    long long start; /* file offset of the run */
    size_t *pm, *pl;
    size_t np, npcap;
    int err;
} pctx_t;

static void pflush(pctx_t *p)
{
    if (!p->used) return;
    size_t done = 0;
    if (p->writing) {
        while (done < p->used) {
            ssize_t r = pwrite(p->fd, p->stage + done, p->used - done, p->start + (off_t)done);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) { p->err = errno ? errno : EIO; break; }
            done += (size_t)r;
        }
    } else {
        while (done < p->used) {
            ssize_t r = pread(p->fd, p->stage + done, p->used - done, p->start + (off_t)done);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) { p->err = r == 0 ? EIO : errno; break; }
            done += (size_t)r;
        }
        size_t s = 0;
        for (size_t i = 0; i < p->np; i++) {
            memcpy(p->buf + p->pm[i], p->stage + s, p->pl[i]);
            s += p->pl[i];
        }
    }
    p->used = 0;
    p->np = 0;
}

static void v_posix(void *c, size_t m, long long o, size_t len)
{
    pctx_t *p = c;
    while (len) {
        if (p->used && (o != p->start + (long long)p->used || p->used == p->cap)) pflush(p);
        if (!p->used) p->start = o;
        size_t n = len < p->cap - p->used ? len : p->cap - p->used;
        if (p->writing) memcpy(p->stage + p->used, p->buf + m, n);
        else {
            if (p->np == p->npcap) {
                p->npcap = p->npcap ? 2 * p->npcap : 1024;
                p->pm = realloc(p->pm, p->npcap * sizeof(size_t));
                p->pl = realloc(p->pl, p->npcap * sizeof(size_t));
            }
            p->pm[p->np] = m;
            p->pl[p->np++] = n;
        }
        p->used += n;
        m += n; o += (long long)n; len -= n;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* whole-file check with pread: every rank checks 1/P of the file */

static long long posix_file_check(const char *path, pat_t *p, uint64_t seed, long long *first, char *why, size_t whyn)
{
    struct stat st;
    long long bad = 0, databad = 0, holebad = 0, firsthole = -1;
    if (stat(path, &st) != 0) { snprintf(why, whyn, "stat: %s", strerror(errno)); return 1; }
    if ((long long)st.st_size != p->file_bytes) {
        snprintf(why, whyn, "file size %lld, expected %lld", (long long)st.st_size, p->file_bytes);
        return 1;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) { snprintf(why, whyn, "open: %s", strerror(errno)); return 1; }
    long long F = p->file_bytes, lo = F * rank / nprocs, hi = F * (rank + 1) / nprocs;
    size_t cap = 4 << 20;
    uint8_t *b = malloc(cap);
    for (long long o = lo; o < hi;) {
        size_t n = (size_t)(hi - o < (long long)cap ? hi - o : (long long)cap);
        ssize_t r = pread(fd, b, n, o);
        if (r <= 0) { snprintf(why, whyn, "pread: %s", r ? strerror(errno) : "short file"); bad++; break; }
        if (!p->period) {
            long long f1 = -1, k = gen_check(b, (uint64_t)o, (size_t)r, seed, &f1);
            if (k && !bad) *first = f1;
            bad += k;
            databad += k;
        } else {
            for (long long i = 0; i < r; i++) {
                long long x = o + i, ph = x % p->period;
                if (ph < p->datalen) {
                    long long run = p->datalen - ph;
                    if (run > r - i) run = r - i;
                    long long f1 = -1, k = gen_check(b + i, (uint64_t)x, (size_t)run, seed, &f1);
                    if (k && !bad) *first = f1;
                    bad += k;
                    databad += k;
                    i += run - 1;
                } else if (b[i] != 0 && !O.nohole) {
                    if (!bad) *first = x;
                    if (!holebad) firsthole = x;
                    bad++;
                    holebad++;
                }
            }
        }
        o += r;
    }
    if (bad && !why[0]) {
        if (databad)
            snprintf(why, whyn, "%lld wrong data byte(s) in the file (first at offset %lld)", databad, *first);
        else
            snprintf(why, whyn, "%lld byte(s) in never-written holes are not zero (first at offset %lld): "
                     "stale buffer contents written into the holes", holebad, firsthole);
    }
    free(b);
    close(fd);
    return bad;
}

/* ------------------------------------------------------------------------------------------ */
/* nonblocking collective writes: a calibrated compute loop */

typedef struct {
    const char *call;        /* "iwrite_all" | "iwrite_at_all" */
    long long work, chunk;   /* compute() iterations: for the whole write, per millisecond */
    double t_post, t_wait;   /* this rank: time inside the calls, inside MPI_Wait */
    long long tests;         /* this rank: MPI_Test calls */
} nb_t;

static volatile double compute_sink;
static double compute_rate; /* compute() iterations per second on this rank, once per run */

/* Deterministic work: n iterations of four independent multiply-add chains on doubles (no
 * memory traffic, no sleeping, nothing the compiler can fold away). */
static void compute(long long n)
{
    double a = compute_sink + 1.0, b = 2.0, c = 3.0, d = 4.0;
    for (long long i = 0; i < n; i++) {
        a = a * 0.9999999 + 1e-7;
        b = b * 0.9999998 + 2e-7;
        c = c * 0.9999997 + 3e-7;
        d = d * 0.9999996 + 4e-7;
    }
    compute_sink = a + b + c + d;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The loop's rate: the median of 5 timed runs of >= 2 ms, every rank at once (as they compute
 * during the measurement). */
static void calibrate_compute(void)
{
    long long n = 1 << 12;
    MPI_Barrier(MPI_COMM_WORLD);
    for (;;) {
        double t0 = MPI_Wtime();
        compute(n);
        if (MPI_Wtime() - t0 >= 0.002 || n >= (1LL << 40)) break;
        n *= 2;
    }
    double r[5];
    for (int i = 0; i < 5; i++) {
        double t0 = MPI_Wtime();
        compute(n);
        double dt = MPI_Wtime() - t0;
        r[i] = n / (dt > 1e-9 ? dt : 1e-9);
    }
    qsort(r, 5, sizeof r[0], cmp_double);
    compute_rate = r[2];
}

/* n iterations in chunks of a millisecond; after each chunk MPI_Test on *req until it
 * completes (req NULL: no test, the compute-alone measurement). */
static void compute_testing(nb_t *nb, long long n, MPI_Request *req, MPI_Status *st, int *done)
{
    while (n > 0) {
        long long k = n < nb->chunk ? n : nb->chunk;
        compute(k);
        n -= k;
        if (req && !*done) {
            CHK("MPI_Test", MPI_Test(req, done, st));
            nb->tests++;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* one measurement of a file pattern */

enum { T_OPEN_W, T_WRITE, T_SYNC, T_CLOSE_W, T_OPEN_R, T_READ, T_CLOSE_R, T_NPH };
static const char *phase_names[T_NPH] = {"open_w", "write", "sync", "close_w", "open_r", "read", "close_r"};

static void check_count(MPI_Status *st, call_t *c, int writing)
{
    int cnt = -1;
    MPI_Get_count(st, c->mtype, &cnt);
    if (cnt != c->count) {
        char w[128];
        snprintf(w, sizeof w, "%s moved %d of %d items (status)", writing ? "write" : "read", cnt, c->count);
        errno = EIO;
        fail(w, MPI_SUCCESS);
    }
}

/* Nonblocking writes: call k is posted, 1/ncalls of the work is computed with MPI_Test every
 * millisecond, then MPI_Wait; the next call is posted after that. */
static void do_nb_write(MPI_File fh, pat_t *p, uint8_t *buf, nb_t *nb)
{
    for (int k = 0; k < p->ncalls; k++) {
        call_t *c = &p->calls[k];
        long long w = nb->work * (k + 1) / p->ncalls - nb->work * k / p->ncalls;
        MPI_Request rq = MPI_REQUEST_NULL;
        MPI_Status st, wst;
        int done = 0, e;
        double a = MPI_Wtime();
        if (!strcmp(nb->call, "iwrite_at_all")) {
            e = MPI_File_iwrite_at_all(fh, c->off, buf + c->memoff, c->count, c->mtype, &rq);
        } else {
            e = MPI_File_seek(fh, c->off, MPI_SEEK_SET);
            if (e == MPI_SUCCESS) e = MPI_File_iwrite_all(fh, buf + c->memoff, c->count, c->mtype, &rq);
        }
        if (e != MPI_SUCCESS) fail(nb->call, e);
        double b = MPI_Wtime();
        compute_testing(nb, w, &rq, &st, &done);
        double d = MPI_Wtime();
        /* on a request MPI_Test completed this is MPI_REQUEST_NULL: returns at once */
        CHK("MPI_Wait", MPI_Wait(&rq, done ? &wst : &st));
        double f = MPI_Wtime();
        nb->t_post += b - a;
        nb->t_wait += f - d;
        check_count(&st, c, 1);
    }
}

static void do_access(MPI_File fh, pat_t *p, uint8_t *buf, int writing, nb_t *nb)
{
    if (writing && nb) {
        do_nb_write(fh, p, buf, nb);
        return;
    }
    for (int k = 0; k < p->ncalls; k++) {
        call_t *c = &p->calls[k];
        MPI_Status st;
        int e;
        if (writing)
            e = p->collective ? MPI_File_write_at_all(fh, c->off, buf + c->memoff, c->count, c->mtype, &st)
                              : MPI_File_write_at(fh, c->off, buf + c->memoff, c->count, c->mtype, &st);
        else
            e = p->collective ? MPI_File_read_at_all(fh, c->off, buf + c->memoff, c->count, c->mtype, &st)
                              : MPI_File_read_at(fh, c->off, buf + c->memoff, c->count, c->mtype, &st);
        if (e != MPI_SUCCESS) fail(writing ? "write" : "read", e);
        check_count(&st, c, writing);
    }
}

typedef struct {
    double tm[T_NPH + 2];  /* phases, write_s, read_s: max over ranks (on every rank) */
    long long tot[3];      /* wrong bytes read back, bytes in memory gaps, file errors (summed) */
    long long bytes;       /* data bytes, all ranks */
    char err[768];         /* on rank 0: the first failing rank's explanation, or "" */
} meas_t;

/* Writes the pattern into a new file at path (nonblocking when nb is not NULL), reads it back,
 * verifies it; every rank gets the times and counts. */
static void measure_file(pat_t *p, const char *path, uint64_t seed, int corrupt, nb_t *nb, meas_t *m)
{
    int posix = !strcmp(O.api, "posix");
    double t[T_NPH] = {0}, tl[T_NPH + 2];
    uint8_t *buf = malloc(p->bufsize ? p->bufsize : 1);
    if (!buf) { errno = ENOMEM; fail("malloc", MPI_SUCCESS); }
    memset(buf, POISON, p->bufsize);
    vctx_t v = {buf, seed, 0, -1, -1};
    p->visit(p, v_fill, &v);
    long long corrupt_off = v.first_file; /* a byte rank 0 wrote */

    if (rank == 0) {
        if (posix) unlink(path);
        else MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    info_buf[0] = 0;

    /* ---- write ---- */
    if (posix) {
        pctx_t pc = {-1, 1, buf, malloc(8 << 20), 8 << 20, 0, 0, NULL, NULL, 0, 0, 0};
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        pc.fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (pc.fd < 0) fail("open", MPI_SUCCESS);
        double t1 = MPI_Wtime();
        p->visit(p, v_posix, &pc);
        pflush(&pc);
        if (pc.err) { errno = pc.err; fail("pwrite", MPI_SUCCESS); }
        double t2 = MPI_Wtime();
        if (!O.nosync && fsync(pc.fd) != 0) fail("fsync", MPI_SUCCESS);
        double t3 = MPI_Wtime();
        close(pc.fd);
        double t4 = MPI_Wtime();
        t[T_OPEN_W] = t1 - t0; t[T_WRITE] = t2 - t1; t[T_SYNC] = t3 - t2; t[T_CLOSE_W] = t4 - t3;
        free(pc.stage);
        strcpy(info_buf, "{}");
    } else {
        MPI_File fh;
        MPI_Info info = make_info();
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        CHK("MPI_File_open(write)", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
        if (p->ftype != MPI_DATATYPE_NULL)
            CHK("MPI_File_set_view", MPI_File_set_view(fh, p->disp, p->etype, p->ftype, "native", info));
        double t1 = MPI_Wtime();
        /* --nonblocking: the blocking and the nonblocking write both start together */
        if (O.nb_call) { MPI_Barrier(MPI_COMM_WORLD); t1 = MPI_Wtime(); }
        do_access(fh, p, buf, 1, nb);
        double t2 = MPI_Wtime();
        if (!O.nosync) CHK("MPI_File_sync", MPI_File_sync(fh));
        double t3 = MPI_Wtime();
        capture_info(fh);
        double t3b = MPI_Wtime();
        CHK("MPI_File_close(write)", MPI_File_close(&fh));
        double t4 = MPI_Wtime();
        t[T_OPEN_W] = t1 - t0; t[T_WRITE] = t2 - t1; t[T_SYNC] = t3 - t2; t[T_CLOSE_W] = t4 - t3b;
        MPI_Info_free(&info);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (corrupt && rank == 0) posix_flip(path, corrupt_off);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- read back ---- */
    memset(buf, POISON, p->bufsize);
    if (posix) {
        pctx_t pc = {-1, 0, buf, malloc(8 << 20), 8 << 20, 0, 0, NULL, NULL, 0, 0, 0};
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        pc.fd = open(path, O_RDONLY);
        if (pc.fd < 0) fail("open(read)", MPI_SUCCESS);
        double t1 = MPI_Wtime();
        p->visit(p, v_posix, &pc);
        pflush(&pc);
        if (pc.err) { errno = pc.err; fail("pread", MPI_SUCCESS); }
        double t2 = MPI_Wtime();
        close(pc.fd);
        double t3 = MPI_Wtime();
        t[T_OPEN_R] = t1 - t0; t[T_READ] = t2 - t1; t[T_CLOSE_R] = t3 - t2;
        free(pc.stage); free(pc.pm); free(pc.pl);
    } else {
        MPI_File fh;
        MPI_Info info = make_info();
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        CHK("MPI_File_open(read)", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
        if (p->ftype != MPI_DATATYPE_NULL)
            CHK("MPI_File_set_view(read)", MPI_File_set_view(fh, p->disp, p->etype, p->ftype, "native", info));
        double t1 = MPI_Wtime();
        do_access(fh, p, buf, 0, NULL);
        double t2 = MPI_Wtime();
        CHK("MPI_File_close(read)", MPI_File_close(&fh));
        double t3 = MPI_Wtime();
        t[T_OPEN_R] = t1 - t0; t[T_READ] = t2 - t1; t[T_CLOSE_R] = t3 - t2;
        MPI_Info_free(&info);
    }

    /* ---- verify ---- */
    v.bad = 0; v.first_bad = -1;
    p->visit(p, v_check, &v);
    long long gapbad = 0;
    for (size_t i = 0; i < p->bufsize; i++) gapbad += buf[i] != POISON;
    char why[512] = "";
    long long fbad = 0, ffirst = -1;
    if (O.posix_check) fbad = posix_file_check(path, p, seed, &ffirst, why, sizeof why);
    long long loc[3] = {v.bad, gapbad, fbad};
    MPI_Allreduce(loc, m->tot, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* the first failing rank's explanation reaches rank 0 */
    int src = (v.bad || gapbad || fbad) ? rank : nprocs, who;
    MPI_Allreduce(&src, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    m->err[0] = 0;
    if (who < nprocs) {
        if (rank == who) {
            if (v.bad) snprintf(m->err, sizeof m->err, "rank %d: %lld wrong byte(s) read back (first at file offset %lld)", rank, v.bad, v.first_bad);
            else if (gapbad) snprintf(m->err, sizeof m->err, "rank %d: read wrote %lld byte(s) into memory gaps", rank, gapbad);
            else snprintf(m->err, sizeof m->err, "rank %d: pread check: %s", rank, why);
        }
        if (who != 0) {
            if (rank == who) MPI_Send(m->err, sizeof m->err, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
            if (rank == 0) MPI_Recv(m->err, sizeof m->err, MPI_CHAR, who, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }

    for (int i = 0; i < T_NPH; i++) tl[i] = t[i];
    tl[T_NPH] = t[T_OPEN_W] + t[T_WRITE] + t[T_SYNC] + t[T_CLOSE_W];
    tl[T_NPH + 1] = t[T_OPEN_R] + t[T_READ] + t[T_CLOSE_R];
    MPI_Allreduce(tl, m->tm, T_NPH + 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&p->bytes_local, &m->bytes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    free(buf);
}

/* What --nonblocking adds to the record (max over ranks, tests too). */
typedef struct {
    meas_t m;              /* the nonblocking write's file */
    uint64_t seed;
    double t_io, t_comp, t_total, t_post, t_wait, hidden_raw, hidden;
    long long tests, work;
} nbres_t;

static void emit_file_record(pat_t *p, const char *path, uint64_t seed, int rep, meas_t *m, nbres_t *x)
{
    long long tot[3];
    for (int i = 0; i < 3; i++) tot[i] = m->tot[i] + (x ? x->m.tot[i] : 0);
    long long bad = tot[0] || tot[1] || tot[2];
    /* with --nonblocking the corruption goes into the nonblocking write's file only */
    if (x ? (m->tot[0] || m->tot[1] || m->tot[2]) || ((x->m.tot[0] || x->m.tot[1] || x->m.tot[2]) != (O.corrupt != 0))
          : (bad != (O.corrupt != 0)))
        n_unexpected++;
    if (rank != 0) return;
    double *tm = m->tm;
    char line[16384];
    FILE *f = fmemopen(line, sizeof line - 1, "w");
    fprintf(f, "{\"pattern\":\"%s\",\"params\":%s,\"impl\":", p->name, p->params);
    json_str(f, O.label);
    fprintf(f, ",\"api\":\"%s\",\"hints\":", O.api);
    hints_json(f);
    fprintf(f, ",\"info\":%s,\"ranks\":%d,\"rep\":%d,\"path\":", info_buf[0] ? info_buf : "{}", nprocs, rep);
    json_str(f, path);
    fprintf(f, ",\"bytes\":%lld,\"file_bytes\":%lld,\"seed\":%llu,\"seconds\":{", m->bytes, p->file_bytes,
            (unsigned long long)seed);
    for (int i = 0; i < T_NPH; i++) fprintf(f, "%s\"%s\":%.6f", i ? "," : "", phase_names[i], tm[i]);
    fprintf(f, "},\"write_s\":%.6f,\"read_s\":%.6f", tm[T_NPH], tm[T_NPH + 1]);
    fprintf(f, ",\"write_MiBs\":%.3f,\"read_MiBs\":%.3f", m->bytes / 1048576.0 / (tm[T_NPH] > 0 ? tm[T_NPH] : 1e-9),
            m->bytes / 1048576.0 / (tm[T_NPH + 1] > 0 ? tm[T_NPH + 1] : 1e-9));
    if (x) {
        fprintf(f, ",\"nonblocking\":\"%s\",\"t_io\":%.9f,\"t_comp\":%.9f,\"t_total\":%.9f,\"hidden\":%.4f,"
                   "\"hidden_raw\":%.4f,\"tests_called\":%lld,\"t_post\":%.9f,\"t_wait\":%.9f,"
                   "\"compute_rate\":%.0f,\"compute_work\":%lld,\"nb_seed\":%llu,\"nb_seconds\":{",
                O.nb_call, x->t_io, x->t_comp, x->t_total, x->hidden, x->hidden_raw, x->tests, x->t_post,
                x->t_wait, compute_rate, x->work, (unsigned long long)x->seed);
        for (int i = 0; i < T_NPH; i++) fprintf(f, "%s\"%s\":%.6f", i ? "," : "", phase_names[i], x->m.tm[i]);
        fprintf(f, "},\"nb_verified\":%s", (x->m.tot[0] || x->m.tot[1] || x->m.tot[2]) ? "false" : "true");
    }
    fprintf(f, ",\"sync\":%s,\"corrupted_for_test\":%s,\"verified\":%s,\"wrong_bytes\":%lld,\"gap_bytes\":%lld,\"file_errors\":%lld,\"error\":",
            O.nosync ? "false" : "true", O.corrupt ? "true" : "false", bad ? "false" : "true", tot[0], tot[1], tot[2]);
    char err[900] = "";
    if (m->err[0]) snprintf(err, sizeof err, "%s%s", x ? "blocking write: " : "", m->err);
    else if (x && x->m.err[0]) snprintf(err, sizeof err, "%s: %s", O.nb_call, x->m.err);
    if (err[0]) json_str(f, err); else fputs("null", f);
    fputs(",\"mpi\":", f);
    json_str(f, mpi_version);
    fputs("}\n", f);
    fclose(f);
    line[sizeof line - 1] = 0;
    emit("%s", line);
    fflush(stdout);
}

/* One round of --nonblocking: the blocking write (T_io) into a new file, the compute loop
 * alone (T_comp), the nonblocking write with the loop (T_total) into a new file again (the same
 * path: measure_file deletes the blocking write's file first). */
static void nb_round(pat_t *p, const char *path, uint64_t seed, int corrupt, meas_t *m, nbres_t *x)
{
    measure_file(p, path, seed, 0, NULL, m);
    memset(x, 0, sizeof *x);
    x->t_io = m->tm[T_WRITE];
    nb_t nb = {O.nb_call, llround(compute_rate * x->t_io), llround(compute_rate * 1e-3), 0, 0, 0};
    if (nb.chunk < 1) nb.chunk = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    compute_testing(&nb, nb.work, NULL, NULL, NULL);
    double tc = MPI_Wtime() - t0;
    MPI_Allreduce(&tc, &x->t_comp, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    x->seed = mix(seed ^ 0x6e6f6e626c6f636bULL);
    measure_file(p, path, x->seed, corrupt, &nb, &x->m);
    x->t_total = x->m.tm[T_WRITE];
    double lt[2] = {nb.t_post, nb.t_wait}, mt[2];
    MPI_Allreduce(lt, mt, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&nb.tests, &x->tests, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    x->t_post = mt[0];
    x->t_wait = mt[1];
    x->work = nb.work;
    x->hidden_raw = x->t_io > 0 ? (x->t_io + x->t_comp - x->t_total) / x->t_io : 0;
    x->hidden = x->hidden_raw < 0 ? 0 : x->hidden_raw > 1 ? 1 : x->hidden_raw;
}

static int meas_bad(const meas_t *m) { return m->tot[0] || m->tot[1] || m->tot[2]; }

static void run_file_pattern(pat_t *p, int rep)
{
    static int warmed_up;
    char path[4096];
    file_path(path, sizeof path, rep);
    uint64_t seed = make_seed(rep);
    meas_t m;
    if (!O.nb_call) {
        measure_file(p, path, seed, O.corrupt, NULL, &m);
        emit_file_record(p, path, seed, rep, &m, NULL);
    } else {
        /* Before the first round, one unreported round: the first collective write of a
         * process pays for connections, pools and buffers set up on first use, and that
         * write is always the blocking one.  It is verified all the same. */
        meas_t wm;
        nbres_t wx, x;
        const meas_t *wbad = NULL;
        if (!warmed_up) {
            warmed_up = 1;
            nb_round(p, path, mix(seed ^ 0x7761726d7570ULL), 0, &wm, &wx);
            wbad = meas_bad(&wm) ? &wm : meas_bad(&wx.m) ? &wx.m : NULL;
        }
        nb_round(p, path, seed, O.corrupt, &m, &x);
        if (wbad && !meas_bad(&m)) {
            memcpy(m.tot, wbad->tot, sizeof m.tot);
            snprintf(m.err, sizeof m.err, "warm-up round: %.700s", wbad->err);
        }
        emit_file_record(p, path, seed, rep, &m, &x);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!O.keep && rank == 0) unlink(path);
}

/* ------------------------------------------------------------------------------------------ */
/* checkpoint: Jacobi heat equation, row-block distributed N x N doubles */

#define CK_HDR 64

typedef struct {
    int N, r0, rows; /* global rows [r0, r0+rows) */
    double *u, *w;   /* (rows+2) x N with halo rows */
} jac_t;

static void jac_init(jac_t *j, int N)
{
    j->N = N;
    int base = N / nprocs, extra = N % nprocs;
    j->rows = base + (rank < extra);
    j->r0 = rank * base + (rank < extra ? rank : extra);
    size_t n = (size_t)(j->rows + 2) * (size_t)N;
    j->u = calloc(n, sizeof(double));
    j->w = calloc(n, sizeof(double));
    for (int i = 0; i < j->rows; i++) {
        int gi = j->r0 + i;
        for (int c = 0; c < N; c++) {
            double val = 0;
            if (gi == 0) val = 1.0;                                  /* hot top edge */
            else if (c == 0) val = sin(M_PI * gi / (double)(N - 1)); /* warm left edge */
            j->u[(size_t)(i + 1) * N + c] = j->w[(size_t)(i + 1) * N + c] = val;
        }
    }
}

static void jac_step(jac_t *j)
{
    int N = j->N, up = rank - 1, dn = rank + 1;
    if (up < 0 || j->rows == 0) up = MPI_PROC_NULL;
    if (dn >= nprocs) dn = MPI_PROC_NULL;
    /* skip empty ranks in the chain is not needed as long as N >= nprocs */
    MPI_Sendrecv(j->u + N, N, MPI_DOUBLE, up, 1, j->u + (size_t)(j->rows + 1) * N, N, MPI_DOUBLE, dn, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(j->u + (size_t)j->rows * N, N, MPI_DOUBLE, dn, 2, j->u, N, MPI_DOUBLE, up, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 1; i <= j->rows; i++) {
        int gi = j->r0 + i - 1;
        if (gi == 0 || gi == N - 1) continue;
        double *o = j->w + (size_t)i * N, *a = j->u + (size_t)(i - 1) * N, *b = j->u + (size_t)i * N,
               *c = j->u + (size_t)(i + 1) * N;
        for (int x = 1; x < N - 1; x++) o[x] = 0.25 * (a[x] + c[x] + b[x - 1] + b[x + 1]);
    }
    double *t = j->u; j->u = j->w; j->w = t;
}

static void run_checkpoint(int rep)
{
    if (!strcmp(O.api, "posix")) bad_usage("checkpoint: --api posix is not supported");
    int N = O.ck_n > 0 ? O.ck_n : 512, I = O.ck_iters > 0 ? O.ck_iters : 40, K = O.ck_every;
    if (N < nprocs || N < 3 || K <= 0 || K > I) bad_usage("checkpoint: need --n >= ranks, 0 < --every <= --iters");
    char path[4096];
    file_path(path, sizeof path, rep);
    uint64_t seed = make_seed(rep);
    (void)seed;
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    jac_t j;
    jac_init(&j, N);
    MPI_Info info = make_info();
    MPI_File fh;
    double t[T_NPH] = {0}, ck_max = 0, ck_sum = 0;
    int nck = 0, last_ck = 0;
    MPI_Offset mybytes = (MPI_Offset)j.rows * N * 8, myoff = CK_HDR + (MPI_Offset)j.r0 * N * 8;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHK("MPI_File_open(write)", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    t[T_OPEN_W] = MPI_Wtime() - t0;
    for (int it = 1; it <= I; it++) {
        jac_step(&j);
        if (it % K == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            double a = MPI_Wtime();
            MPI_Status st;
            CHK("write_at_all", MPI_File_write_at_all(fh, myoff, j.u + N, (int)(mybytes / 8), MPI_DOUBLE, &st));
            if (rank == 0) {
                long long hdr[8] = {0x77656674636b7074LL, it, N, 0, 0, 0, 0, 0};
                CHK("write_at(header)", MPI_File_write_at(fh, 0, hdr, 8, MPI_LONG_LONG, &st));
            }
            double b = MPI_Wtime();
            if (!O.nosync) CHK("MPI_File_sync", MPI_File_sync(fh));
            double c = MPI_Wtime();
            double d[2] = {b - a, c - b}, dm[2];
            MPI_Allreduce(d, dm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t[T_WRITE] += dm[0]; t[T_SYNC] += dm[1];
            ck_sum += dm[0] + dm[1];
            if (dm[0] + dm[1] > ck_max) ck_max = dm[0] + dm[1];
            nck++;
            last_ck = it;
        }
    }
    capture_info(fh);
    t0 = MPI_Wtime();
    CHK("MPI_File_close(write)", MPI_File_close(&fh));
    t[T_CLOSE_W] = MPI_Wtime() - t0;
    /* the uninterrupted result */
    double *final = malloc((size_t)mybytes + 8);
    memcpy(final, j.u + N, (size_t)mybytes);
    MPI_Barrier(MPI_COMM_WORLD);
    if (O.corrupt && rank == 0) posix_flip(path, CK_HDR + ((long long)(N / 2) * N + N / 2) * 8 + 3);
    MPI_Barrier(MPI_COMM_WORLD);

    /* restart from the file */
    memset(j.u, 0, (size_t)(j.rows + 2) * N * 8);
    memset(j.w, 0, (size_t)(j.rows + 2) * N * 8);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHK("MPI_File_open(read)", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    double t1 = MPI_Wtime();
    long long hdr[8];
    MPI_Status st;
    CHK("read_at(header)", MPI_File_read_at(fh, 0, hdr, 8, MPI_LONG_LONG, &st));
    CHK("read_at_all", MPI_File_read_at_all(fh, myoff, j.u + N, (int)(mybytes / 8), MPI_DOUBLE, &st));
    double t2 = MPI_Wtime();
    CHK("MPI_File_close(read)", MPI_File_close(&fh));
    double t3 = MPI_Wtime();
    t[T_OPEN_R] = t1 - t0; t[T_READ] = t2 - t1; t[T_CLOSE_R] = t3 - t2;
    memcpy(j.w + N, j.u + N, (size_t)mybytes); /* boundary values live in both arrays */
    char err[512] = "";
    long long bad = 0;
    if (hdr[0] != 0x77656674636b7074LL || hdr[1] != last_ck || hdr[2] != N) {
        bad = 1;
        snprintf(err, sizeof err, "rank %d: checkpoint header wrong (iteration %lld, expected %d)", rank, hdr[1], last_ck);
    } else {
        for (int it = last_ck + 1; it <= I; it++) jac_step(&j);
        for (size_t k = 0; k < (size_t)mybytes / 8; k++)
            if (memcmp(&final[k], &j.u[N + k], 8)) bad++;
        if (bad) snprintf(err, sizeof err, "rank %d: restart from iteration %d differs from the uninterrupted run in %lld value(s)", rank, last_ck, bad);
    }
    long long tot = 0;
    MPI_Allreduce(&bad, &tot, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int src = bad ? rank : nprocs, who;
    MPI_Allreduce(&src, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (who < nprocs && who != 0) {
        if (rank == who) MPI_Send(err, sizeof err, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(err, sizeof err, MPI_CHAR, who, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double tm[T_NPH];
    MPI_Reduce(t, tm, T_NPH, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        long long ckbytes = (long long)N * N * 8, bytes = ckbytes * nck;
        double ws = tm[T_OPEN_W] + tm[T_WRITE] + tm[T_SYNC] + tm[T_CLOSE_W];
        double rs = tm[T_OPEN_R] + tm[T_READ] + tm[T_CLOSE_R];
        char line[16384];
        FILE *f = fmemopen(line, sizeof line - 1, "w");
        fprintf(f, "{\"pattern\":\"checkpoint\",\"params\":{\"n\":%d,\"iters\":%d,\"every\":%d},\"impl\":", N, I, K);
        json_str(f, O.label);
        fprintf(f, ",\"api\":\"mpiio\",\"hints\":");
        hints_json(f);
        fprintf(f, ",\"info\":%s,\"ranks\":%d,\"rep\":%d,\"path\":", info_buf[0] ? info_buf : "{}", nprocs, rep);
        json_str(f, path);
        fprintf(f, ",\"bytes\":%lld,\"read_bytes\":%lld,\"file_bytes\":%lld,\"checkpoints\":%d,\"ckpt_s_mean\":%.6f,\"ckpt_s_max\":%.6f,\"seconds\":{",
                bytes, ckbytes, ckbytes + CK_HDR, nck, ck_sum / nck, ck_max);
        for (int i = 0; i < T_NPH; i++) fprintf(f, "%s\"%s\":%.6f", i ? "," : "", phase_names[i], tm[i]);
        fprintf(f, "},\"write_s\":%.6f,\"read_s\":%.6f,\"write_MiBs\":%.3f,\"read_MiBs\":%.3f", ws, rs,
                bytes / 1048576.0 / (ws > 0 ? ws : 1e-9), ckbytes / 1048576.0 / (rs > 0 ? rs : 1e-9));
        fprintf(f, ",\"sync\":%s,\"corrupted_for_test\":%s,\"verified\":%s,\"wrong_bytes\":%lld,\"error\":",
                O.nosync ? "false" : "true", O.corrupt ? "true" : "false", tot ? "false" : "true", tot);
        if ((tot != 0) != (O.corrupt != 0)) n_unexpected++;
        if (err[0]) json_str(f, err); else fputs("null", f);
        fputs(",\"mpi\":", f);
        json_str(f, mpi_version);
        fputs("}\n", f);
        fclose(f);
        line[sizeof line - 1] = 0;
        emit("%s", line);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!O.keep && rank == 0) unlink(path);
    MPI_Info_free(&info);
    free(final); free(j.u); free(j.w);
}

/* ------------------------------------------------------------------------------------------ */

static void run_pingpong(int rep)
{
    if (nprocs < 2) bad_usage("pingpong needs at least 2 ranks");
    long long m = O.msg;
    int iters = O.iters > 0 ? O.iters : 20;
    char *b = malloc((size_t)m);
    memset(b, 1, (size_t)m);
    double best = 1e30;
    for (int warm = 0; warm < 2; warm++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(b, (int)m, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(b, (int)m, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(b, (int)m, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, (int)m, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double dt = MPI_Wtime() - t0;
        if (dt < best) best = dt;
    }
    if (rank == 0) {
        emit("{\"pattern\":\"pingpong\",\"params\":{\"msg\":%lld,\"iters\":%d},\"impl\":\"mpi\",\"ranks\":%d,\"rep\":%d,"
             "\"bytes\":%lld,\"seconds\":%.6f,\"MiBs\":%.3f,\"verified\":true,\"error\":null,\"mpi\":",
             m, iters, nprocs, rep, 2LL * m * iters, best, 2.0 * m * iters / 1048576.0 / best);
        json_str(stdout, mpi_version);
        if (O.json_path) { FILE *f = fopen(O.json_path, "a"); if (f) { json_str(f, mpi_version); fclose(f); } }
        emit("}\n");
        fflush(stdout);
    }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int len = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = 0;
    for (char *c = lib; *c; c++)
        if (*c == '\t') *c = ' ';
    snprintf(mpi_version, sizeof mpi_version, "%.200s", lib);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    parse_args(argc, argv);
    if (O.nb_call) calibrate_compute();

    for (int rep = 0; rep < O.reps; rep++) {
        pat_t p;
        memset(&p, 0, sizeof p);
        p.ftype = MPI_DATATYPE_NULL;
        p.etype = MPI_BYTE;
        p.name = O.pattern;
        if (!strcmp(O.pattern, "checkpoint")) { run_checkpoint(rep); continue; }
        if (!strcmp(O.pattern, "pingpong")) { run_pingpong(rep); continue; }
        if (!strcmp(O.pattern, "ior")) setup_ior(&p);
        else if (!strcmp(O.pattern, "tile")) setup_tile(&p);
        else if (!strcmp(O.pattern, "block3d")) setup_block3d(&p);
        else if (!strcmp(O.pattern, "flash")) setup_flash(&p);
        else if (!strcmp(O.pattern, "strided")) setup_strided(&p);
        else bad_usage("unknown pattern '%s' (ior, tile, block3d, flash, strided, checkpoint, pingpong)", O.pattern);
        if (O.nb_call && !p.collective) bad_usage("--nonblocking: the writes of %s --mode %s are not collective", O.pattern, O.mode);
        run_file_pattern(&p, rep);
        for (int k = 0; k < p.ncalls; k++) {
            MPI_Datatype t = p.calls[k].mtype;
            if (t != MPI_BYTE && t != p.etype && t != MPI_DATATYPE_NULL) MPI_Type_free(&p.calls[k].mtype);
        }
        if (p.ftype != MPI_DATATYPE_NULL) MPI_Type_free(&p.ftype);
        if (p.etype != MPI_BYTE) MPI_Type_free(&p.etype);
        free(p.calls);
    }
    MPI_Bcast(&n_unexpected, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    /* exit 1 when a run was not verified (or, with --corrupt-for-test, when the corruption
     * went unnoticed) */
    return n_unexpected ? 1 : 0;
}
