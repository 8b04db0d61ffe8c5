/*
 * The hint table: every hint weft understands, in one place.  Parsing, validation, the
 * MPI_File_get_info output and docs/HINTS.md (checked by a test) all come from this table.
 *
 * Values are held as numbers (sizes, counts, booleans and enum indices) or short strings.
 * A malformed value never fails a call (the standard makes hints advisory): it is reported
 * once per file on stderr and the previous value stays in effect.
 */
#ifndef WEFT_HINTS_H
#define WEFT_HINTS_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
    WEFT_HINT_SIZE,   /* non-negative byte count; accepts k/m/g suffixes (powers of 1024) */
    WEFT_HINT_INT,    /* integer in [min, max] */
    WEFT_HINT_BOOL,   /* true/false (also enable/disable, 1/0, yes/no) */
    WEFT_HINT_ENUM,   /* one of the '|'-separated choices; value is its index */
    WEFT_HINT_STRING, /* free text up to WEFT_HINT_STRING_MAX - 1 bytes */
} weft_hint_kind;

/* weft_overlap's values: the enum and the hint's choices come from this one list, so the
 * collective engine's schedule table (indexed by the enum) cannot drift from the names. */
#define WEFT_OVERLAP_SCHEDULES(X, SEP) \
    X(NONE, "none") SEP X(COMM, "comm") SEP X(WRITE, "write") SEP X(WRITE_COMM, "write-comm") \
    SEP X(WRITE_COMM_2, "write-comm-2") SEP X(AUTO, "auto")
#define WEFT_OVERLAP_ENUM_ID(id, name) WEFT_OVERLAP_##id,
#define WEFT_OVERLAP_NAME(id, name) name
enum { WEFT_OVERLAP_SCHEDULES(WEFT_OVERLAP_ENUM_ID, ) WEFT_OVERLAP_COUNT };
#define WEFT_OVERLAP_CHOICES WEFT_OVERLAP_SCHEDULES(WEFT_OVERLAP_NAME, "|")

/* X(ID, "name", KIND, "default", min, max, "choices", "doc")
 * The doc line says what the hint does and why its default is what it is. */
