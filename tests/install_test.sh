#!/bin/sh
# cmake --install gives a tree a program can build against with pkg-config and with
# find_package(weft), linking libweft.so.  Usage: install_test.sh BUILD_DIR MPICC SOURCE_DIR
set -e
build=$1 mpicc=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
flags=$(PKG_CONFIG_PATH=$(dirname "$(find "$tmp/prefix" -name weft.pc)") pkg-config --cflags --libs weft)
"$mpicc" "$src/examples/hello_io.c" $flags -o "$tmp/hello_pc"
ldd "$tmp/hello_pc" | grep -q "libweft.so" || { echo "FAIL: pkg-config build does not link libweft"; exit 1; }
mkdir "$tmp/consumer"
cat > "$tmp/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(weft REQUIRED)
add_executable(hello_cm $src/examples/hello_io.c)
target_link_libraries(hello_cm PRIVATE weft::weft)
CM
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DMPI_C_COMPILER="$mpicc" > /dev/null
cmake --build "$tmp/consumer/build" > /dev/null
ldd "$tmp/consumer/build/hello_cm" | grep -q "libweft.so" || { echo "FAIL: find_package build does not link libweft"; exit 1; }
echo "install: pkg-config and find_package(weft) consumers build and link libweft.so"
