/*
 * Hints the standard requires to be the same on every rank (cb_buffer_size, cb_nodes,
 * striping_*, ...) but which ranks pass differently, through their MPI_Info or their own
 * WEFT_HINTS: rank 0's win at MPI_File_open, MPI_File_set_view and MPI_File_set_info, so
 * collective I/O plans alike on every rank.  Without that, the ranks' plans differ and a
 * collective hangs (ctest's timeout) or writes wrong bytes.
 *
 * Per call: collective writes of an interleaved pattern (8-byte elements of the ranks
 * alternate, many cycles of rank 0's small cb_buffer_size), read back collectively and with
 * POSIX pread; then MPI_File_get_info reports rank 0's values on every rank, and every rank
 * whose hints differed said so in one stderr line (captured here, and echoed for ctest).
 * Also weft_passthrough differing (every rank takes rank 0's path), and set_view on a
 * sequential file where only some ranks pass MPI_DISPLACEMENT_CURRENT.
 * Run with WEFT_VIRTUAL_NODES=3 so there are several aggregators.
 */
#include <fcntl.h>
#include <inttypes.h>

#include "helpers.h"

enum { ELEMENTS = 4096 }; /* per rank: 32 KiB, 8 cycles of rank 0's 4 KiB */

static int rank, nprocs;
static char path[512], capture_path[600];
static MPI_Datatype interleaved;
static int64_t mine[ELEMENTS], back[ELEMENTS];

static int64_t expected(int phase, int owner, int i)
{
    return ((int64_t)phase << 48) | ((int64_t)owner << 32) | (int64_t)(i * 7 + 3);
}

static MPI_Info info_of(const char *pairs[], int n)
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 0; i < n; i++)
        MPI_Info_set(info, pairs[2 * i], pairs[2 * i + 1]);
    return info;
}

/* What weft writes on stderr during one call goes to a file, to be checked. */
static int saved_stderr = -1;

