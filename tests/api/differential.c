/*
 * Differential test of independent and collective data access through random views and
 * random memory layouts.  Every case writes through weft and, with the same arguments, through
 * the host MPI's own MPI-IO (weft_passthrough), then rank 0 compares both files byte for byte
 * with a model of where every byte must land (computed here from explicit block lists, not by
 * weft's datatype engine), read with plain POSIX.  Each rank then reads its data back through
 * a different random memory layout and compares with MPI_Pack/MPI_Unpack of what it wrote,
 * holes of the read buffer included.
 *
 * File views: hindexed, indexed, struct (flat and nested), subarray, vector and darray
 * (block and cyclic) tiles.  `scale` multiplies block lengths and access sizes (many cycles);
 * `piece` multiplies block lengths alone, and access sizes by piece / 8, so that pieces of
 * up to megabytes meet memory types of a few bytes.
 *
 * With --matrix K, the collective engine's choices are crossed instead (DESIGN §3.1-3.3):
 * every partitioner x shuffle x overlap schedule x backend x cb_nodes in {1, 2, all}, with
 * 4 KiB cycle buffers, each combination a reopened file running K collective cases.
 *
 * Usage: api_differential [cases [scale [piece]]] | --matrix K   (seed: WEFT_TEST_SEED)
 */
#include <fcntl.h>

#include "helpers.h"

#define MAX_BLOCKS 64

typedef struct layout {
    int nblocks;
    MPI_Aint offset[MAX_BLOCKS], length[MAX_BLOCKS]; /* bytes, within one tile */
    MPI_Aint extent;
    MPI_Aint size;
} layout;

typedef struct rank_case {
    layout file;             /* this rank's part of the tile */
    MPI_Datatype filetype;
    MPI_Datatype etype;
    int esize;
    MPI_Offset disp;
    MPI_Offset offset;       /* in etypes */
    int op;                  /* 0 write_at, 1 write_at_all, 2 seek+write, 3 write_all */
    MPI_Datatype memtype;    /* for writing */
    MPI_Datatype readtype;   /* for reading back */
    int count, read_count;
    MPI_Aint mem_lb, mem_span, read_lb, read_span;
    MPI_Count bytes;
} rank_case;

static int rank, nprocs;
static int scale = 1; /* multiplies block and access sizes (bigger cases: many cycles) */
static int piece = 1; /* multiplies block lengths (and access sizes by piece / 8) */
static int collective_only; /* --matrix: every write and read through the collective engine */
static long long bytes_checked; /* file bytes compared by rank 0, reported at the end */

static MPI_Datatype etype_for(int esize)
{
    return esize == 1 ? MPI_BYTE : esize == 4 ? MPI_INT : MPI_DOUBLE;
}

/* One tile of blocks dealt round-robin to the ranks: rank r's blocks never overlap another
 * rank's, whatever offsets and counts they use. */
static void make_tile(uint64_t *rng, int esize, int r, layout *mine)
{
    int nblocks = 1 + (int)test_rand_below(rng, 3 * nprocs);
    MPI_Aint pos = (MPI_Aint)test_rand_below(rng, 3) * esize;
    memset(mine, 0, sizeof *mine);
    for (int k = 0; k < nblocks; k++) {
        MPI_Aint len = (1 + (MPI_Aint)test_rand_below(rng, 6)) * esize * scale * piece;
        if (k % nprocs == r && mine->nblocks < MAX_BLOCKS) {
            mine->offset[mine->nblocks] = pos;
            mine->length[mine->nblocks] = len;
            mine->nblocks++;
            mine->size += len;
        }
        pos += len + (MPI_Aint)test_rand_below(rng, 3) * esize;
    }
    mine->extent = pos;
}

/* A 2-D array of rows x cols etypes, split into column blocks per rank: a subarray. */
static void make_columns(uint64_t *rng, int esize, int r, layout *mine, int *rows, int *cols,
                         int *c0, int *nc)
{
    *rows = 1 + (int)test_rand_below(rng, 6);
    int width = (1 + (int)test_rand_below(rng, 3)) * scale * piece;
    *cols = width * nprocs;
    *c0 = r * width;
    *nc = width;
    memset(mine, 0, sizeof *mine);
    for (int i = 0; i < *rows; i++) {
        mine->offset[i] = ((MPI_Aint)i * *cols + *c0) * esize;
        mine->length[i] = (MPI_Aint)width * esize;
        mine->size += mine->length[i];
    }
    mine->nblocks = *rows;
    mine->extent = (MPI_Aint)*rows * *cols * esize;
}

