/*
 * The hint table: parsing and validation of every kind, WEFT_HINTS defaults, malformed values
 * ignored with the previous value kept, MPI_File_get_info listing every hint with the value in
 * effect, and docs/HINTS.md holding exactly the table the code defines.
 * Usage: unit_hints <path of docs/HINTS.md> <scratch dir>
 */
#include "common/hints.h"

#include "helpers.h"

static const char *text_of(const weft_hints *h, const char *name)
{
    for (int i = 0; i < WEFT_HINT_COUNT; i++)
        if (strcmp(weft_hint_defs[i].name, name) == 0)
            return h->text[i];
    return NULL;
}

static void test_parsing(void)
{
    weft_hints h;
    char why[256];
    unsetenv("WEFT_HINTS");
    weft_hints_init(&h);
    for (int i = 0; i < WEFT_HINT_COUNT; i++) {
        weft_hints d;
        CHECK(weft_hints_set(&d, weft_hint_defs[i].name, weft_hint_defs[i].default_value, why,
                             sizeof why) == 0, "default of %s does not parse: %s",
              weft_hint_defs[i].name, why);
    }
    CHECK(h.value[WEFT_HINT_CB_BUFFER_SIZE] == 16777216, "cb_buffer_size default");
    CHECK(weft_hints_set(&h, "cb_buffer_size", "4m", why, sizeof why) == 0, "4m");
    CHECK(h.value[WEFT_HINT_CB_BUFFER_SIZE] == 4 << 20, "4m = %lld", h.value[WEFT_HINT_CB_BUFFER_SIZE]);
    CHECK(strcmp(text_of(&h, "cb_buffer_size"), "4194304") == 0, "canonical text");
    const char *bad_sizes[] = {"abc", "-5", "12q", "", "99999999999999999999", "1k2", "2"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; i++) {
        why[0] = '\0';
        CHECK(weft_hints_set(&h, "cb_buffer_size", bad_sizes[i], why, sizeof why) == -1,
              "cb_buffer_size=%s accepted", bad_sizes[i]);
        CHECK(strstr(why, "cb_buffer_size") != NULL, "message names the hint: %s", why);
        CHECK(h.value[WEFT_HINT_CB_BUFFER_SIZE] == 4 << 20, "old value kept after %s", bad_sizes[i]);
    }
    CHECK(weft_hints_set(&h, "romio_cb_write", "maybe", why, sizeof why) == -1, "enum");
    CHECK(strstr(why, "automatic|enable|disable") != NULL, "enum message lists choices: %s", why);
    CHECK(weft_hints_set(&h, "romio_cb_write", "DISABLE", why, sizeof why) == 0, "enum case");
    CHECK(h.value[WEFT_HINT_ROMIO_CB_WRITE] == WEFT_CB_DISABLE, "enum value");
    CHECK(weft_hints_set(&h, "weft_passthrough", "perhaps", why, sizeof why) == -1, "bool");
    CHECK(weft_hints_set(&h, "cb_nodes", "-1", why, sizeof why) == -1, "int range");
    CHECK(weft_hints_set(&h, "not_a_weft_hint", "1", why, sizeof why) == 1, "unknown key ignored");

    setenv("WEFT_HINTS", "cb_nodes=3;romio_ds_read=disable;bogus;cb_buffer_size=zz", 1);
    weft_hints_init(&h);
    CHECK(h.value[WEFT_HINT_CB_NODES] == 3, "WEFT_HINTS cb_nodes");
    CHECK(h.value[WEFT_HINT_ROMIO_DS_READ] == WEFT_CB_DISABLE, "WEFT_HINTS romio_ds_read");
    CHECK(h.value[WEFT_HINT_CB_BUFFER_SIZE] == 16777216, "malformed env value ignored");
    unsetenv("WEFT_HINTS");
}

/* weft_overlap's values index the engine's schedule table (src/coll/schedule.c): each name
 * parses to its enum value and prints back. */
