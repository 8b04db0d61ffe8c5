/* The handle table: weft_file pointers by slot; a slot's handle is (slot + 1). */
#include "api/api.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_file **table;
static size_t table_size;

MPI_File weft_handle_register(weft_file *f)
{
    pthread_mutex_lock(&table_lock);
    size_t slot = 0;
    while (slot < table_size && table[slot])
        slot++;
    if (slot == table_size) {
        size_t new_size = table_size ? 2 * table_size : 16;
        weft_file **grown = realloc(table, new_size * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&table_lock);
            return MPI_FILE_NULL;
        }
        for (size_t i = table_size; i < new_size; i++)
            grown[i] = NULL;
        table = grown;
        table_size = new_size;
    }
    table[slot] = f;
    f->handle = (MPI_File)(uintptr_t)(slot + 1);
    pthread_mutex_unlock(&table_lock);
    return f->handle;
}

void weft_handle_release(weft_file *f)
{
    pthread_mutex_lock(&table_lock);
    uintptr_t slot = (uintptr_t)f->handle - 1;
    if (slot < table_size && table[slot] == f)
        table[slot] = NULL;
    pthread_mutex_unlock(&table_lock);
}

weft_file *weft_handle_lookup(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return NULL;
    uintptr_t slot = (uintptr_t)fh - 1;
    weft_file *f = NULL;
    pthread_mutex_lock(&table_lock);
    if (slot < table_size)
        f = table[slot];
    pthread_mutex_unlock(&table_lock);
    return f;
}

weft_file *weft_handle_from_fint(MPI_Fint i)
{
    return i > 0 ? weft_handle_lookup((MPI_File)(uintptr_t)i) : NULL;
}

MPI_Fint weft_handle_to_fint(MPI_File fh)
{
    weft_file *f = weft_handle_lookup(fh);
    return f ? (MPI_Fint)(uintptr_t)fh : 0;
}

weft_file *weft_handle_find_host(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return NULL;
    weft_file *found = NULL;
    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < table_size && !found; i++)
        if (table[i] && table[i]->host == fh)
            found = table[i];
    pthread_mutex_unlock(&table_lock);
    return found;
}