/* A rows x cols array whose columns are dealt to the ranks as MPI_Type_create_darray does
 * with distribs {NONE, BLOCK or CYCLIC(k)} over a 1 x P process grid, written out here from
 * the standard's definition (block: ceil(cols / P) columns per rank; cyclic(k): column
 * blocks of k, block j to rank j mod P, the last one possibly short). */
static void make_darray(uint64_t *rng, int esize, int r, layout *mine, int *rows, int *cols,
                        int *cyclic, int *k)
{
    *rows = 1 + (int)test_rand_below(rng, 6);
    *cyclic = (int)test_rand_below(rng, 2);
    *k = (1 + (int)test_rand_below(rng, 3)) * scale * piece;
    int blocks = 1 + (int)test_rand_below(rng, 3 * nprocs);
    *cols = blocks * *k - (int)test_rand_below(rng, (uint64_t)*k); /* last block short */
    int width = *cyclic ? *k : (*cols + nprocs - 1) / nprocs;
    memset(mine, 0, sizeof *mine);
    for (int i = 0; i < *rows; i++)
        for (int c0 = r * width; c0 < *cols; c0 += *cyclic ? nprocs * width : *cols) {
            int n = *cols - c0 < width ? *cols - c0 : width;
            mine->offset[mine->nblocks] = ((MPI_Aint)i * *cols + c0) * esize;
            mine->length[mine->nblocks] = (MPI_Aint)n * esize;
            mine->size += mine->length[mine->nblocks];
            mine->nblocks++;
        }
    mine->extent = (MPI_Aint)*rows * *cols * esize;
}

static MPI_Datatype build_filetype(uint64_t *rng, int esize, int r, layout *l)
{
    MPI_Datatype etype = etype_for(esize), t = MPI_DATATYPE_NULL, tmp;
    int style = (int)test_rand_below(rng, 7);
    if (style == 4) {
        int rows, cols, c0, nc;
        make_columns(rng, esize, r, l, &rows, &cols, &c0, &nc);
        int sizes[2] = {rows, cols}, sub[2] = {rows, nc}, starts[2] = {0, c0};
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, etype, &t);
        MPI_Type_commit(&t);
        return t;
    }
    if (style == 5) { /* the same columns as a vector moved to column c0 */
        int rows, cols, c0, nc, one = 1;
        make_columns(rng, esize, r, l, &rows, &cols, &c0, &nc);
        MPI_Datatype v;
        MPI_Aint at = (MPI_Aint)c0 * esize;
        MPI_Type_vector(rows, nc, cols, etype, &v);
        MPI_Type_create_hindexed(1, &one, &at, v, &tmp);
        MPI_Type_free(&v);
        MPI_Type_create_resized(tmp, 0, l->extent, &t);
        MPI_Type_free(&tmp);
        MPI_Type_commit(&t);
        return t;
    }
    if (style == 6) {
        int rows, cols, cyclic, k;
        make_darray(rng, esize, r, l, &rows, &cols, &cyclic, &k);
        int gsizes[2] = {rows, cols}, psizes[2] = {1, nprocs};
        int distribs[2] = {MPI_DISTRIBUTE_NONE, cyclic ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_BLOCK};
        int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, cyclic ? k : MPI_DISTRIBUTE_DFLT_DARG};
        MPI_Type_create_darray(nprocs, r, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, etype,
                               &t);
        MPI_Type_commit(&t);
        return t;
    }
    make_tile(rng, esize, r, l);
    int n = l->nblocks;
    int lens[MAX_BLOCKS], displs_e[MAX_BLOCKS];
    MPI_Aint displs[MAX_BLOCKS] = {0};
    MPI_Datatype types[MAX_BLOCKS];
    for (int k = 0; k < n; k++) {
        lens[k] = (int)(l->length[k] / esize);
        displs[k] = l->offset[k];
        displs_e[k] = (int)(l->offset[k] / esize);
        types[k] = etype;
    }
    switch (style) {
    case 0: MPI_Type_create_hindexed(n, lens, displs, etype, &tmp); break;
    case 1: MPI_Type_indexed(n, lens, displs_e, etype, &tmp); break;
    case 2: MPI_Type_create_struct(n, lens, displs, types, &tmp); break;
    default: {
        /* The same blocks as a struct of contiguous types nested one level deeper. */
        MPI_Datatype inner[MAX_BLOCKS] = {0};
        int ones[MAX_BLOCKS] = {0};
        for (int k = 0; k < n; k++) {
            MPI_Type_contiguous(lens[k], etype, &inner[k]);
            ones[k] = 1;
        }
        MPI_Type_create_struct(n, ones, displs, inner, &tmp);
        for (int k = 0; k < n; k++)
            MPI_Type_free(&inner[k]);
    }
    }
    MPI_Type_create_resized(tmp, 0, l->extent, &t);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&t);
    return t;
}

