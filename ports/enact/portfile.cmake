# SPDX-License-Identifier: Apache-2.0
# Overlay port of enact, built from a local source tree rather than a download:
#   vcpkg install enact[bindings,cli] --overlay-ports=<tree>/ports
# The tree is the one this port lives in (two directories up), or $ENACT_SOURCE_DIR when set.
# The reference server and the tests are never built here (ENACT_BUILD_SERVER / ENACT_BUILD_TESTS
# OFF): the server's action runtime compiles Duktape's amalgamated source, which no port ships, and
# the tests need the interop vectors' npm toolchain.
if(DEFINED ENV{ENACT_SOURCE_DIR})
  set(SOURCE_PATH "$ENV{ENACT_SOURCE_DIR}")
else()
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()
if(NOT EXISTS "${SOURCE_PATH}/sdk/include/enact/bytes.hpp")
  message(FATAL_ERROR "enact: no enact source tree at ${SOURCE_PATH} (set ENACT_SOURCE_DIR)")
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    bindings ENACT_BUILD_BINDINGS
    cli      ENACT_BUILD_CLI)

# The tree finds libsecp256k1 and cpp-httplib with pkg-config under Debian's module names; the
# secp256k1 port (a static library with the recovery module, target unofficial::secp256k1) and the
# header-only cpp-httplib port ship no .pc files. These describe them: first for this build (paths
# into the installed tree; the release library serves the debug build too, as a C library may),
# then, relative to their own location, for consumers of the installed enactConfig.cmake, which
# puts share/enact/pkgconfig on PKG_CONFIG_PATH.
function(enact_write_pc dir prefix)
  file(WRITE "${dir}/libsecp256k1.pc" "prefix=${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libsecp256k1
Description: secp256k1 from the vcpkg secp256k1 port (recovery module enabled)
Version: 0.2.0
Cflags: -I\${includedir}
Libs: -L\${libdir} -lsecp256k1
")
  file(WRITE "${dir}/cpp-httplib.pc" "prefix=${prefix}
includedir=\${prefix}/include

Name: cpp-httplib
Description: cpp-httplib from the vcpkg cpp-httplib port (header-only, OpenSSL support)
Version: 0.11.4
Cflags: -I\${includedir} -DCPPHTTPLIB_OPENSSL_SUPPORT
Libs:
")
endfunction()
set(build_pc_dir "${CURRENT_BUILDTREES_DIR}/pkgconfig")
file(REMOVE_RECURSE "${build_pc_dir}")
enact_write_pc("${build_pc_dir}" "${CURRENT_INSTALLED_DIR}")
if(DEFINED ENV{PKG_CONFIG_PATH})
  set(ENV{PKG_CONFIG_PATH} "${build_pc_dir}${VCPKG_HOST_PATH_SEPARATOR}$ENV{PKG_CONFIG_PATH}")
else()
  set(ENV{PKG_CONFIG_PATH} "${build_pc_dir}")
endif()
vcpkg_find_acquire_program(PKGCONFIG)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DENACT_BUILD_TESTS=OFF
    -DENACT_BUILD_SERVER=OFF
    -DENACT_BUILD_BENCH=OFF
    -DENACT_BUILD_EXAMPLES=OFF
    "-DPKG_CONFIG_EXECUTABLE=${PKGCONFIG}"
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(CONFIG_PATH lib/cmake/enact)
enact_write_pc("${CURRENT_PACKAGES_DIR}/share/${PORT}/pkgconfig" "\${pcfiledir}/../../..")

if("cli" IN_LIST FEATURES)
  vcpkg_copy_tools(TOOL_NAMES enact AUTO_CLEAN)
endif()
if("bindings" IN_LIST FEATURES AND VCPKG_LIBRARY_LINKAGE STREQUAL "static")
  # libenact_c.so is shared in every triplet: it is the stable C interface, with the static SDK
  # linked inside.
  set(VCPKG_POLICY_DLLS_IN_STATIC_LIBRARY enabled)
endif()

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
# share/enact/copyright: the Apache-2.0 text and the NOTICE of the bundled third-party pieces.
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE" "${SOURCE_PATH}/NOTICE")
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")
