# SPDX-License-Identifier: Apache-2.0
# Installing and exporting enact::server_core (component `server`): the library, the storage and
# HTTP kits (enact::server_storage, enact::server_http), every server library they link (found by
# walking their link libraries, so a library added under server/ later is exported as soon as one
# of them links it), their headers and the package file
# enactServerTargets.cmake, which enactConfig.cmake imports for the `server` component.
#
# The server libraries name ${PROJECT_SOURCE_DIR}/server as their include directory, so that
# `#include "core/route.hpp"` works inside the tree. An exported target may not name a source
# directory, so that entry becomes the source directory in the build tree and
# <includedir>/enact/server once installed, where the headers of each folder land
# (server/core/route.hpp -> include/enact/server/core/route.hpp): the same includes work for an
# application built against the installed package.
#
# ENACT_SERVER_DEPENDENCIES (set in the caller's scope) lists the packages the exported libraries
# link, in the form enactConfig.cmake finds them: a CMake package name, or pkg:<prefix>:<module>.

# The non-imported targets of this project that `roots` link, directly or not, roots included;
# enact::sdk and enact::client are exported by enactTargets and left out. `imported_out` receives
# the imported targets they link.
function(_enact_server_closure roots targets_out imported_out)
  set(todo ${roots})
  set(seen "")
  set(imported "")
  while(todo)
    list(POP_FRONT todo t)
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      set(t ${aliased})
    endif()
    if(t IN_LIST seen OR t STREQUAL "enact_sdk" OR t STREQUAL "enact_client")
      continue()
    endif()
    get_target_property(is_imported ${t} IMPORTED)
    if(is_imported)
      list(APPEND imported ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(libs ${t} ${property})
      foreach(lib IN LISTS libs)
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
        if(TARGET ${lib})
          list(APPEND todo ${lib})
        elseif(lib MATCHES "::")
          # An imported target of a subdirectory's scope (find_package there), not visible here.
          list(APPEND imported ${lib})
        endif()
      endforeach()
    endforeach()
  endwhile()
  list(REMOVE_DUPLICATES imported)
  set(${targets_out} ${seen} PARENT_SCOPE)
  set(${imported_out} ${imported} PARENT_SCOPE)
endfunction()

function(enact_export_server_core)
  # enact::server_core, and the storage and HTTP kits an embedding application may use beside it.
  set(roots enact_server_core)
  foreach(kit enact_server_storage enact_server_http)
    if(TARGET ${kit})
      list(APPEND roots ${kit})
    endif()
  endforeach()
  _enact_server_closure("${roots}" targets imported)
  set(source_include "${PROJECT_SOURCE_DIR}/server")
  set(header_folders "")
  foreach(t IN LISTS targets)
    # Exported as enact::<name without the enact_ prefix>: enact::server_core, enact::server_tee, ...
    string(REGEX REPLACE "^enact_" "" export_name ${t})
    set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
    get_target_property(dirs ${t} INTERFACE_INCLUDE_DIRECTORIES)
    if(dirs)
      set(rewritten "")
      foreach(dir IN LISTS dirs)
        if(dir STREQUAL source_include)
          list(APPEND rewritten "$<BUILD_INTERFACE:${source_include}>"
               "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/enact/server>")
        else()
          list(APPEND rewritten "${dir}")
        endif()
      endforeach()
      set_target_properties(${t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${rewritten}")
    endif()
    # The folder under server/ whose headers the library's users include.
    get_target_property(source_dir ${t} SOURCE_DIR)
    file(RELATIVE_PATH folder ${source_include} ${source_dir})
    string(REGEX REPLACE "/.*" "" folder "${folder}")
    list(APPEND header_folders ${folder})
  endforeach()
  list(REMOVE_DUPLICATES header_folders)

  install(TARGETS ${targets} EXPORT enactServerTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT server
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT server)
  foreach(folder IN LISTS header_folders)
    file(GLOB_RECURSE headers RELATIVE ${source_include} CONFIGURE_DEPENDS ${source_include}/${folder}/*.hpp)
    list(FILTER headers EXCLUDE REGEX "/node_modules/")
    foreach(header IN LISTS headers)
      get_filename_component(header_dir ${header} DIRECTORY)
      install(FILES ${source_include}/${header}
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/enact/server/${header_dir} COMPONENT server)
    endforeach()
  endforeach()
  install(EXPORT enactServerTargets NAMESPACE enact::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/enact COMPONENT server)

  # What enactConfig.cmake must find before importing these targets.
  set(deps "")
  foreach(lib IN LISTS imported)
    if(lib STREQUAL "PkgConfig::httplib")
      list(APPEND deps "pkg:httplib:cpp-httplib")
    elseif(lib STREQUAL "PkgConfig::secp256k1")
      list(APPEND deps "pkg:secp256k1:libsecp256k1")
    elseif(lib MATCHES "^SQLite::")
      list(APPEND deps SQLite3)
    elseif(lib MATCHES "^PostgreSQL::")
      list(APPEND deps PostgreSQL)
    elseif(lib MATCHES "^OpenSSL::")
      list(APPEND deps OpenSSL)
    elseif(lib MATCHES "^Threads::")
      list(APPEND deps Threads)
    elseif(lib MATCHES "^Boost::")
      list(APPEND deps Boost)
    else()
      message(FATAL_ERROR "enact::server_core links ${lib}: name the package that provides it in "
        "cmake/enactServerExport.cmake so that enactConfig.cmake can find it")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES deps)
  message(STATUS "enact: exporting ${targets} (component server; needs ${deps})")
  set(ENACT_SERVER_DEPENDENCIES "${deps}" PARENT_SCOPE)
endfunction()
