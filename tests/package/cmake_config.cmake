# SPDX-License-Identifier: Apache-2.0
# package.cmake_config: two promises of the CMake package (cmake/enactConfig.cmake.in and
# cmake/packaging.cmake), each checked against its failure:
# - find_package(enact COMPONENTS sdk) needs no cpp-httplib: with pkg-config seeing libsecp256k1
#   only, an sdk consumer configures, builds and runs, while COMPONENTS client is refused naming
#   cpp-httplib;
# - a project that adds enact with add_subdirectory() keeps CPack to itself: enact writes no
#   CPackConfig.cmake into it, and the project's own include(CPack) keeps its package name.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --component Unspecified)

# --- sdk without cpp-httplib -------------------------------------------------------------------
execute_process(COMMAND ${PKG_CONFIG} --variable=pcfiledir libsecp256k1 OUTPUT_VARIABLE pcdir
  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
file(MAKE_DIRECTORY ${WORK_DIR}/pc)
file(CREATE_LINK ${pcdir}/libsecp256k1.pc ${WORK_DIR}/pc/libsecp256k1.pc SYMBOLIC)
set(ENV{PKG_CONFIG_LIBDIR} ${WORK_DIR}/pc)
set(ENV{PKG_CONFIG_PATH} "")
foreach(component sdk client)
  set(src ${WORK_DIR}/${component}-src)
  file(MAKE_DIRECTORY ${src})
  file(WRITE ${src}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(sdk_only LANGUAGES CXX)
find_package(enact CONFIG REQUIRED COMPONENTS ${component})
add_executable(sdk_only main.cpp)
target_link_libraries(sdk_only PRIVATE enact::${component})
")
  file(WRITE ${src}/main.cpp "#include <cstdio>
#include \"enact/crypto/keccak.hpp\"
int main() { std::printf(\"%02x\\n\", enact::crypto::keccak256(std::string_view{})[0]); }
")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${src} -B ${WORK_DIR}/${component}-build
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(configure_${component} ${rc})
  set(output_${component} "${out}${err}")
endforeach()
if(NOT configure_sdk EQUAL 0)
  message(FATAL_ERROR "COMPONENTS sdk without cpp-httplib did not configure:\n${output_sdk}")
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/sdk-build)
run(${WORK_DIR}/sdk-build/sdk_only)
if(NOT last_output STREQUAL "c5\n")
  message(FATAL_ERROR "sdk_only printed: ${last_output}")
endif()
if(configure_client EQUAL 0 OR NOT output_client MATCHES "cpp-httplib not found")
  message(FATAL_ERROR "COMPONENTS client without cpp-httplib was not refused:\n${output_client}")
endif()
unset(ENV{PKG_CONFIG_LIBDIR})
message(STATUS "sdk without cpp-httplib: built; client refused")

# --- add_subdirectory: no CPack ----------------------------------------------------------------
set(parent ${WORK_DIR}/parent)
file(MAKE_DIRECTORY ${parent})
file(WRITE ${parent}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(parent VERSION 3.1.4 LANGUAGES C CXX)
add_subdirectory(\"${SOURCE_DIR}\" enact EXCLUDE_FROM_ALL)
if(EXISTS \"\${CMAKE_BINARY_DIR}/CPackConfig.cmake\")
  message(FATAL_ERROR \"enact wrote CPackConfig.cmake into the parent project\")
endif()
if(DEFINED CPACK_GENERATOR OR DEFINED CPACK_PACKAGE_NAME)
  message(FATAL_ERROR \"enact set CPack variables in the parent project\")
endif()
set(CPACK_PACKAGE_NAME parent)
set(CPACK_GENERATOR TGZ)
include(CPack)
")
run(${CMAKE_COMMAND} -S ${parent} -B ${WORK_DIR}/parent-build)
file(READ ${WORK_DIR}/parent-build/CPackConfig.cmake cpack_config)
if(NOT cpack_config MATCHES "set\\(CPACK_PACKAGE_NAME \"parent\"\\)" OR
   NOT cpack_config MATCHES "set\\(CPACK_GENERATOR \"TGZ\"\\)")
  message(FATAL_ERROR "the parent's CPack settings were overridden:\n${cpack_config}")
endif()
message(STATUS "add_subdirectory: the parent's CPack settings stand")