/* A random memory layout whose data size is a multiple of `unit` bytes. */
static MPI_Datatype build_memtype(uint64_t *rng, int unit)
{
    MPI_Datatype base = etype_for(unit), t, tmp;
    switch (test_rand_below(rng, 5)) {
    case 0: MPI_Type_contiguous(1 + (int)test_rand_below(rng, 4), base, &t); break;
    case 1:
        MPI_Type_vector(1 + (int)test_rand_below(rng, 5), 1 + (int)test_rand_below(rng, 3),
                        4 + (int)test_rand_below(rng, 3), base, &t);
        break;
    case 2: { /* negative stride: the typemap walks backwards through memory */
        MPI_Type_create_hvector(2 + (int)test_rand_below(rng, 3), 1, -3 * (MPI_Aint)unit, base, &t);
        break;
    }
    case 3: {
        int lens[3], displs[3], at = 0;
        for (int k = 0; k < 3; k++) {
            displs[k] = at + (int)test_rand_below(rng, 3);
            lens[k] = 1 + (int)test_rand_below(rng, 3);
            at = displs[k] + lens[k];
        }
        MPI_Type_indexed(3, lens, displs, base, &t);
        break;
    }
    default: {
        /* vector of a resized pair: nested, with holes at both levels */
        MPI_Type_contiguous(2, base, &tmp);
        MPI_Datatype spaced;
        MPI_Type_create_resized(tmp, 0, 3 * (MPI_Aint)unit, &spaced);
        MPI_Type_free(&tmp);
        MPI_Type_vector(2, 1, 2, spaced, &t);
        MPI_Type_free(&spaced);
    }
    }
    MPI_Type_commit(&t);
    return t;
}

/* Every rank can rebuild every rank's case from the seed. */
static void make_case(uint64_t seed, int index, int r, rank_case *c)
{
    uint64_t shared = seed * 1000003u + (uint64_t)index * 7919u + 1;
    int esize_choices[3] = {1, 4, 8};
    c->esize = esize_choices[test_rand_below(&shared, 3)];
    c->etype = etype_for(c->esize);
    c->disp = (MPI_Offset)test_rand_below(&shared, 4) * 8;
    c->op = (int)test_rand_below(&shared, 4);
    if (collective_only)
        c->op = c->op & 1 ? 1 : 3; /* write_at_all or write_all */
    uint64_t tile_rng = shared; /* same tile for every rank, each takes its own blocks */
    c->filetype = build_filetype(&tile_rng, c->esize, r, &c->file);
    uint64_t mine = shared ^ (0x9e3779b97f4a7c15ull * (uint64_t)(r + 1));
    test_rand(&mine);
    c->offset = (MPI_Offset)test_rand_below(&mine, 12);
    c->memtype = build_memtype(&mine, c->esize);
    c->readtype = build_memtype(&mine, c->esize);
    MPI_Count msize, rsize;
    MPI_Type_size_x(c->memtype, &msize);
    MPI_Type_size_x(c->readtype, &rsize);
    /* Same data size written and read back: pick counts so both cover `bytes`. */
    int units = (1 + (int)test_rand_below(&mine, 10)) * scale * (piece > 8 ? piece / 8 : 1);
    c->count = units * (int)(rsize / (msize < rsize ? 1 : 1)) ; /* refined below */
    MPI_Count l = msize, m = rsize; /* least common multiple of the two sizes */
    while (m) { MPI_Count t = l % m; l = m; m = t; }
    MPI_Count lcm = msize / l * rsize;
    c->bytes = lcm * units;
    c->count = (int)(c->bytes / msize);
    c->read_count = (int)(c->bytes / rsize);
    if (c->file.size == 0) {
        c->count = c->read_count = 0;
        c->bytes = 0;
    }
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_get_extent(c->memtype, &lb, &extent);
    MPI_Type_get_true_extent(c->memtype, &tlb, &textent);
    c->mem_lb = tlb < 0 ? tlb : 0;
    c->mem_span = textent + (c->count > 0 ? (c->count - 1) * (extent < 0 ? -extent : extent) : 0) + 64 - c->mem_lb;
    MPI_Type_get_extent(c->readtype, &lb, &extent);
    MPI_Type_get_true_extent(c->readtype, &tlb, &textent);
    c->read_lb = tlb < 0 ? tlb : 0;
    c->read_span = textent + (c->read_count > 0 ? (c->read_count - 1) * (extent < 0 ? -extent : extent) : 0) + 64 - c->read_lb;
}

