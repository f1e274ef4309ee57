# SPDX-License-Identifier: Apache-2.0
# Binary packages of the install tree with cpack: a Debian package (`cpack -G DEB`) and a .tar.gz
# (`cpack -G TGZ`). Both hold everything `cmake --install` puts in place: the SDK headers and static
# libraries, libenact_c.so and enact.h when ENACT_BUILD_BINDINGS is on, the `enact` CLI, the server
# (enact-server and its sandbox worker) when ENACT_BUILD_SERVER is on, and the CMake package files.
#
# The Debian package installs under CMAKE_INSTALL_PREFIX, so the paths compiled into the binaries
# (the server's worker path) match where the files land: configure with
# -DCMAKE_INSTALL_PREFIX=/usr for a package that follows Debian policy. The .tar.gz is relocatable
# (bin/, lib/, include/ under one top directory).
# The licence travels with every install: LICENSE and NOTICE, and Debian's machine-readable
# copyright file (DEP-5), under share/doc/enact (/usr/share/doc/enact in the Debian package).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE ${CMAKE_CURRENT_LIST_DIR}/debian/copyright
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/enact)

set(ENACT_PACKAGE_MAINTAINER "enact maintainers <enact@localhost>" CACHE STRING
  "Maintainer field of the Debian package")

set(CPACK_PACKAGE_NAME enact)
set(CPACK_PACKAGE_VENDOR enact)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${ENACT_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "SDK, C ABI, CLI and reference server for key-holding JavaScript actions on EVM chains")
set(CPACK_PACKAGE_DESCRIPTION "enact runs JavaScript actions with keys derived inside a trusted \
execution environment, under permissions held in an on-chain registry. This package holds the C++ \
SDK (headers, static libraries, CMake package enact), the C ABI (libenact_c.so, enact.h), the \
enact command-line client and the enact-server reference server.")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGE_FILE_NAME "enact-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_STRIP_FILES OFF)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/enactCPackOptions.cmake)
configure_file(${CMAKE_CURRENT_LIST_DIR}/enactCPackOptions.cmake.in
  ${PROJECT_BINARY_DIR}/enactCPackOptions.cmake @ONLY)

# --- Debian ------------------------------------------------------------------------------------
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # enact_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Run-time libraries: dpkg-shlibdeps reads what the installed binaries (libenact_c.so, enact,
# enact-server, enact-worker) link and names the Debian packages that provide it, so a library
# added to the build (libpq, libpqxx, SpiderMonkey, …) reaches Depends without a hand-kept list.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What find_package(enact) needs to build a C++ consumer (the C ABI alone needs none of them).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
  "libboost-json1.81-dev, libssl-dev, libsecp256k1-dev, libcpp-httplib-dev, pkg-config, cmake")
# The server component (enact::server_core) also needs SQLite's.
if(TARGET enact-server)
  string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS ", libsqlite3-dev")
endif()
# A shlibs control file for libenact_c.so.<major>; with the /usr prefix (library in /usr/lib/<triplet>)
# cpack also writes the postinst/postrm scripts that run ldconfig.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")  # same SONAME: later versions serve too

include(CPack)
