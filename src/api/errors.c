/*
 * Errors at the API boundary.  Every failure becomes an MPI error code of the right class
 * whose MPI_Error_string says what failed, where (path, offset) and why.  Codes are made with
 * MPI_Add_error_code and reused round-robin per class (the standard lets
 * MPI_Add_error_string replace a code's string), so a long run that reports many errors does
 * not exhaust the host's table of dynamic codes: a message stays readable until
 * CODES_PER_CLASS newer errors of the same class have been raised.
 */
#include "api/api.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASS_SLOTS 128
#define CODES_PER_CLASS 16

static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;
static int codes[CLASS_SLOTS][CODES_PER_CLASS];
static char messages[CLASS_SLOTS][CODES_PER_CLASS][MPI_MAX_ERROR_STRING];
static int codes_made[CLASS_SLOTS];
static int next_code[CLASS_SLOTS];

/* A registered code of class `cls` carrying `message`; falls back to the bare class. */
static int make_code(int cls, const char *message)
{
    if (cls <= MPI_SUCCESS || cls >= CLASS_SLOTS)
        return cls;
    pthread_mutex_lock(&error_lock);
    int code = cls;
    int slot = next_code[cls];
    if (slot >= codes_made[cls]) {
        int fresh;
        if (MPI_Add_error_code(cls, &fresh) == MPI_SUCCESS) {
            codes[cls][codes_made[cls]++] = fresh;
        } else {
            slot = 0; /* the host has no more dynamic codes: reuse what we have */
        }
    }
    if (slot < codes_made[cls]) {
        code = codes[cls][slot];
        char text[MPI_MAX_ERROR_STRING];
        size_t n = strlen(message);
        if (n >= sizeof text)
            n = sizeof text - 1;
        memcpy(text, message, n);
        text[n] = '\0';
        MPI_Add_error_string(code, text);
        memcpy(messages[cls][slot], text, n + 1);
        next_code[cls] = (slot + 1) % CODES_PER_CLASS;
    }
    pthread_mutex_unlock(&error_lock);
    return code;
}

int weft_error_message(int code, char *text, int *length)
{
    int found = 0;
    pthread_mutex_lock(&error_lock);
    for (int cls = 0; cls < CLASS_SLOTS && !found; cls++)
        for (int i = 0; i < codes_made[cls] && !found; i++)
            if (codes[cls][i] == code) {
                *length = (int)strlen(messages[cls][i]);
                memcpy(text, messages[cls][i], (size_t)*length + 1);
                found = 1;
            }
    pthread_mutex_unlock(&error_lock);
    return found;
}

/* ---- Error handlers -------------------------------------------------------------------- */

#define MAX_USER_HANDLERS 64
static struct {
    MPI_Errhandler handle;
    MPI_File_errhandler_function *fn;
} user_handlers[MAX_USER_HANDLERS];
static int user_handler_count;
static MPI_Errhandler default_handler; /* set on first use: MPI_ERRORS_RETURN */
static int default_handler_set;

void weft_errhandler_remember(MPI_Errhandler eh, MPI_File_errhandler_function *fn)
{
    pthread_mutex_lock(&error_lock);
    int i;
    for (i = 0; i < user_handler_count; i++)
        if (user_handlers[i].handle == eh)
            break;
    if (i == user_handler_count && user_handler_count < MAX_USER_HANDLERS)
        user_handler_count++;
    if (i < MAX_USER_HANDLERS) {
        user_handlers[i].handle = eh;
        user_handlers[i].fn = fn;
    }
    pthread_mutex_unlock(&error_lock);
}

static MPI_File_errhandler_function *user_function(MPI_Errhandler eh)
{
    MPI_File_errhandler_function *fn = NULL;
    pthread_mutex_lock(&error_lock);
    for (int i = 0; i < user_handler_count; i++)
        if (user_handlers[i].handle == eh)
            fn = user_handlers[i].fn;
    pthread_mutex_unlock(&error_lock);
    return fn;
}

static int is_abort_handler(MPI_Errhandler eh)
{
#ifdef MPI_ERRORS_ABORT
    if (eh == MPI_ERRORS_ABORT)
        return 1;
#endif
    return eh == MPI_ERRORS_ARE_FATAL;
}

int weft_errhandler_valid(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_RETURN || is_abort_handler(eh) || user_function(eh) != NULL;
}

MPI_Errhandler weft_default_file_errhandler(void)
{
    return default_handler_set ? default_handler : MPI_ERRORS_RETURN;
}

void weft_set_default_file_errhandler(MPI_Errhandler eh)
{
    default_handler = eh;
    default_handler_set = 1;
}

int weft_errhandler_invoke(MPI_Errhandler eh, MPI_File fh, MPI_Comm comm, int code)
{
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (is_abort_handler(eh)) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(code, text, &len);
        fprintf(stderr, "weft: fatal MPI-IO error (the file's error handler aborts): %s\n", text);
        fflush(stderr);
        MPI_Abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
        return code;
    }
    MPI_File_errhandler_function *fn = user_function(eh);
    if (fn) {
        MPI_File handle = fh;
        int c = code;
        fn(&handle, &c);
    }
    return code;
}

/* ---- Raising --------------------------------------------------------------------------- */

static int vraise(weft_file *f, const char *path, const char *fn, int rc, const char *fmt,
                  va_list ap)
{
    int cls = weft_err_class(rc);
    char detail[512] = "", message[1024];
    if (fmt && *fmt)
        vsnprintf(detail, sizeof detail, fmt, ap);
    int n = snprintf(message, sizeof message, "%s", fn);
    if (path)
        n += snprintf(message + n, sizeof message - (size_t)n, ": %s", path);
    if (*detail)
        n += snprintf(message + n, sizeof message - (size_t)n, ": %s", detail);
    if (rc < 0 && !weft_err_is_mpi_class(rc))
        snprintf(message + n, sizeof message - (size_t)n, ": %s", strerror(-rc));
    int code = make_code(cls, message);
    if (f)
        return weft_errhandler_invoke(f->errhandler, f->handle, f->comm, code);
    return weft_errhandler_invoke(weft_default_file_errhandler(), MPI_FILE_NULL, MPI_COMM_NULL,
                                  code);
}

int weft_raise(weft_file *f, const char *fn, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = vraise(f, f ? f->path : NULL, fn, rc, fmt, ap);
    va_end(ap);
    return code;
}

int weft_raise_path(const char *path, const char *fn, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = vraise(NULL, path, fn, rc, fmt, ap);
    va_end(ap);
    return code;
}

int weft_raise_agreed(weft_file *f, const char *fn, int local_rc, int agreed_rc,
                      const char *fmt, ...)
{
    if (agreed_rc == 0)
        return MPI_SUCCESS;
    va_list ap;
    va_start(ap, fmt);
    int code;
    if (local_rc < 0) {
        code = vraise(f, f ? f->path : NULL, fn, local_rc, fmt, ap);
    } else {
        va_end(ap);
        return weft_raise(f, fn, agreed_rc, "failed on another rank of the communicator");
    }
    va_end(ap);
    return code;
}