static void free_case(rank_case *c)
{
    MPI_Type_free(&c->filetype);
    MPI_Type_free(&c->memtype);
    MPI_Type_free(&c->readtype);
}

static unsigned char data_byte(int r, int index, MPI_Count i)
{
    return (unsigned char)(1 + (r * 131 + index * 31 + i * 7 + (i >> 8)) % 251);
}

/* File offset of view data byte `pos` of a layout. */
static MPI_Offset place(const rank_case *c, MPI_Count pos)
{
    MPI_Count tile = pos / c->file.size, within = pos % c->file.size;
    for (int k = 0; k < c->file.nblocks; k++) {
        if (within < c->file.length[k])
            return c->disp + tile * c->file.extent + c->file.offset[k] + within;
        within -= c->file.length[k];
    }
    return -1;
}

/* WEFT_TEST_NONBLOCKING: weft's collective writes and reads go through the nonblocking forms
 * ("1": MPI_File_iwrite_at_all / iwrite_all + MPI_Wait) or the split collectives ("split":
 * ..._begin / ..._end); the host's stay blocking. */
enum { ROUTE_BLOCKING, ROUTE_NONBLOCKING, ROUTE_SPLIT };
static int route;

static int route_from_env(void)
{
    const char *v = getenv("WEFT_TEST_NONBLOCKING");
    if (!v || !*v || strcmp(v, "0") == 0)
        return ROUTE_BLOCKING;
    return strcmp(v, "split") == 0 ? ROUTE_SPLIT : ROUTE_NONBLOCKING;
}

/* A collective write (at = 1: explicit offset, else the individual pointer) by the route. */
static int collective_write(MPI_File fh, int at, MPI_Offset offset, const void *buf, int count,
                            MPI_Datatype type)
{
    MPI_Status st;
    MPI_Request request;
    int rc;
    switch (route) {
    case ROUTE_NONBLOCKING:
        rc = at ? MPI_File_iwrite_at_all(fh, offset, buf, count, type, &request)
                : MPI_File_iwrite_all(fh, buf, count, type, &request);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, &st);
    case ROUTE_SPLIT:
        rc = at ? MPI_File_write_at_all_begin(fh, offset, buf, count, type)
                : MPI_File_write_all_begin(fh, buf, count, type);
        if (rc != MPI_SUCCESS)
            return rc;
        return at ? MPI_File_write_at_all_end(fh, buf, &st) : MPI_File_write_all_end(fh, buf, &st);
    default:
        return at ? MPI_File_write_at_all(fh, offset, buf, count, type, &st)
                  : MPI_File_write_all(fh, buf, count, type, &st);
    }
}

static int collective_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                              MPI_Datatype type, MPI_Status *st)
{
    MPI_Request request;
    int rc;
    switch (route) {
    case ROUTE_NONBLOCKING:
        rc = MPI_File_iread_at_all(fh, offset, buf, count, type, &request);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, st);
    case ROUTE_SPLIT:
        rc = MPI_File_read_at_all_begin(fh, offset, buf, count, type);
        return rc != MPI_SUCCESS ? rc : MPI_File_read_at_all_end(fh, buf, st);
    default:
        return MPI_File_read_at_all(fh, offset, buf, count, type, st);
    }
}

static int do_write(MPI_File fh, rank_case *c, const void *buf, int weft)
{
    MPI_Status st;
    if (weft && route != ROUTE_BLOCKING && (c->op == 1 || c->op == 3)) {
        if (c->op == 3)
            MPI_File_seek(fh, c->offset, MPI_SEEK_SET);
        return collective_write(fh, c->op == 1, c->offset, buf, c->count, c->memtype);
    }
    switch (c->op) {
    case 0: return MPI_File_write_at(fh, c->offset, buf, c->count, c->memtype, &st);
    case 1: return MPI_File_write_at_all(fh, c->offset, buf, c->count, c->memtype, &st);
    case 2:
        MPI_File_seek(fh, c->offset, MPI_SEEK_SET);
        return MPI_File_write(fh, buf, c->count, c->memtype, &st);
    default:
        MPI_File_seek(fh, c->offset, MPI_SEEK_SET);
        return MPI_File_write_all(fh, buf, c->count, c->memtype, &st);
    }
}