static void capture_begin(void)
{
    fflush(stderr);
    saved_stderr = dup(2);
    int fd = open(capture_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    CHECK(fd >= 0 && saved_stderr >= 0, "capture file %s", capture_path);
    dup2(fd, 2);
    close(fd);
}

static void capture_end(char *out, size_t size)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    int fd = open(capture_path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;
    out[n > 0 ? n : 0] = '\0';
    if (fd >= 0)
        close(fd);
    unlink(capture_path);
    fputs(out, stderr); /* for ctest's output check */
}

/* Rank 0 says nothing; every other rank, whose `hint` differed, says exactly this once. */
static void check_warning(const char *said, const char *call, const char *hint,
                          const char *own_value, const char *rank0_value)
{
    if (rank == 0) {
        CHECK(strstr(said, "using rank 0's") == NULL, "%s: rank 0 warned: %s", call, said);
        return;
    }
    char line[1024];
    snprintf(line, sizeof line,
             "weft: %s: hint %s is %s on rank %d but %s on rank 0; using rank 0's (the standard "
             "requires the same value on every rank)\n",
             path, hint, own_value, rank, rank0_value);
    const char *at = strstr(said, line);
    CHECK(at != NULL, "%s: expected warning\n  %s  got\n  %s", call, line, said);
    CHECK(strstr(at + strlen(line), "using rank 0's") == NULL, "%s: more than one warning: %s", call, said);
}

/* MPI_File_get_info gives rank 0's list on every rank, with `hint` = `value`. */
static void check_info(MPI_File fh, const char *call, const char *hint, const char *value)
{
    static char listed[16384], rank0_listed[16384];
    MPI_Info used;
    CHECK_MPI(MPI_File_get_info(fh, &used));
    int nkeys = 0, flag = 0;
    MPI_Info_get_nkeys(used, &nkeys);
    size_t len = 0;
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        MPI_Info_get_nthkey(used, k, key);
        MPI_Info_get(used, key, MPI_MAX_INFO_VAL, val, &flag);
        len += (size_t)snprintf(listed + len, sizeof listed - len, "%s=%s;", key, val);
        CHECK(len < sizeof listed, "info list too long");
    }
    char val[MPI_MAX_INFO_VAL + 1] = "";
    MPI_Info_get(used, hint, MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && strcmp(val, value) == 0, "%s: get_info %s=%s, rank 0 passed %s", call, hint, val,
          value);
    MPI_Info_free(&used);
    memcpy(rank0_listed, listed, sizeof listed);
    MPI_Bcast(rank0_listed, sizeof rank0_listed, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(strcmp(listed, rank0_listed) == 0, "%s: get_info differs from rank 0's:\n  %s\n  %s",
          call, listed, rank0_listed);
}

/* Collective write of the interleaved pattern, collective read back, and the file itself. */
static void write_and_check(MPI_File fh, int phase, const char *call)
{
    for (int i = 0; i < ELEMENTS; i++)
        mine[i] = expected(phase, rank, i);
    CHECK_MPI(MPI_File_write_at_all(fh, 0, mine, ELEMENTS, MPI_INT64_T, MPI_STATUS_IGNORE));
    memset(back, 0, sizeof back);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, back, ELEMENTS, MPI_INT64_T, MPI_STATUS_IGNORE));
    for (int i = 0; i < ELEMENTS; i++)
        CHECK(back[i] == mine[i], "%s: read_at_all element %d is %#" PRIx64 ", wrote %#" PRIx64,
              call, i, (uint64_t)back[i], (uint64_t)mine[i]);

    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s", path);
    size_t total = (size_t)ELEMENTS * nprocs;
    int64_t *file = malloc(total * sizeof *file);
    CHECK(file && pread(fd, file, total * sizeof *file, 0) == (ssize_t)(total * sizeof *file),
          "%s: pread of %zu elements", call, total);
    close(fd);
    for (size_t k = 0; k < total; k++) {
        int owner = (int)(k % (size_t)nprocs), i = (int)(k / (size_t)nprocs);
        CHECK(file[k] == expected(phase, owner, i),
              "%s: file element %zu is %#" PRIx64 ", expected rank %d's element %d (%#" PRIx64 ")",
              call, k, (uint64_t)file[k], owner, i, (uint64_t)expected(phase, owner, i));
    }
    free(file);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void set_interleaved_view(MPI_File fh, MPI_Info info)
{
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * 8, MPI_INT64_T, interleaved, "native", info));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    test_path(path, sizeof path, "hints-same");
    snprintf(capture_path, sizeof capture_path, "%s.stderr.%d", path, rank);

    /* The ranks' 8-byte elements alternate in the file. */
    MPI_Datatype strided;
    MPI_Type_vector(64, 1, nprocs, MPI_INT64_T, &strided);
    MPI_Type_create_resized(strided, 0, (MPI_Aint)64 * nprocs * 8, &interleaved);
    MPI_Type_commit(&interleaved);
    MPI_Type_free(&strided);

    static const char *partitions[] = {"static-cyclic", "even", "group-cyclic"};
    static const char *overlaps[] = {"write-comm", "none", "auto"};
    char said[4096], own[32], text[3][32];

    /* Open: each rank its own cb_buffer_size, cb_nodes, partition, overlap and (through its
     * WEFT_HINTS) striping_unit; romio_cb_write=enable on odd ranks only. */
    snprintf(text[0], sizeof text[0], "%d", 4096 * (rank + 1));
    snprintf(text[1], sizeof text[1], "%d", rank % 3 + 1);
    const char *open_hints[] = {"cb_buffer_size", text[0], "cb_nodes", text[1],
                                "weft_partition", partitions[rank % 3],
                                "weft_overlap", overlaps[rank % 3],
                                "romio_cb_write", rank % 2 ? "enable" : "automatic"};
    MPI_Info info = info_of(open_hints, 5);
    char env[64];
    snprintf(env, sizeof env, "striping_unit=%d;striping_factor=%d", 512 * (rank + 1), rank + 2);
    setenv("WEFT_HINTS", env, 1);
    MPI_File fh;
    capture_begin();
    int code = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    capture_end(said, sizeof said);
    unsetenv("WEFT_HINTS");
    MPI_Info_free(&info);
    CHECK_MPI(code);
    /* Before set_view, which sets hints too: what open alone made of them. */
    check_info(fh, "open", "cb_buffer_size", "4096");
    check_info(fh, "open", "striping_unit", "512");
    set_interleaved_view(fh, MPI_INFO_NULL);
    write_and_check(fh, 1, "open");
    snprintf(own, sizeof own, "%d", 4096 * (rank + 1));
    check_warning(said, "open", "cb_buffer_size", own, "4096");
    check_info(fh, "open", "weft_partition", "static-cyclic");
    check_info(fh, "open", "cb_nodes", "1");

    /* set_view: other values again, romio_cb_read=enable on odd ranks only. */
    snprintf(text[0], sizeof text[0], "%d", 8192 * (rank + 1));
    const char *view_hints[] = {"cb_buffer_size", text[0],
                                "weft_partition", partitions[(rank + 1) % 3],
                                "weft_overlap", overlaps[(rank + 2) % 3],
                                "romio_cb_read", rank % 2 ? "enable" : "automatic"};
    info = info_of(view_hints, 4);
    capture_begin();
    code = MPI_File_set_view(fh, (MPI_Offset)rank * 8, MPI_INT64_T, interleaved, "native", info);
    capture_end(said, sizeof said);
    MPI_Info_free(&info);
    CHECK_MPI(code);
    write_and_check(fh, 2, "set_view");
    snprintf(own, sizeof own, "%d", 8192 * (rank + 1));
    check_warning(said, "set_view", "cb_buffer_size", own, "8192");
    check_info(fh, "set_view", "weft_overlap", "auto");

    /* set_info: aggregators chosen differently on every rank. */
    snprintf(text[0], sizeof text[0], "%d", (nprocs - rank) % 3 + 1);
    snprintf(text[1], sizeof text[1], "vnode%d:1", rank % 3);
    const char *info_hints[] = {"cb_nodes", text[0], "cb_config_list", text[1],
                                "weft_aggregators", rank % 2 ? "auto" : "hints",
                                "cb_buffer_size", "4096"};
    info = info_of(info_hints, 4);
    capture_begin();
    code = MPI_File_set_info(fh, info);
    capture_end(said, sizeof said);
    MPI_Info_free(&info);
    CHECK_MPI(code);
    write_and_check(fh, 3, "set_info");
    snprintf(own, sizeof own, "%d", (nprocs - rank) % 3 + 1);
    snprintf(text[2], sizeof text[2], "%d", nprocs % 3 + 1);
    check_warning(said, "set_info", "cb_nodes", own, text[2]);
    check_info(fh, "set_info", "cb_config_list", "vnode0:1");
    CHECK_MPI(MPI_File_close(&fh));

    /* weft_passthrough too: every rank takes the path rank 0 asked for, the host MPI's MPI-IO
     * or weft's (which lists all of weft's hints in MPI_File_get_info). */
    for (int passthrough = 0; passthrough < 2; passthrough++) {
        int asked = rank == 0 ? passthrough : !passthrough;
        const char *pass_hints[] = {"weft_passthrough", asked ? "true" : "false"};
        info = info_of(pass_hints, 1);
        capture_begin();
        code = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh);
        capture_end(said, sizeof said);
        MPI_Info_free(&info);
        CHECK_MPI(code);
        set_interleaved_view(fh, MPI_INFO_NULL);
        write_and_check(fh, 4 + passthrough, passthrough ? "open, host MPI-IO" : "open, weft");
        check_warning(said, "open", "weft_passthrough", asked ? "true" : "false",
                      passthrough ? "true" : "false");
        MPI_Info used;
        CHECK_MPI(MPI_File_get_info(fh, &used));
        int weft_listed = 0;
        MPI_Info_get(used, "weft_shuffle", MPI_MAX_INFO_VAL, text[0], &weft_listed);
        MPI_Info_free(&used);
        CHECK(weft_listed == !passthrough, "rank 0 asked for weft_passthrough=%d, rank %d got %s",
              passthrough, rank, weft_listed ? "weft" : "the host MPI's MPI-IO");
        CHECK_MPI(MPI_File_close(&fh));
    }

    /* set_view on a sequential file, disp differing between ranks (which the standard allows):
     * rank 0 passes 0, the others MPI_DISPLACEMENT_CURRENT; every rank returns. */
    char seq_path[600];
    snprintf(seq_path, sizeof seq_path, "%s.seq", path);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, seq_path,
                            MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL |
                                MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_view(fh, rank == 0 ? 0 : MPI_DISPLACEMENT_CURRENT, MPI_BYTE, MPI_BYTE,
                                "native", MPI_INFO_NULL));
    MPI_Offset disp = -1;
    MPI_Datatype etype, filetype;
    char datarep[MPI_MAX_DATAREP_STRING];
    CHECK_MPI(MPI_File_get_view(fh, &disp, &etype, &filetype, datarep));
    CHECK(disp == 0, "sequential set_view: displacement %lld, the shared pointer was at 0",
          (long long)disp);
    CHECK_MPI(MPI_File_close(&fh));

    MPI_Type_free(&interleaved);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
        printf("hints_same: rank 0's hints used on %d ranks at open, set_view, set_info\n",
               nprocs);
    }
    MPI_Finalize();
    return 0;
}
