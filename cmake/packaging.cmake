# SPDX-License-Identifier: Apache-2.0
# Packages of the install tree (docs/packaging.md):
# - the Debian packages libenact-dev, libenact-c0, enact and enact-server, made by
#   packaging/build-debs from a tree configured with -DCMAKE_INSTALL_PREFIX=/usr (Debian's tools:
#   dpkg-shlibdeps, dpkg-gencontrol, dpkg-deb; tests/package: package.debs, package.deb_clean_root);
# - a relocatable .tar.gz made by cpack (`cpack -G TGZ`): bin/, lib/, include/ under one top
#   directory, with everything `cmake --install` puts in place.
# Both hold the pkg-config modules enact (the C++ SDK) and enact-c (the C ABI), written at install
# time so their prefix is the one installed to.
# The licence travels with every install: LICENSE and NOTICE, and Debian's machine-readable
# copyright file (DEP-5), under share/doc/enact (each Debian package has its own doc directory).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
  ${PROJECT_SOURCE_DIR}/packaging/debian/copyright
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/enact)

# pkg-config modules: the .pc.in files are configured when installed. Installed to /usr (the
# Debian packages) they name that prefix; anywhere else their prefix is relative to the .pc file
# (${pcfiledir}), so a tree moved after installing (the .tar.gz, which cpack installs into a
# staging directory first) still finds its files.
set(_enact_pc_modules enact)
if(TARGET enact_c)
  list(APPEND _enact_pc_modules enact-c)
endif()
file(RELATIVE_PATH _enact_pc_to_prefix "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" _enact_pc_to_prefix "${_enact_pc_to_prefix}")
foreach(_enact_pc IN LISTS _enact_pc_modules)
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(ENACT_PC_PREFIX /usr)
    else()
      set(ENACT_PC_PREFIX \"\\\${pcfiledir}/${_enact_pc_to_prefix}\")
    endif()
    set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
    set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
    set(PROJECT_VERSION \"${PROJECT_VERSION}\")
    configure_file(\"${CMAKE_CURRENT_LIST_DIR}/${_enact_pc}.pc.in\"
      \"${PROJECT_BINARY_DIR}/pkgconfig-install/${_enact_pc}.pc\" @ONLY)")
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig-install/${_enact_pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# cpack belongs to the project being built: a project that adds enact with add_subdirectory() or
# FetchContent keeps its own CPack settings and its own CPackConfig.cmake.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()

set(ENACT_PACKAGE_MAINTAINER "enact maintainers <maintainers@enact.invalid>" CACHE STRING
  "Contact of the .tar.gz package (the Debian packages take theirs from packaging/debian/control)")

set(CPACK_PACKAGE_NAME enact)
set(CPACK_PACKAGE_VENDOR enact)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${ENACT_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "SDK, C ABI, CLI and reference server for key-holding JavaScript actions on EVM chains")
set(CPACK_GENERATOR "TGZ")
set(CPACK_PACKAGE_FILE_NAME "enact-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_STRIP_FILES OFF)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/enactCPackOptions.cmake)
configure_file(${CMAKE_CURRENT_LIST_DIR}/enactCPackOptions.cmake.in
  ${PROJECT_BINARY_DIR}/enactCPackOptions.cmake @ONLY)

include(CPack)
