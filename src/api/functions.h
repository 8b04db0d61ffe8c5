/*
 * Every MPI-IO function weft defines, as an X-macro list: X(name) for the MPI_<name> /
 * PMPI_<name> pair.  Used for the host MPI's table of entry points (passthrough) and by the
 * export test.  WEFT_LARGE_COUNT_FUNCTIONS lists the MPI-4 _c variants, defined only where
 * the host header declares them.
 */
#ifndef WEFT_API_FUNCTIONS_H
#define WEFT_API_FUNCTIONS_H

#define WEFT_FILE_FUNCTIONS(X) \
    X(File_open) X(File_close) X(File_delete) X(File_set_size) X(File_preallocate) \
    X(File_get_size) X(File_get_group) X(File_get_amode) X(File_set_info) X(File_get_info) \
    X(File_set_view) X(File_get_view) \
    X(File_read_at) X(File_read_at_all) X(File_write_at) X(File_write_at_all) \
    X(File_iread_at) X(File_iwrite_at) X(File_iread_at_all) X(File_iwrite_at_all) \
    X(File_read) X(File_read_all) X(File_write) X(File_write_all) \
    X(File_iread) X(File_iwrite) X(File_iread_all) X(File_iwrite_all) \
    X(File_seek) X(File_get_position) X(File_get_byte_offset) \
    X(File_read_shared) X(File_write_shared) X(File_iread_shared) X(File_iwrite_shared) \
    X(File_read_ordered) X(File_write_ordered) X(File_seek_shared) X(File_get_position_shared) \
    X(File_read_at_all_begin) X(File_read_at_all_end) \
    X(File_write_at_all_begin) X(File_write_at_all_end) \
    X(File_read_all_begin) X(File_read_all_end) X(File_write_all_begin) X(File_write_all_end) \
    X(File_read_ordered_begin) X(File_read_ordered_end) \
    X(File_write_ordered_begin) X(File_write_ordered_end) \
    X(File_get_type_extent) X(Register_datarep) \
    X(File_set_atomicity) X(File_get_atomicity) X(File_sync) \
    X(File_create_errhandler) X(File_set_errhandler) X(File_get_errhandler) \
    X(File_call_errhandler) X(File_c2f) X(File_f2c)

#define WEFT_LARGE_COUNT_FUNCTIONS(X) \
    X(File_read_at_c) X(File_read_at_all_c) X(File_write_at_c) X(File_write_at_all_c) \
    X(File_iread_at_c) X(File_iwrite_at_c) X(File_iread_at_all_c) X(File_iwrite_at_all_c) \
    X(File_read_c) X(File_read_all_c) X(File_write_c) X(File_write_all_c) \
    X(File_iread_c) X(File_iwrite_c) X(File_iread_all_c) X(File_iwrite_all_c) \
    X(File_read_shared_c) X(File_write_shared_c) X(File_iread_shared_c) \
    X(File_iwrite_shared_c) X(File_read_ordered_c) X(File_write_ordered_c) \
    X(File_read_at_all_begin_c) X(File_write_at_all_begin_c) X(File_read_all_begin_c) \
    X(File_write_all_begin_c) X(File_read_ordered_begin_c) X(File_write_ordered_begin_c) \
    X(File_get_type_extent_c) X(Register_datarep_c)

#endif
