# SPDX-License-Identifier: Apache-2.0
# Builds the enact wheel with the library bundled: copies the package into STAGE_DIR, puts LIBRARY
# beside it as enact/libenact_c.so.0 (its SONAME, debug sections stripped), bundles what that needs
# beyond glibc and libstdc++ into enact/_libs (wheel_libs.py: auditwheel's repair by hand), and runs
# pip's PEP 517 build offline with the interpreter's own setuptools and wheel, tagged with the
# manylinux platform wheel_libs.py computed.
# With CHECK=ON, then checks the wheel (wheel_libs.py check: DT_NEEDED, RUNPATH, the tag in the
# file name and in WHEEL against the highest GLIBC symbol version), unpacks it into a temporary
# directory and runs the package's tests from there without ENACT_C_LIBRARY, so the bundled copy
# is the one loaded, and checks that no system copy of a bundled library was mapped.
# Arguments must not contain ';' (it would split them).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${STAGE_DIR} ${DIST_DIR})
file(MAKE_DIRECTORY ${STAGE_DIR})
file(COPY ${SOURCE_DIR}/pyproject.toml ${SOURCE_DIR}/setup.py ${SOURCE_DIR}/../../LICENSE ${SOURCE_DIR}/../../NOTICE
     DESTINATION ${STAGE_DIR})
file(COPY ${SOURCE_DIR}/enact DESTINATION ${STAGE_DIR} PATTERN __pycache__ EXCLUDE)
file(COPY_FILE ${LIBRARY} ${STAGE_DIR}/enact/libenact_c.so.0)
run(${STRIP} --strip-debug ${STAGE_DIR}/enact/libenact_c.so.0)
run(${PYTHON} ${SOURCE_DIR}/wheel_libs.py bundle ${STAGE_DIR}/enact)
string(STRIP "${last_output}" platform)
if(NOT platform MATCHES "^manylinux_[0-9]+_[0-9]+_[a-z0-9_]+$")
  message(FATAL_ERROR "wheel_libs.py bundle printed no manylinux tag: ${platform}")
endif()
run(${CMAKE_COMMAND} -E env PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 ENACT_WHEEL_PLATFORM=${platform}
    ${PYTHON} -m pip wheel --no-build-isolation --no-deps --no-index --wheel-dir ${DIST_DIR}
    ${STAGE_DIR})
file(GLOB wheels ${DIST_DIR}/enact-*.whl)
list(LENGTH wheels count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one wheel in ${DIST_DIR}, found: ${wheels}")
endif()
message(STATUS "wheel: ${wheels}")

if(NOT CHECK)
  return()
endif()
# The tag is manylinux_<the glibc the files need>, the same in the name and in WHEEL, and every
# library the bundled copy loads is glibc's, libstdc++/libgcc_s or inside the wheel.
run(${PYTHON} ${SOURCE_DIR}/wheel_libs.py check ${wheels})
message(STATUS "${last_output}")
set(site ${STAGE_DIR}/../wheel-site)
file(REMOVE_RECURSE ${site})
file(ARCHIVE_EXTRACT INPUT ${wheels} DESTINATION ${site})
if(NOT EXISTS ${site}/enact/libenact_c.so.0 OR NOT EXISTS ${site}/enact/py.typed)
  message(FATAL_ERROR "the wheel lacks enact/libenact_c.so.0 or enact/py.typed")
endif()
# The licence: in the metadata, and its text with the NOTICE in the .dist-info directory.
file(GLOB dist_info ${site}/enact-*.dist-info)
file(READ ${dist_info}/METADATA metadata)
if(NOT metadata MATCHES "\nLicense: Apache-2.0\n")
  message(FATAL_ERROR "the wheel's METADATA names no 'License: Apache-2.0':\n${metadata}")
endif()
file(GLOB_RECURSE licence_files ${dist_info}/LICENSE ${dist_info}/*/LICENSE ${dist_info}/NOTICE ${dist_info}/*/NOTICE)
list(LENGTH licence_files licence_count)
if(NOT licence_count EQUAL 2)
  message(FATAL_ERROR "the wheel's .dist-info lacks LICENSE or NOTICE: ${licence_files}")
endif()
# Loaded from the wheel: the bundled library, and its dependencies from enact/_libs, never the
# system's copies (this machine has them, a user's may not).
run(${CMAKE_COMMAND} -E env --unset=ENACT_C_LIBRARY --unset=ENACT_SERVER_BINARY --unset=LD_LIBRARY_PATH
    PYTHONPATH=${site} PYTHONDONTWRITEBYTECODE=1
    ${PYTHON} ${SOURCE_DIR}/wheel_libs.py loaded ${site})
message(STATUS "${last_output}")
run(${CMAKE_COMMAND} -E env --unset=ENACT_C_LIBRARY --unset=ENACT_SERVER_BINARY
    PYTHONPATH=${site} PYTHONDONTWRITEBYTECODE=1 ENACT_VECTORS_DIR=${VECTORS_DIR}
    ${PYTHON} -m unittest discover -s ${TESTS_DIR})
message(STATUS "wheel tests: ${last_output}")
