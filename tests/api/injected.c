/*
 * Operating-system failures get their MPI error class and the strerror text (DESIGN.md §4):
 * run with WEFT_TEST_INJECT=<ERRNO>@0, where every write of rank 0 fails with that errno.
 * Usage: api_injected ERRNO_NAME
 */
#include <errno.h>

#include "helpers.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2, "usage: api_injected ENOSPC|EDQUOT|EIO");
    struct { const char *name; int err, cls; } cases[] = {
        {"ENOSPC", ENOSPC, MPI_ERR_NO_SPACE}, {"EDQUOT", EDQUOT, MPI_ERR_QUOTA}, {"EIO", EIO, MPI_ERR_IO}};
    int which = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(argv[1], cases[i].name) == 0)
            which = i;
    CHECK(which >= 0, "unknown errno %s", argv[1]);
    char path[512];
    test_path(path, sizeof path, "injected");
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    int data[64] = {0};
    int code = MPI_File_write_at(fh, 128, data, 64, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_MPI_CLASS(code, cases[which].cls);
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, text, &len);
    CHECK(strstr(text, strerror(cases[which].err)) && strstr(text, path) && strstr(text, "offset 128"),
          "message lacks why/where: %s", text);
    code = MPI_File_write_at_all(fh, 0, data, 64, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_MPI_CLASS(code, cases[which].cls);
    CHECK_MPI(MPI_File_close(&fh));
    printf("injected %s: class and message right (%s)\n", argv[1], text);
    MPI_Finalize();
    return 0;
}
