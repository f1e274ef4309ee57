# SPDX-License-Identifier: Apache-2.0
# package.secp256k1_recovery: cmake/CheckSecp256k1Recovery.cmake lets a libsecp256k1 with the
# recovery module through (Debian's) and stops the configure step, naming the module, for one
# built without it (upstream's default CMake build): here a libsecp256k1.pc naming a static
# libsecp256k1.a that has the library's other entry points but not secp256k1_ecdsa_recover (on a
# system whose headers lack secp256k1_recovery.h the check fails at compiling instead).
# Arguments: -DSOURCE_DIR=<tree> -DWORK_DIR=<scratch>
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/project ${WORK_DIR}/without/pkgconfig)
file(WRITE ${WORK_DIR}/project/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(secp256k1_check C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(secp256k1 REQUIRED IMPORTED_TARGET libsecp256k1)
include(${SOURCE_DIR}/cmake/CheckSecp256k1Recovery.cmake)
")

function(configure name expect_ok)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/project -B ${WORK_DIR}/build-${name}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: the check refused a libsecp256k1 with the recovery module:\n${out}\n${err}")
  endif()
  if(NOT expect_ok)
    if(rc EQUAL 0)
      message(FATAL_ERROR "${name}: the check let a libsecp256k1 without the recovery module through")
    endif()
    string(REGEX REPLACE "[ \n]+" " " flat "${err}")
    if(NOT flat MATCHES "lacks its recovery module" OR NOT flat MATCHES "SECP256K1_ENABLE_MODULE_RECOVERY")
      message(FATAL_ERROR "${name}: refused without naming the recovery module:\n${err}")
    endif()
  endif()
  message(STATUS "${name}: as expected")
endfunction()

configure(debian TRUE)

find_program(CC NAMES cc gcc REQUIRED)
find_program(AR ar REQUIRED)
file(MAKE_DIRECTORY ${WORK_DIR}/without/lib)
file(WRITE ${WORK_DIR}/without/secp256k1.c "/* secp256k1 without secp256k1_ecdsa_recover */
void* secp256k1_context_create(unsigned int flags) { (void)flags; return 0; }
")
execute_process(COMMAND ${CC} -c -o ${WORK_DIR}/without/secp256k1.o ${WORK_DIR}/without/secp256k1.c
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${AR} rcs ${WORK_DIR}/without/lib/libsecp256k1.a ${WORK_DIR}/without/secp256k1.o
  COMMAND_ERROR_IS_FATAL ANY)
file(WRITE ${WORK_DIR}/without/pkgconfig/libsecp256k1.pc "Name: libsecp256k1
Description: secp256k1 without the recovery module
Version: 0.2.0
Cflags:
Libs: -L${WORK_DIR}/without/lib -lsecp256k1
")
set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/without/pkgconfig)
configure(without FALSE)
