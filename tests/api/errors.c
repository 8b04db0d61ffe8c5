/*
 * Every failure gets its MPI error class and a message that says what, where and why
 * (DESIGN.md §4).  Also: user error handlers, the default handler on MPI_FILE_NULL, and
 * collective calls that fail on every rank when one rank's arguments differ.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "helpers.h"

static int rank, nprocs;
static char path[512];

static void expect_message(int code, const char *needle)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    CHECK(strstr(text, needle) != NULL, "error string \"%s\" lacks \"%s\"", text, needle);
}

static int handler_calls, handler_class;
static MPI_File handler_file;
static void count_errors(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    MPI_Error_class(*code, &handler_class);
}

static void test_open_errors(void)
{
    MPI_File fh;
    char missing[600];
    snprintf(missing, sizeof missing, "%s.does-not-exist", path);
    int code = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_MPI_CLASS(code, MPI_ERR_NO_SUCH_FILE);
    expect_message(code, missing);
    expect_message(code, strerror(ENOENT));
    CHECK(fh == MPI_FILE_NULL, "failed open leaves MPI_FILE_NULL");
    snprintf(missing, sizeof missing, "%s.no-dir/file", path);
    CHECK_MPI_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_ERR_NO_SUCH_FILE);

    /* amode rules of the standard */
    int bad_amodes[] = {0, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                        MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL};
    for (size_t i = 0; i < sizeof bad_amodes / sizeof *bad_amodes; i++) {
        code = MPI_File_open(MPI_COMM_WORLD, path, bad_amodes[i], MPI_INFO_NULL, &fh);
        CHECK_MPI_CLASS(code, MPI_ERR_AMODE);
        expect_message(code, "amode");
    }
    CHECK_MPI_CLASS(MPI_File_open(MPI_COMM_WORLD, "", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);
    /* A directory cannot be opened for writing. */
    CHECK_MPI_CLASS(MPI_File_open(MPI_COMM_WORLD, test_dir(), MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_ERR_BAD_FILE);
    CHECK_MPI_CLASS(MPI_File_open(MPI_COMM_NULL, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_COMM);

    /* Permission denied: a file nobody may open (as root, drop to "nobody" around the call). */
    char locked[600];
    snprintf(locked, sizeof locked, "%s.locked", path);
    if (rank == 0) {
        int fd = open(locked, O_CREAT | O_WRONLY, 0000);
        CHECK(fd >= 0, "create %s", locked);
        close(fd);
        chmod(locked, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int was_root = geteuid() == 0;
    if (was_root)
        CHECK(seteuid(65534) == 0, "seteuid");
    code = MPI_File_open(MPI_COMM_WORLD, locked, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (was_root)
        CHECK(seteuid(0) == 0, "seteuid back");
    CHECK_MPI_CLASS(code, MPI_ERR_ACCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(locked);

    /* Different amodes on different ranks: every rank fails, nobody hangs. */
    if (nprocs > 1) {
        int amode = rank == 0 ? MPI_MODE_CREATE | MPI_MODE_RDWR : MPI_MODE_CREATE | MPI_MODE_WRONLY;
        CHECK_MPI_CLASS(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), MPI_ERR_NOT_SAME);
        /* One rank with an invalid amode: all ranks fail. */
        amode = rank == nprocs - 1 ? MPI_MODE_RDONLY | MPI_MODE_CREATE : MPI_MODE_CREATE | MPI_MODE_RDWR;
        code = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
        CHECK(code != MPI_SUCCESS, "open with one bad amode succeeded on rank %d", rank);
    }
}

static void test_access_errors(void)
{
    MPI_File fh;
    int buf[16] = {0};
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_MPI_CLASS(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS);
    CHECK_MPI_CLASS(MPI_File_write_at(fh, -1, buf, 1, MPI_INT, &st), MPI_ERR_ARG);
    CHECK_MPI_CLASS(MPI_File_write_at(fh, 0, buf, -1, MPI_INT, &st), MPI_ERR_COUNT);
    CHECK_MPI_CLASS(MPI_File_write_at(fh, 0, NULL, 4, MPI_INT, &st), MPI_ERR_BUFFER);
    CHECK_MPI_CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    CHECK_MPI_CLASS(MPI_File_write_at(fh, 0, buf, 1, uncommitted, &st), MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    CHECK_MPI_CLASS(MPI_File_seek(fh, -5, MPI_SEEK_SET), MPI_ERR_ARG);
    CHECK_MPI_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    CHECK_MPI_CLASS(MPI_File_set_size(fh, -1), MPI_ERR_ARG);
    /* Collective with a bad argument on one rank only: every rank gets an error. */
    int count = rank == nprocs - 1 ? -1 : 1;
    int code = MPI_File_write_at_all(fh, 0, buf, count, MPI_INT, &st);
    CHECK(code != MPI_SUCCESS, "write_at_all with a bad count on one rank succeeded on rank %d", rank);
    if (rank == nprocs - 1)
        CHECK_MPI_CLASS(code, MPI_ERR_COUNT);
    /* The same through the individual pointer (the engine's allgather is the agreement) and
     * through the ordered shared pointer (agreed before any space is claimed): the pointers
     * stay where they were on every rank. */
    MPI_Offset before = -1, after = -2;
    MPI_File_get_position(fh, &before);
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    code = MPI_File_write_all(fh, buf, 1, rank == 0 ? uncommitted : MPI_INT, &st);
    CHECK(code != MPI_SUCCESS, "write_all with an uncommitted type on rank 0 succeeded on rank %d", rank);
    if (rank == 0)
        CHECK_MPI_CLASS(code, MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    MPI_File_get_position(fh, &after);
    CHECK(before == after, "failed write_all moved the individual pointer %lld -> %lld",
          (long long)before, (long long)after);
    MPI_File_get_position_shared(fh, &before);
    code = MPI_File_write_ordered(fh, buf, count, MPI_INT, &st);
    CHECK(code != MPI_SUCCESS, "write_ordered with a bad count on one rank succeeded on rank %d", rank);
    MPI_File_get_position_shared(fh, &after);
    CHECK(before == after, "failed write_ordered moved the shared pointer %lld -> %lld",
          (long long)before, (long long)after);

    /* Views: unsupported datarep, decreasing displacements, filetype not made of etypes. */
    CHECK_MPI_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL),
                    MPI_ERR_UNSUPPORTED_DATAREP);
    int blocklens[2] = {1, 1};
    MPI_Aint displs[2] = {16, 0};
    MPI_Datatype backwards;
    MPI_Type_create_hindexed(2, blocklens, displs, MPI_INT, &backwards);
    MPI_Type_commit(&backwards);
    code = MPI_File_set_view(fh, 0, MPI_INT, backwards, "native", MPI_INFO_NULL);
    CHECK_MPI_CLASS(code, MPI_ERR_TYPE);
    expect_message(code, "monoton");
    MPI_Type_free(&backwards);
    CHECK_MPI_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_SHORT, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    CHECK_MPI_CLASS(MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    /* set_view is collective: etypes of different sizes on different ranks fail everywhere. */
    if (nprocs > 1) {
        MPI_Datatype mine = rank == 0 ? MPI_INT : MPI_DOUBLE;
        CHECK_MPI_CLASS(MPI_File_set_view(fh, 0, mine, mine, "native", MPI_INFO_NULL), MPI_ERR_NOT_SAME);
        /* One rank with an unsupported datarep: every rank returns an error. */
        int code2 = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rank == 0 ? "internal" : "native",
                                      MPI_INFO_NULL);
        CHECK(code2 != MPI_SUCCESS, "set_view with a bad datarep on rank 0 succeeded on rank %d", rank);
    }
    /* Partial etypes cannot be accessed. */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_MPI_CLASS(MPI_File_write_at(fh, 0, buf, 3, MPI_SHORT, &st), MPI_ERR_TYPE);
    CHECK_MPI(MPI_File_close(&fh));

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_File stale = fh;
    code = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st);
    CHECK_MPI_CLASS(code, MPI_ERR_READ_ONLY);
    expect_message(code, path);
    CHECK_MPI_CLASS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    CHECK_MPI(MPI_File_close(&fh));
    /* A closed handle and MPI_FILE_NULL are not files. */
    CHECK_MPI_CLASS(MPI_File_write_at(stale, 0, buf, 1, MPI_INT, &st), MPI_ERR_FILE);
    CHECK_MPI_CLASS(MPI_File_get_size(MPI_FILE_NULL, &(MPI_Offset){0}), MPI_ERR_FILE);

    /* Sequential files allow only shared-pointer access. */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    CHECK_MPI_CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_MPI(MPI_File_close(&fh));

    /* No space: /dev/full fails every write with ENOSPC. */
    if (nprocs == 1) {
        CHECK_MPI(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        code = MPI_File_write_at(fh, 0, buf, 4, MPI_INT, &st);
        CHECK_MPI_CLASS(code, MPI_ERR_NO_SPACE);
        expect_message(code, strerror(ENOSPC));
        CHECK_MPI(MPI_File_close(&fh));
    }

    CHECK_MPI_CLASS(MPI_Register_datarep("mine", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                         NULL, NULL), MPI_ERR_UNSUPPORTED_OPERATION);
}

static void test_handlers(void)
{
    MPI_Errhandler eh;
    CHECK_MPI(MPI_File_create_errhandler(count_errors, &eh));
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_Errhandler current;
    CHECK_MPI(MPI_File_get_errhandler(fh, &current));
    CHECK(current == MPI_ERRORS_RETURN, "files default to MPI_ERRORS_RETURN");
    CHECK_MPI(MPI_File_set_errhandler(fh, eh));
    int buf = 0;
    int code = MPI_File_write_at(fh, 0, &buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(code != MPI_SUCCESS && handler_calls == 1 && handler_class == MPI_ERR_READ_ONLY &&
          handler_file == fh, "user handler called %d times, class %d", handler_calls, handler_class);
    CHECK_MPI(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 2 && handler_class == MPI_ERR_IO, "call_errhandler");
    CHECK_MPI(MPI_File_close(&fh));
    /* The handler on MPI_FILE_NULL is the default for failures of open. */
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    char missing[600];
    snprintf(missing, sizeof missing, "%s.missing", path);
    handler_calls = 0;
    MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_NO_SUCH_FILE, "default handler on open");
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    test_path(path, sizeof path, "errors");
    test_open_errors();
    test_access_errors();
    test_handlers();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File_delete(path, MPI_INFO_NULL);
        printf("errors: all checks passed on %d ranks\n", nprocs);
    }
    MPI_Finalize();
    return 0;
}
