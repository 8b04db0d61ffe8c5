#!/usr/bin/env bash
# MPICH's own MPI-IO test programs (test/mpi/io and ROMIO's src/mpi/romio/test), built from an
# MPICH source tree you provide (not shipped with weft, not needed by CI: no network there),
# run through the host's MPI-IO and through weft (LD_PRELOAD), side by side.
#
#   MPICH_SRC=/path/to/mpich bash tests/external/mpich-io-tests.sh [mpich|openmpi]
#
# MPICH_SRC may be a source checkout or a bare git repository (read with git show).  Prints one
# line per program: host and weft verdicts; exits 1 when a program passes through the host and
# fails through weft.  A program passes when it exits 0 and prints "No Errors".
set -uo pipefail
flavour=${1:-mpich}
here=$(cd "$(dirname "$0")/../.." && pwd)
lib=${WEFT_LIB:-$here/build/$flavour/libweft.so}
src=${MPICH_SRC:?set MPICH_SRC to an MPICH source tree or git repository}
work=${WORK:-/tmp/weft-mpich-io-tests}
dir=${TEST_DIR:-/dev/shm}/weft-mpich-io-$$
case $flavour in
  mpich) cc=mpicc.mpich; run=(mpirun.mpich); preload() { echo -genv LD_PRELOAD "$lib"; } ;;
  openmpi) cc=mpicc.openmpi; run=(mpirun.openmpi --oversubscribe)
           export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
           preload() { echo -x LD_PRELOAD="$lib"; } ;;
  *) echo "flavour: mpich or openmpi"; exit 2 ;;
esac
[[ -f $lib ]] || { echo "no $lib: build weft first"; exit 2; }

# ---- fetch the sources out of the tree (a checkout or a git repository) ----------------------
show() { # path -> stdout
  if [[ -f $src/$1 ]]; then cat "$src/$1"; else git -C "$src" show "HEAD:$1"; fi
}
list() { # directory -> file names
  if [[ -d $src/$1 ]]; then ls "$src/$1"; else git -C "$src" ls-tree --name-only HEAD "$1/" | xargs -n1 basename; fi
}
rm -rf "$work" && mkdir -p "$work"/{io,romio,include,bin}
for f in $(list test/mpi/io | grep '\.c$'); do show "test/mpi/io/$f" > "$work/io/$f"; done
for f in $(list src/mpi/romio/test | grep '\.c$'); do show "src/mpi/romio/test/$f" > "$work/romio/$f"; done
show src/mpi/romio/test/test_hintfile > "$work/romio/test_hintfile"
for f in mpitest.h mpithreadtest.h mtest_common.h; do show "test/mpi/include/$f" > "$work/include/$f"; done
for f in mtest.c mtest_common.c mtest_single.c; do show "test/mpi/util/$f" > "$work/include/$f"; done
show test/mpi/io/testlist.in > "$work/io/testlist"
# What configure would generate: nothing MPICH-specific is needed by these programs.
: > "$work/include/mtest_mpix.h"
printf '#define HAVE_STDLIB_H 1\n#define HAVE_STRING_H 1\n#define HAVE_UNISTD_H 1\n#define HAVE_SYS_TIME_H 1\n#define HAVE_SYS_RESOURCE_H 1\n#define HAVE_GETRUSAGE 1\n#define HAVE_STDARG_H 1\n#define USE_STRICT_MPI 1\n#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX\n' > "$work/include/mpitestconf.h"
echo '#define ROMIO_UFS 1' > "$work/romio/romioconf.h"

# ---- build ---------------------------------------------------------------------------------
cd "$work"
for u in mtest mtest_common mtest_single; do
  $cc -c -O1 -w -Iinclude include/$u.c -o bin/$u.o || exit 1
done
for f in io/*.c; do
  $cc -O1 -w -Iinclude "$f" bin/mtest.o bin/mtest_common.o bin/mtest_single.o -o bin/$(basename "$f" .c) 2> /dev/null \
    || echo "not built: $f"
done
for f in romio/*.c; do
  $cc -O1 -w -Iromio "$f" -o bin/romio_$(basename "$f" .c) 2> /dev/null || echo "not built: $f"
done

# ---- run -----------------------------------------------------------------------------------
verdict() { # mode np program args... -> PASS | FAIL(...)
  local mode=$1 np=$2 prog=$3; shift 3
  local d=$dir/$mode; mkdir -p "$d"
  local extra=(); [[ $mode == weft ]] && extra=($(preload))
  local out rc
  out=$(cd "$d" && timeout 120 "${run[@]}" "${extra[@]}" -n "$np" "$work/bin/$prog" "$@" 2>&1 < /dev/null); rc=$?
  if [[ $rc -eq 0 ]] && grep -qi "no errors" <<< "$out"; then echo PASS
  else echo "FAIL(rc $rc: $(grep -v '^$' <<< "$out" | grep -vi 'no errors' | head -2 | tr '\n' ' ' | cut -c1-160))"; fi
}
regressions=0
one() { # np program args...
  [[ -x $work/bin/$2 ]] || return
  local h w
  h=$(verdict host "$@"); w=$(verdict weft "$@")
  printf '%-28s np%-2s host %-4s weft %s\n' "$2" "$1" "${h%%(*}" "$w"
  [[ $h == PASS && $w != PASS ]] && regressions=$((regressions + 1))
}
while read -r name np rest; do
  [[ -z ${name:-} || $name == \#* || ${rest:-} == *large-count* ]] && continue
  args=(); [[ ${rest:-} == *arg=* ]] && args=(${rest#*arg=})
  (( np > 4 )) && np=4
  one "$np" "$name" "${args[@]}"
done < io/testlist
f=$dir/romio.test
for t in "4 simple" "4 async" "4 async-multiple" "4 atomicity" "4 coll_test" "4 excl" \
         "4 file_info" "2 i_noncontig" "2 noncontig" "2 noncontig_coll" "4 noncontig_coll2" \
         "4 aggregation2" "4 hindexed" "4 split_coll" "4 psimple" "1 error" "1 status" \
         "2 types_with_zeros" "4 darray_read" "2 fstype_prefix" "4 shared_fp" "4 ordered_fp" \
         "4 creat_excl" "4 external32"; do
  set -- $t
  one "$1" "romio_$2" -fname "$f"
done
one 4 romio_aggregation1 -h -f "$f"
one 2 romio_big_extents "$f"
ROMIO_HINTS=$work/romio/test_hintfile one 1 romio_syshints -fname "$work/romio/test_hintfile"
rm -rf "$dir"
echo "mpich-io-tests ($flavour): $regressions program(s) pass through the host and fail through weft"
(( regressions == 0 ))
