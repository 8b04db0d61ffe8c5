# Helpers for weft's tests.  Every MPI test runs under `timeout` as well as ctest's own
# TIMEOUT, so a collective that hangs fails the test instead of the CI run.
#
# weft_add_mpi_test(NAME <name> TARGET <exe> NP <n>... [ARGS <arg>...] [ENV <k=v>...]
#                   [PRELOAD] [TIMEOUT <seconds>] [LABELS <label>...] [EXPECT <regex>]
#                   [HINTS <key=value>...])
#   Adds one ctest per rank count, named <name>.np<n>.  PRELOAD runs the program with
#   LD_PRELOAD=libweft.so (for programs that are not linked with weft).
#   Exit code 77 means "skipped".  EXPECT also requires the output to match the regex.
#   HINTS become WEFT_HINTS="k=v;k=v" (semicolons in ENV values do not survive CMake lists).

# Scratch directory for test files (every test's WEFT_TEST_DIR); tmpfs keeps the suite fast.
if(NOT WEFT_TEST_DIR)
  if(EXISTS /dev/shm)
    set(WEFT_TEST_DIR /dev/shm)
  else()
    set(WEFT_TEST_DIR /tmp)
  endif()
endif()

if(WEFT_MPI_FLAVOUR STREQUAL "openmpi")
  # Oversubscription is expected (2 cores, 4 ranks); yielding keeps busy-polling ranks from
  # starving each other.
  set(WEFT_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1
      --mca btl self,vader)
else()
  set(WEFT_MPIEXEC_FLAGS)
endif()

function(weft_mpiexec_preload_flags out)
  if(WEFT_MPI_FLAVOUR STREQUAL "openmpi")
    set(${out} -x LD_PRELOAD=$<TARGET_FILE:weft> PARENT_SCOPE)
  else()
    set(${out} -genv LD_PRELOAD $<TARGET_FILE:weft> PARENT_SCOPE)
  endif()
endfunction()

function(weft_add_mpi_test)
  cmake_parse_arguments(T "PRELOAD" "NAME;TARGET;TIMEOUT;EXPECT" "NP;ARGS;ENV;LABELS;HINTS" ${ARGN})
  if(T_HINTS)
    list(JOIN T_HINTS "\\;" _hints)
    list(APPEND T_ENV "WEFT_HINTS=${_hints}")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  math(EXPR ctest_timeout "${T_TIMEOUT} + 30")
  set(preload)
  if(T_PRELOAD)
    weft_mpiexec_preload_flags(preload)
  endif()
  set(expect)
  if(T_EXPECT)
    set(expect sh ${PROJECT_SOURCE_DIR}/tests/expect_output.sh "${T_EXPECT}")
  endif()
  foreach(np IN LISTS T_NP)
    add_test(NAME ${T_NAME}.np${np}
      COMMAND ${expect} timeout -k 10 ${T_TIMEOUT} ${MPIEXEC_EXECUTABLE} ${WEFT_MPIEXEC_FLAGS} ${preload}
              -n ${np} $<TARGET_FILE:${T_TARGET}> ${T_ARGS})
    set_tests_properties(${T_NAME}.np${np} PROPERTIES
      TIMEOUT ${ctest_timeout} SKIP_RETURN_CODE 77
      ENVIRONMENT "WEFT_TEST_DIR=${WEFT_TEST_DIR};${T_ENV}"
      LABELS "${WEFT_MPI_FLAVOUR};np${np};${T_LABELS}")
  endforeach()
endfunction()

# weft_add_test_program(<name> <sources>... [INTERNAL])
#   A test program linked with libweft.so (the way users link), or with the internal static
#   archive (INTERNAL) when it calls weft's internal functions.
function(weft_add_test_program name)
  cmake_parse_arguments(P "INTERNAL;NOWEFT" "" "" ${ARGN})
  add_executable(${name} ${P_UNPARSED_ARGUMENTS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src
                             ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wno-unused-parameter -Wno-unused-function)
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  if(P_INTERNAL)
    target_link_libraries(${name} PRIVATE weft_internal)
  elseif(P_NOWEFT)
    target_link_libraries(${name} PRIVATE MPI::MPI_C)
  else()
    # weft first, so its MPI_File_* win over the host's.
    target_link_libraries(${name} PRIVATE weft MPI::MPI_C)
  endif()
endfunction()
