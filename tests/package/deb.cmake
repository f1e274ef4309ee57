# SPDX-License-Identifier: Apache-2.0
# Runs cpack (DEB and TGZ) on BUILD_DIR, unpacks the .deb with `dpkg -x` into WORK_DIR/root and
# the .tar.gz into WORK_DIR/tgz, checks the package's control fields and contents, and builds and
# runs the consumers against the unpacked files only (CMAKE_PREFIX_PATH). The tree is packaged as it
# is built, as package.consumer installs it: with a Makefile generator cpack would first build the
# `preinstall` target, i.e. `all`, so cpack is told the tree's generator is one without that step
# (CPACK_CMAKE_GENERATOR serves nothing else when installing a CMake project).
file(REMOVE_RECURSE ${WORK_DIR})
set(cpack_args --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/out
    -D CPACK_CMAKE_GENERATOR=Ninja)
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
function(expect text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: no match for '${pattern}' in:\n${text}")
  endif()
endfunction()

# --- Debian package ---------------------------------------------------------------------------
run(${CPACK} -G DEB ${cpack_args})
file(GLOB debs ${WORK_DIR}/out/enact_*.deb)
list(LENGTH debs count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one enact_*.deb, found: ${debs}")
endif()
run(${DPKG_DEB} --field ${debs} Package Version Architecture Depends)
set(control "${last_output}")
expect("${control}" "Package: enact\n" "control")
# Depends is computed by dpkg-shlibdeps from what the binaries link: each library must be there.
foreach(lib libc6 libstdc\\+\\+6 libssl3 libsecp256k1-1 libboost-json1\\.81\\.0 libcpp-httplib0\\.11)
  expect("${control}" "Depends: [^\n]*${lib}" "Depends (${lib})")
endforeach()
if(WITH_SERVER)
  foreach(lib libsqlite3-0 libpq5 libpqxx-6\\.4 libmozjs-102-0 libtomlplusplus3 libseccomp2)
    expect("${control}" "Depends: [^\n]*${lib}" "Depends (server: ${lib})")
  endforeach()
endif()
run(${DPKG_DEB} --contents ${debs})
set(contents "${last_output}")
file(WRITE ${WORK_DIR}/contents.txt "${contents}")
set(p "\\.${INSTALL_PREFIX}")
foreach(pattern
    "${p}/include/enact\\.h\n"
    "${p}/include/enact/eip712/typed_data\\.hpp\n"
    "${p}/lib[^ ]*/libenact_sdk\\.a\n"
    "${p}/lib[^ ]*/libenact_client\\.a\n"
    "${p}/lib[^ ]*/libenact_c\\.so\\.0\\.[0-9]+\\.[0-9]+\n"
    "${p}/lib[^ ]*/libenact_c\\.so\\.0 -> libenact_c\\.so\\.0\\.[0-9.]+\n"
    "${p}/lib[^ ]*/cmake/enact/enactConfig\\.cmake\n"
    "${p}/lib[^ ]*/cmake/enact/enactConfigVersion\\.cmake\n"
    "${p}/lib[^ ]*/cmake/enact/enactTargets\\.cmake\n"
    "${p}/bin/enact\n"
    "${p}/share/doc/enact/copyright\n"
    "${p}/share/doc/enact/LICENSE\n"
    "${p}/share/doc/enact/NOTICE\n")
  expect("${contents}" "${pattern}" "package contents")
endforeach()
if(WITH_SERVER)
  expect("${contents}" "${p}/bin/enact-server\n" "package contents")
  expect("${contents}" "${p}/libexec/enact/enact-worker\n" "package contents")
endif()
# The shared library is announced to dpkg (shlibs) and ldconfig runs on installation.
run(${DPKG_DEB} -e ${debs} ${WORK_DIR}/control)
file(READ ${WORK_DIR}/control/shlibs shlibs)
expect("${shlibs}" "libenact_c 0 enact" "shlibs")

run(${DPKG_DEB} -x ${debs} ${WORK_DIR}/root)
set(prefix ${WORK_DIR}/root${INSTALL_PREFIX})
# The copyright file is DEP-5 and names the project's licence.
file(READ ${prefix}/share/doc/enact/copyright copyright)
expect("${copyright}" "^Format: https://www\\.debian\\.org/doc/packaging-manuals/copyright-format/1\\.0/\n"
  "copyright (DEP-5 header)")
expect("${copyright}" "\nFiles: \\*\nCopyright: [^\n]+\nLicense: Apache-2\\.0\n" "copyright (Files: *)")
run(${prefix}/bin/enact --help)
expect("${last_output}" "usage: enact" "enact --help")
if(WITH_SERVER)
  run(${prefix}/bin/enact-server --version)
  expect("${last_output}" "^enact-server [0-9]" "enact-server --version")
endif()

foreach(consumer cxx c)
  if(consumer STREQUAL "cxx")
    set(source ${CXX_CONSUMER})
    set(exe consumer)
  else()
    set(source ${C_CONSUMER})
    set(exe c_consumer)
  endif()
  set(build ${WORK_DIR}/deb-${consumer})
  run(${CMAKE_COMMAND} -S ${source} -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/${exe})
  expect("${last_output}" "consumer ok" "${exe} against the .deb")
  message(STATUS "deb ${exe}: ${last_output}")
endforeach()

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
set(build ${WORK_DIR}/tgz-c)
run(${CMAKE_COMMAND} -S ${C_CONSUMER} -B ${build} -DCMAKE_PREFIX_PATH=${top}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${build})
run(${build}/c_consumer)
expect("${last_output}" "consumer ok" "c_consumer against the .tar.gz")
message(STATUS "tgz c_consumer: ${last_output}")
