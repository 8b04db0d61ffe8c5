#!/bin/sh
# libweft.so exports exactly the MPI-IO functions (and MPI_Error_string), nothing internal.
# The expected list is checked against the MPI-3.1 chapter 13 names written out below, so a
# function dropped from the build's own list is caught too.
set -eu
lib=$1 lister=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$lister" | sort > "$tmp/expected"
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" || $2 == "i" {print $3}' \
  | grep -v '^_' | sort > "$tmp/exported"
if ! diff -u "$tmp/expected" "$tmp/exported"; then
  echo "FAIL: exported symbols differ from the expected list (- expected, + exported)"
  exit 1
fi
for name in open close delete set_size preallocate get_size get_group get_amode set_info \
  get_info set_view get_view read_at read_at_all write_at write_at_all iread_at iwrite_at \
  iread_at_all iwrite_at_all read read_all write write_all iread iwrite iread_all iwrite_all \
  seek get_position get_byte_offset read_shared write_shared iread_shared iwrite_shared \
  read_ordered write_ordered seek_shared get_position_shared read_at_all_begin \
  read_at_all_end write_at_all_begin write_at_all_end read_all_begin read_all_end \
  write_all_begin write_all_end read_ordered_begin read_ordered_end write_ordered_begin \
  write_ordered_end get_type_extent set_atomicity get_atomicity sync create_errhandler \
  set_errhandler get_errhandler call_errhandler c2f f2c; do
  for prefix in MPI_File_ PMPI_File_; do
    grep -qx "$prefix$name" "$tmp/exported" || { echo "FAIL: $prefix$name not exported"; exit 1; }
  done
done
grep -qx MPI_Register_datarep "$tmp/exported" || { echo "FAIL: MPI_Register_datarep missing"; exit 1; }
echo "exports: $(wc -l < "$tmp/exported") symbols, all MPI-3.1 chapter 13 functions present"
