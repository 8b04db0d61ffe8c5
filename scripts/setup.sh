#!/usr/bin/env bash
# Install what weft needs on Debian 12 (only what is missing), then configure and build both
# flavours: build/openmpi and build/mpich.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config
          libopenmpi-dev openmpi-bin libmpich-dev mpich
          liburing-dev fio
          python3 python3-matplotlib python3-pytest)
if [[ -f scripts/client-packages.txt ]]; then
  while read -r pkg; do
    [[ -n "$pkg" && "$pkg" != \#* ]] && packages+=("$pkg")
  done < scripts/client-packages.txt
fi

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" > /tmp/weft-apt.log 2>&1 || { tail -30 /tmp/weft-apt.log; exit 1; }
fi

for flavour in openmpi mpich; do
  echo "setup: building weft against $flavour (build/$flavour)"
  cmake --preset "$flavour" > "build-$flavour-configure.log" 2>&1 \
    || { cat "build-$flavour-configure.log"; exit 1; }
  rm -f "build-$flavour-configure.log"
  cmake --build --preset "$flavour" 2>&1 | grep -E 'error|warning|Error' || true
  test -f "build/$flavour/libweft.so" || { echo "setup: build/$flavour/libweft.so was not built"; exit 1; }
done
