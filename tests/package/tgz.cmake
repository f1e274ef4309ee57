# SPDX-License-Identifier: Apache-2.0
# package.tgz: runs cpack -G TGZ on BUILD_DIR, unpacks the .tar.gz into WORK_DIR/tgz, checks it is
# relocatable (one top directory) and holds the pkg-config modules with the prefix it was made
# with, and builds and runs the C consumer against the unpacked files only (CMAKE_PREFIX_PATH).
# The tree is packaged as it is built, as package.consumer installs it: with a Makefile generator
# cpack would first build the `preinstall` target, i.e. `all`, so cpack is told the tree's
# generator is one without that step (CPACK_CMAKE_GENERATOR serves nothing else when installing a
# CMake project). The Debian packages are package.debs' (debs.cmake).
file(REMOVE_RECURSE ${WORK_DIR})
set(cpack_args --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/out
    -D CPACK_CMAKE_GENERATOR=Ninja)
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

# --- .tar.gz: relocatable, one top directory --------------------------------------------------
run(${CPACK} -G TGZ ${cpack_args})
file(GLOB tgzs ${WORK_DIR}/out/enact-*.tar.gz)
list(LENGTH tgzs count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one enact-*.tar.gz, found: ${tgzs}")
endif()
file(ARCHIVE_EXTRACT INPUT ${tgzs} DESTINATION ${WORK_DIR}/tgz)
file(GLOB top LIST_DIRECTORIES true ${WORK_DIR}/tgz/*)
if(NOT EXISTS ${top}/include/enact.h OR NOT EXISTS ${top}/bin/enact)
  message(FATAL_ERROR "unexpected .tar.gz layout under ${WORK_DIR}/tgz: ${top}")
endif()
# The pkg-config modules, their prefix relative to their own directory (relocatable).
file(GLOB pcs ${top}/lib*/pkgconfig/enact-c.pc ${top}/lib*/pkgconfig/enact.pc)
list(LENGTH pcs count)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "expected enact.pc and enact-c.pc in the .tar.gz, found: ${pcs}")
endif()
foreach(pc IN LISTS pcs)
  file(READ ${pc} text)
  if(NOT text MATCHES "\nprefix=\\\${pcfiledir}/\\.\\./\\.\\.\n" OR NOT text MATCHES "\nLibs: -L\\\${libdir} -lenact")
    message(FATAL_ERROR "${pc}:\n${text}")
  endif()
endforeach()
set(build ${WORK_DIR}/tgz-c)
run(${CMAKE_COMMAND} -S ${C_CONSUMER} -B ${build} -DCMAKE_PREFIX_PATH=${top}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${build})
run(${build}/c_consumer)
expect("${last_output}" "consumer ok" "c_consumer against the .tar.gz")
message(STATUS "tgz c_consumer: ${last_output}")
