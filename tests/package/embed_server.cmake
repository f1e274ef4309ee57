# SPDX-License-Identifier: Apache-2.0
# Installs the build tree's SDK and server libraries (components Unspecified and server) into
# WORK_DIR/prefix, builds examples/embed_server on its own against that prefix only
# (find_package(enact COMPONENTS server)), then runs it on a loopback port for one request.
file(REMOVE_RECURSE ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
foreach(component Unspecified server)
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --component ${component})
endforeach()
if(NOT EXISTS ${WORK_DIR}/prefix/include/enact/server/core/service.hpp)
  message(FATAL_ERROR "the server headers are not installed under include/enact/server")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/embed_server_run.py ${WORK_DIR}/build/embed_server ${WORK_DIR}/data)
message(STATUS "${last_output}")