#define WEFT_HINT_TABLE(X) \
    X(CB_BUFFER_SIZE, "cb_buffer_size", SIZE, "16777216", 4096, 1LL << 30, NULL, \
      "Bytes each aggregator moves per two-phase cycle. 16 MiB (ROMIO's default) amortizes a " \
      "cycle's synchronisation over enough data on fast storage while bounding memory; at " \
      "most 1 GiB, so one message of a cycle stays within MPI's int counts.") \
    X(WEFT_CYCLE_SIZE, "weft_cycle_size", SIZE, "0", 0, 1LL << 30, NULL, \
      "Bytes an aggregator gathers and writes per cycle (per half of cb_buffer_size when an " \
      "overlap schedule keeps two cycles in flight); never more than that share. 0 = auto: " \
      "the larger of 512 KiB and 64 KiB per rank with data (so each sender's message per " \
      "cycle stays large at scale). A cycle that fits in cache lets the file access read " \
      "what the shuffle just wrote from cache; on tmpfs at 2 ranks it beat 8 MiB cycles by " \
      "1.2-2.2x.") \
    X(CB_NODES, "cb_nodes", INT, "0", 0, 1 << 24, NULL, \
      "Number of aggregators for collective I/O, kept exactly (weft_aggregators=auto does not " \
      "cut it); 0 means as cb_config_list and weft_aggregators say (nodes are found with " \
      "MPI_Comm_split_type).") \
    X(CB_CONFIG_LIST, "cb_config_list", STRING, "*:*", 0, 0, NULL, \
      "Where aggregators go, in ROMIO syntax: a comma-separated list of `name[:N]`, name a " \
      "host (matched ignoring case) or `*` for every node, N a count or `*` for all of the " \
      "host's processes, 1 when omitted; e.g. `*:2` = two per node, `io1:4,*:1`. Entries " \
      "take not-yet-chosen processes, lowest ranks first, in list order, which is aggregator " \
      "order; hosts not covered get none. With cb_nodes > 0 a list naming hosts is cut to " \
      "its first cb_nodes, and a list of only `*` entries is ignored. A malformed list, or " \
      "one matching no host, means `*:1` (warned once). Default `*:*`, every process a " \
      "candidate, one per node first (ROMIO's default is `*:1`): on fast storage the " \
      "aggregators' copies and file access are CPU work, which one process per node " \
      "serialises, and with weft_aggregators=auto only as many as the data fills cycles " \
      "for are kept (8-byte pieces interleaved by 2 ranks on one node: 1.7x write, 1.5x " \
      "read over one per node).") \
    X(WEFT_AGGREGATORS, "weft_aggregators", ENUM, "auto", 0, 0, "hints|auto", \
      "How many aggregators collective I/O uses: hints = as cb_nodes and cb_config_list say; " \
      "auto = at most max(1, ceil(bytes accessed / cycle size)) of those, the first ones (so " \
      "they stay spread over nodes), unless cb_nodes is given: each aggregator gets at " \
      "least a full cycle of data, because one with less pays a cycle's synchronisation " \
      "for little. auto is the default because the default list offers every process.") \
    X(ROMIO_CB_WRITE, "romio_cb_write", ENUM, "automatic", 0, 0, "automatic|enable|disable", \
      "Two-phase aggregation for collective writes; automatic skips it when accesses do not " \
      "interleave and are large, where aggregation only adds a copy.") \
    X(ROMIO_CB_READ, "romio_cb_read", ENUM, "automatic", 0, 0, "automatic|enable|disable", \
      "Two-phase aggregation for collective reads, as romio_cb_write.") \
    X(ROMIO_DS_WRITE, "romio_ds_write", ENUM, "automatic", 0, 0, "automatic|enable|disable", \
      "Data sieving for noncontiguous independent writes; automatic uses it when holes are " \
      "small enough that one read-modify-write beats many small writes.") \
    X(ROMIO_DS_READ, "romio_ds_read", ENUM, "automatic", 0, 0, "automatic|enable|disable", \
      "Data sieving for noncontiguous independent reads, as romio_ds_write.") \
    X(IND_RD_BUFFER_SIZE, "ind_rd_buffer_size", SIZE, "4194304", 4096, 1LL << 40, NULL, \
      "Sieving buffer for independent reads; 4 MiB as ROMIO: large enough to cover typical " \
      "strided extents in one read.") \
    X(IND_WR_BUFFER_SIZE, "ind_wr_buffer_size", SIZE, "524288", 4096, 1LL << 40, NULL, \
      "Sieving buffer for independent writes; 512 KiB as ROMIO: a locked read-modify-write " \
      "region should stay small so other writers wait little.") \
    X(STRIPING_UNIT, "striping_unit", SIZE, "0", 0, 1LL << 40, NULL, \
      "Stripe size in bytes used to align file domains; 0 = unknown (ask the fs driver).") \
    X(STRIPING_FACTOR, "striping_factor", INT, "0", 0, 1 << 20, NULL, \
      "Number of stripes (I/O servers) a file spans; 0 = unknown (ask the fs driver).") \
    X(ROMIO_NO_INDEP_RW, "romio_no_indep_rw", BOOL, "false", 0, 1, NULL, \
      "Promise that the program makes no independent accesses, so only aggregators need " \
      "to open the file (advisory; weft opens it on every rank).") \
    X(WEFT_PASSTHROUGH, "weft_passthrough", BOOL, "false", 0, 1, NULL, \
      "Hand the file to the host MPI's own MPI-IO (ROMIO/OMPIO) through its PMPI_File_* " \
      "entry points: a way to compare, and a way out. Also set by WEFT_PASSTHROUGH=1.") \
    X(WEFT_PARTITION, "weft_partition", ENUM, "even", 0, 0, \
      "even|even-aligned|static-cyclic|group-cyclic", \
      "How collective I/O splits the accessed range into aggregator file domains (seed 000 " \
      "§2.2.2): even is ROMIO's; the aligned and cyclic ones keep stripes whole for striped " \
      "file systems (striping_unit, striping_factor).") \
    X(WEFT_SHUFFLE, "weft_shuffle", ENUM, "isend", 0, 0, "isend|put-fence|put-lock|shm", \
      "How collective I/O moves data between ranks and aggregators (seed 000 §3.1.2): " \
      "MPI_Isend/Irecv; MPI_Put with fence epochs; MPI_Put under shared locks with per-cycle " \
      "barriers; or memcpy into the aggregator's buffer through a shared-memory window on its " \
      "node (isend across nodes). isend is the default: it needs no windows and no " \
      "collective synchronisation per cycle, and no primitive won everywhere in the seed.") \
    X(WEFT_OVERLAP, "weft_overlap", ENUM, "auto", 0, 0, WEFT_OVERLAP_CHOICES, \
      "Overlap of shuffle and file access in collective writes (seed 000 §3.1.1, Algorithms " \
      "1-4; reads prefetch the next cycle with any value but none). No schedule wins " \
      "everywhere (000 table 1), so auto times the first cycle without overlap (both phases " \
      "must take real time for overlap to pay), then, in a write of enough cycles, runs 3 " \
      "cycles of each candidate schedule and keeps the fastest (a shorter write runs write-comm-2); " \
      "reads prefetch only through an asynchronous backend; remembered per file and " \
      "direction.") \
    X(WEFT_BACKEND, "weft_backend", ENUM, "auto", 0, 0, "sync|threads|uring|auto", \
      "How aggregators move bytes to the file: sync, the library's thread pool, or io_uring " \
      "(falls back to threads where the kernel refuses); auto = threads when the machine " \
      "has a core its workers can use (the rank is not bound to one core and there are " \
      "more cores than ranks on the machine), else sync. Buffered file access is CPU work, " \
      "so it overlaps the shuffle only on an idle core: with 2 ranks on 2 cores, sync read " \
      "up to 25 % faster than threads on the small-piece patterns, and wrote alike. threads " \
      "overlaps as well as uring for the few large requests of a cycle.") \
    X(WEFT_FS, "weft_fs", ENUM, "posix", 0, 0, "posix", \
      "File-system driver. posix works on any local or shared POSIX file system.")