static void run_case(uint64_t seed, int index, MPI_File weft_fh, MPI_File host_fh,
                     const char *weft_path, const char *host_path)
{
    rank_case c;
    make_case(seed, index, rank, &c);
    /* The user's buffer: packed data unpacked through the memory type. */
    unsigned char *packed = malloc((size_t)c.bytes + 1);
    for (MPI_Count i = 0; i < c.bytes; i++)
        packed[i] = data_byte(rank, index, i);
    unsigned char *mem = calloc(1, (size_t)c.mem_span);
    unsigned char *buf = mem - c.mem_lb;
    int pos = 0;
    MPI_Unpack(packed, (int)c.bytes, &pos, buf, c.count, c.memtype, MPI_COMM_SELF);

    CHECK_MPI(MPI_File_set_size(weft_fh, 0));
    CHECK_MPI(MPI_File_set_size(host_fh, 0));
    CHECK_MPI(MPI_File_set_view(weft_fh, c.disp, c.etype, c.filetype, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_set_view(host_fh, c.disp, c.etype, c.filetype, "native", MPI_INFO_NULL));
    CHECK_MPI(do_write(weft_fh, &c, buf, 1));
    CHECK_MPI(do_write(host_fh, &c, buf, 0));
    CHECK_MPI(MPI_File_sync(weft_fh));
    CHECK_MPI(MPI_File_sync(host_fh));
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        /* The model: every rank's bytes where its view puts them, zeros elsewhere. */
        MPI_Offset size = 0;
        rank_case *all = malloc(sizeof *all * (size_t)nprocs);
        for (int r = 0; r < nprocs; r++) {
            make_case(seed, index, r, &all[r]);
            if (all[r].bytes > 0) {
                MPI_Offset last = place(&all[r], all[r].offset * all[r].esize + all[r].bytes - 1);
                if (last + 1 > size)
                    size = last + 1;
            }
        }
        unsigned char *model = calloc(1, (size_t)size + 1), *written = calloc(1, (size_t)size + 1);
        for (int r = 0; r < nprocs; r++) {
            for (MPI_Count i = 0; i < all[r].bytes; i++) {
                MPI_Offset at = place(&all[r], all[r].offset * all[r].esize + i);
                model[at] = data_byte(r, index, i);
                written[at] = 1;
            }
            free_case(&all[r]);
        }
        free(all);
        bytes_checked += size;
        const char *paths[2] = {weft_path, host_path};
        for (int which = 0; which < 2; which++) {
            unsigned char *file = calloc(1, (size_t)size + 2);
            int fd = open(paths[which], O_RDONLY);
            ssize_t got = pread(fd, file, (size_t)size + 1, 0);
            close(fd);
            CHECK(got == (ssize_t)size, "case %d (%s): file has %zd bytes, model %lld",
                  index, which ? "host MPI-IO" : "weft", got, (long long)size);
            /* weft must match everywhere: holes of a fresh file read as zeros.  The host's
             * MPI-IO is held to the written bytes only: ROMIO's data sieving fills holes of
             * a fresh file with stale buffer contents (DESIGN.md §4). */
            for (MPI_Offset i = 0; i < size; i++)
                CHECK(file[i] == model[i] || (which == 1 && !written[i]),
                      "case %d (%s): byte %lld is %u, model says %u", index,
                      which ? "host MPI-IO" : "weft", (long long)i, file[i], model[i]);
            free(file);
        }
        free(model);
        free(written);
    }

    /* Read back through a different memory layout; holes of the buffer must stay as they
     * were (0xEE), data must equal what was written. */
    unsigned char *rmem = malloc((size_t)c.read_span), *emem = malloc((size_t)c.read_span);
    memset(rmem, 0xEE, (size_t)c.read_span);
    memset(emem, 0xEE, (size_t)c.read_span);
    unsigned char *rbuf = rmem - c.read_lb, *ebuf = emem - c.read_lb;
    pos = 0;
    MPI_Unpack(packed, (int)c.bytes, &pos, ebuf, c.read_count, c.readtype, MPI_COMM_SELF);
    MPI_Status st;
    /* Read back collectively in odd cases (through the aggregators), independently otherwise. */
    if (index % 2 || collective_only)
        CHECK_MPI(collective_read_at(weft_fh, c.offset, rbuf, c.read_count, c.readtype, &st));
    else
        CHECK_MPI(MPI_File_read_at(weft_fh, c.offset, rbuf, c.read_count, c.readtype, &st));
    MPI_Count got = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &got);
    CHECK(got == c.bytes, "case %d: read %lld bytes, wrote %lld", index, (long long)got, (long long)c.bytes);
    CHECK(memcmp(rmem, emem, (size_t)c.read_span) == 0, "case %d: read-back buffer differs", index);
    MPI_Barrier(MPI_COMM_WORLD);
    free(rmem);
    free(emem);
    free(mem);
    free(packed);
    free_case(&c);
}