static void test_overlap_names(void)
{
    static const struct { const char *name; int value; } names[] = {
        {"none", WEFT_OVERLAP_NONE}, {"comm", WEFT_OVERLAP_COMM}, {"write", WEFT_OVERLAP_WRITE},
        {"write-comm", WEFT_OVERLAP_WRITE_COMM}, {"write-comm-2", WEFT_OVERLAP_WRITE_COMM_2},
        {"auto", WEFT_OVERLAP_AUTO}};
    CHECK(sizeof names / sizeof names[0] == WEFT_OVERLAP_COUNT, "every schedule named");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        weft_hints h;
        char why[256], text[64];
        weft_hints_init(&h);
        CHECK(weft_hints_set(&h, "weft_overlap", names[i].name, why, sizeof why) == 0, "%s: %s",
              names[i].name, why);
        CHECK(h.value[WEFT_HINT_WEFT_OVERLAP] == names[i].value, "%s -> %lld", names[i].name,
              h.value[WEFT_HINT_WEFT_OVERLAP]);
        weft_hint_choice_text(WEFT_HINT_WEFT_OVERLAP, names[i].value, text, sizeof text);
        CHECK(strcmp(text, names[i].name) == 0, "%d prints %s", names[i].value, text);
    }
}

static void test_get_info(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/weft-unit-hints-%ld", dir, (long)getpid());
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "abc");   /* malformed: warned, default kept */
    MPI_Info_set(info, "ind_rd_buffer_size", "1m");
    MPI_Info_set(info, "some_other_library_hint", "x");
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            info, &fh));
    MPI_Info_free(&info);
    MPI_Info used;
    CHECK_MPI(MPI_File_get_info(fh, &used));
    int nkeys;
    MPI_Info_get_nkeys(used, &nkeys);
    CHECK(nkeys == WEFT_HINT_COUNT, "get_info has %d keys, table has %d", nkeys, WEFT_HINT_COUNT);
    for (int i = 0; i < WEFT_HINT_COUNT; i++) {
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get(used, weft_hint_defs[i].name, MPI_MAX_INFO_VAL, value, &flag);
        CHECK(flag, "get_info lacks %s", weft_hint_defs[i].name);
    }
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(strcmp(value, "16777216") == 0, "cb_buffer_size in effect %s", value);
    MPI_Info_get(used, "ind_rd_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(strcmp(value, "1048576") == 0, "ind_rd_buffer_size in effect %s", value);
    MPI_Info_free(&used);
    /* set_info changes what get_info reports. */
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_read", "enable");
    CHECK_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    CHECK_MPI(MPI_File_get_info(fh, &used));
    MPI_Info_get(used, "romio_cb_read", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "enable") == 0, "romio_cb_read after set_info: %s", value);
    MPI_Info_free(&used);
    CHECK_MPI(MPI_File_close(&fh));
}

static void test_docs(const char *doc_path)
{
    char *generated = NULL;
    size_t generated_size = 0;
    FILE *mem = open_memstream(&generated, &generated_size);
    weft_hints_write_markdown(mem);
    fclose(mem);
    FILE *doc = fopen(doc_path, "r");
    CHECK(doc != NULL, "cannot open %s", doc_path);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, doc);
    text[n] = '\0';
    fclose(doc);
    CHECK(strstr(text, generated) != NULL,
          "%s does not contain the hint table the code defines; regenerate it with "
          "`unit_hints --markdown`:\n%s", doc_path, generated);
    free(generated);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--markdown") == 0) {
        weft_hints_write_markdown(stdout);
        return 0;
    }
    CHECK(argc == 3, "usage: unit_hints DOCS/HINTS.md SCRATCH_DIR | --markdown");
    MPI_Init(&argc, &argv);
    test_parsing();
    test_overlap_names();
    test_get_info(argv[2]);
    test_docs(argv[1]);
    printf("hints: all checks passed\n");
    MPI_Finalize();
    return 0;
}