typedef enum {
#define WEFT_HINT_ENUM_ID(id, ...) WEFT_HINT_##id,
    WEFT_HINT_TABLE(WEFT_HINT_ENUM_ID)
#undef WEFT_HINT_ENUM_ID
    WEFT_HINT_COUNT
} weft_hint_id;

enum { WEFT_CB_AUTOMATIC = 0, WEFT_CB_ENABLE = 1, WEFT_CB_DISABLE = 2 };
enum { WEFT_AGGREGATORS_HINTS = 0, WEFT_AGGREGATORS_AUTO = 1 }; /* weft_aggregators */
enum { WEFT_BACKEND_AUTO = 3 };                                  /* weft_backend: after sync|threads|uring */

#define WEFT_HINT_STRING_MAX 256

typedef struct weft_hint_def {
    const char *name;
    weft_hint_kind kind;
    const char *default_value;
    long long min, max;
    const char *choices;
    const char *doc;
} weft_hint_def;

typedef struct weft_hints {
    long long value[WEFT_HINT_COUNT];
    char text[WEFT_HINT_COUNT][WEFT_HINT_STRING_MAX]; /* canonical text of every value */
} weft_hints;

extern const weft_hint_def weft_hint_defs[WEFT_HINT_COUNT];

/* Defaults, then the WEFT_HINTS environment variable ("key=value;key=value"). */
void weft_hints_init(weft_hints *h);

/* Parse one key/value.  Returns 0 when applied, 1 when the key is not weft's (ignored
 * silently, as the standard asks), -1 when the value is malformed (a message goes into
 * `why`, the old value stays). */
int weft_hints_set(weft_hints *h, const char *key, const char *value, char *why, size_t why_size);

/* Apply every key of an MPI_Info; malformed values are warned about on stderr (once per
 * call, rank 0 only when `report` is set).  MPI_INFO_NULL is fine. */
void weft_hints_apply_info(weft_hints *h, MPI_Info info, const char *path, int report);

/* A new MPI_Info holding every hint with the value in effect. */
int weft_hints_to_info(const weft_hints *h, MPI_Info *info);

/* The name of choice `index` of enum hint `id` (e.g. weft_partition 2 -> "static-cyclic"). */
void weft_hint_choice_text(int id, long long index, char *out, size_t size);

/* Write docs/HINTS.md's table (markdown) to `out`. */
void weft_hints_write_markdown(FILE *out);

/* Hints that steer collective I/O (cb_buffer_size, cb_nodes, striping_*, ...) must be the same
 * on every rank, or ranks build different plans and a collective hangs or writes wrong bytes.
 * The standard requires the same values but ranks may pass different ones (or different
 * WEFT_HINTS), so rank 0's hints win wherever hints are set collectively.
 *
 * weft_hints_adopt_rank0: `h` becomes `rank0` (rank 0's hints, as broadcast by the caller
 * along with whatever else it sends); when they differed, this rank says so in one stderr
 * line naming the first differing hint and both values.  No MPI call.
 * weft_hints_make_uniform: the same with its own broadcast; collective over `comm`. */
void weft_hints_adopt_rank0(weft_hints *h, const weft_hints *rank0, int rank, const char *path);
void weft_hints_make_uniform(weft_hints *h, MPI_Comm comm, const char *path);

#endif
