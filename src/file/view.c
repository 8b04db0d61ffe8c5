#include "file/file.h"

#include <string.h>

static int is_named(MPI_Datatype type)
{
    int nints, naddrs, ntypes, combiner;
    MPI_Type_get_envelope(type, &nints, &naddrs, &ntypes, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

MPI_Datatype weft_view_keep_type(MPI_Datatype type)
{
    MPI_Datatype kept = type;
    if (!is_named(type))
        MPI_Type_dup(type, &kept);
    return kept;
}

void weft_view_drop_type(MPI_Datatype *type)
{
    if (*type != MPI_DATATYPE_NULL && !is_named(*type))
        MPI_Type_free(type);
    *type = MPI_DATATYPE_NULL;
}

void weft_view_init_default(weft_view *v)
{
    memset(v, 0, sizeof *v);
    v->disp = 0;
    v->etype = MPI_BYTE;
    v->filetype = MPI_BYTE;
    weft_dtype_get(MPI_BYTE, &v->etype_t);
    v->filetype_t = v->etype_t;
    v->etype_size = 1;
    strcpy(v->datarep, "native");
}

void weft_view_release(weft_view *v)
{
    weft_view_drop_type(&v->etype);
    weft_view_drop_type(&v->filetype);
    v->etype_t = v->filetype_t = NULL;
}

MPI_Offset weft_view_byte_offset(const weft_view *v, MPI_Count position)
{
    weft_cursor c;
    weft_cursor_init(&c, v->filetype_t, -1, v->disp);
    weft_cursor_seek(&c, position);
    MPI_Offset offset;
    MPI_Count length;
    if (!weft_cursor_peek(&c, &offset, &length, 0))
        return v->disp; /* a filetype without data: every position maps to the start */
    return offset;
}

MPI_Count weft_layout_position_at(const weft_dtype *filetype, MPI_Offset disp, MPI_Offset offset)
{
    if (offset <= disp)
        return 0;
    weft_cursor c;
    weft_cursor_init(&c, filetype, -1, disp);
    weft_cursor_seek_extent(&c, offset - disp);
    return weft_cursor_tell(&c);
}

MPI_Count weft_view_position_at(const weft_view *v, MPI_Offset offset)
{
    return weft_layout_position_at(v->filetype_t, v->disp, offset);
}
