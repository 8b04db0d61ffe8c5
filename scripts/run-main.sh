#!/usr/bin/env bash
# The main job: set up (install, build both flavours), run the demo — an unmodified MPI-IO
# program through weft under both MPIs — then the side-by-side benchmark's quick suite on
# /dev/shm and a disk directory.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo
echo "==== demo: examples/hello_io (built against plain MPI) run with LD_PRELOAD=libweft.so ===="
for flavour in openmpi mpich; do
  lib="$PWD/build/$flavour/libweft.so"
  exe="$PWD/build/$flavour/examples/hello_io"
  file="/dev/shm/weft-demo-$$.dat"
  if [[ $flavour == openmpi ]]; then
    launch=(mpirun.openmpi --oversubscribe -x LD_PRELOAD="$lib" -x WEFT_STATS=1 -n 2)
  else
    launch=(mpirun.mpich -genv LD_PRELOAD "$lib" -genv WEFT_STATS 1 -n 2)
  fi
  echo "-- $flavour: ${launch[*]} $exe $file 16"
  timeout 120 "${launch[@]}" "$exe" "$file" 16
done

disk_dir=${WEFT_BENCH_DISK_DIR:-/var/tmp/weft-bench}
mkdir -p "$disk_dir"
echo
echo "==== benchmark: ./weft bench --suite quick --dir /dev/shm $disk_dir ===="
./weft bench --suite quick --dir /dev/shm "$disk_dir"