/* --matrix: every combination of the engine's hints, `per` cases each, the weft file reopened
 * with the combination's info; returns the number of cases run. */
static int run_matrix(uint64_t seed, int per, const char *weft_path, MPI_File host_fh,
                      const char *host_path)
{
    static const char *partitions[] = {"even", "even-aligned", "static-cyclic", "group-cyclic"};
    static const char *shuffles[] = {"isend", "put-fence", "put-lock", "shm"};
    static const char *overlaps[] = {"none", "comm", "write", "write-comm", "write-comm-2", "auto"};
    static const char *backends[] = {"sync", "threads", "uring"};
    int nodes[3] = {1, 2, nprocs}, index = 0;
    for (int combo = 0; combo < 4 * 4 * 6 * 3 * 3; combo++) { /* cb_nodes varies fastest */
        int n = combo % 3, b = combo / 3 % 3, o = combo / 9 % 6, sh = combo / 54 % 4,
            p = combo / 216;
        char cb_nodes[16];
        snprintf(cb_nodes, sizeof cb_nodes, "%d", nodes[n]);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "weft_partition", partitions[p]);
        MPI_Info_set(info, "weft_shuffle", shuffles[sh]);
        MPI_Info_set(info, "weft_overlap", overlaps[o]);
        MPI_Info_set(info, "weft_backend", backends[b]);
        MPI_Info_set(info, "cb_nodes", cb_nodes);
        MPI_Info_set(info, "cb_buffer_size", "4096");
        MPI_Info_set(info, "striping_unit", "512");
        MPI_Info_set(info, "striping_factor", "2");
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "romio_cb_read", "enable");
        MPI_File fh;
        CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, weft_path, MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                                &fh));
        MPI_Info_free(&info);
        for (int k = 0; k < per; k++)
            run_case(seed, index++, fh, host_fh, weft_path, host_path);
        CHECK_MPI(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(weft_path);
    return index;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int matrix = argc > 2 && strcmp(argv[1], "--matrix") == 0 ? atoi(argv[2]) : 0;
    collective_only = matrix > 0;
    route = route_from_env();
    if (rank == 0 && route != ROUTE_BLOCKING)
        printf("differential: weft's collective calls %s\n",
               route == ROUTE_SPLIT ? "split (begin/end)" : "nonblocking (+ MPI_Wait)");
    int cases = matrix ? 0 : argc > 1 ? atoi(argv[1]) : 200;
    scale = matrix ? 1 : argc > 2 ? atoi(argv[2]) : 1;
    piece = matrix ? 1 : argc > 3 ? atoi(argv[3]) : 1;
    uint64_t seed = test_seed(20261123, "differential");
    char weft_path[512], host_path[600];
    test_path(weft_path, sizeof weft_path, "diff-weft");
    snprintf(host_path, sizeof host_path, "%s-host", weft_path);
    MPI_Info pass;
    MPI_Info_create(&pass);
    MPI_Info_set(pass, "weft_passthrough", "true");
    MPI_File weft_fh, host_fh;
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, host_path, amode, pass, &host_fh));
    MPI_Info_free(&pass);
    if (matrix) {
        cases = run_matrix(seed, matrix, weft_path, host_fh, host_path);
    } else {
        CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, weft_path, amode, MPI_INFO_NULL, &weft_fh));
        for (int i = 0; i < cases; i++)
            run_case(seed, i, weft_fh, host_fh, weft_path, host_path);
        CHECK_MPI(MPI_File_close(&weft_fh));
    }
    CHECK_MPI(MPI_File_close(&host_fh));
    if (rank == 0)
        printf("differential: %d cases (%lld file bytes) identical to the model and to the host "
               "MPI-IO on %d ranks\n", cases, bytes_checked, nprocs);
    MPI_Finalize();
    return 0;
}
