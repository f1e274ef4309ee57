# SPDX-License-Identifier: Apache-2.0
# enact_test(<ctest name> <target> SOURCES <files...> [LIBS <libraries...>] [LABELS <labels...>]
#            [TIMEOUT <seconds>] [INCLUDES <dirs...>] [DEFINITIONS <definitions...>] [SOURCE_DIRS])
#
# One doctest executable (-Wall -Wextra, linked with enact_doctest_main and LIBS) and its ctest
# entry with LABELS and TIMEOUT. SOURCE_DIRS defines ENACT_SOURCE_DIR and ENACT_FIXTURES_DIR (the
# repository and its tests/fixtures), as the tests that read files from either expect.
#
# enact_node_test(<ctest name> <script> [ARGS <args...>] [LABELS <labels...>] [TIMEOUT <seconds>])
#
# A Node test script (tests/support/node/harness.mjs and the like) run as `node <script> ARGS`.
include_guard(GLOBAL)

function(enact_test name target)
  cmake_parse_arguments(PARSE_ARGV 2 arg "SOURCE_DIRS" "TIMEOUT" "SOURCES;LIBS;LABELS;INCLUDES;DEFINITIONS")
  add_executable(${target} ${arg_SOURCES})
  if(arg_INCLUDES)
    target_include_directories(${target} PRIVATE ${arg_INCLUDES})
  endif()
  if(arg_SOURCE_DIRS)
    target_compile_definitions(${target} PRIVATE
      ENACT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      ENACT_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures")
  endif()
  if(arg_DEFINITIONS)
    target_compile_definitions(${target} PRIVATE ${arg_DEFINITIONS})
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  target_link_libraries(${target} PRIVATE ${arg_LIBS} enact_doctest_main)
  add_test(NAME ${name} COMMAND ${target})
  set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}")
  if(arg_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${arg_TIMEOUT})
  endif()
endfunction()

function(enact_node_test name script)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "TIMEOUT" "ARGS;LABELS")
  add_test(NAME ${name} COMMAND node ${script} ${arg_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}")
  if(arg_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${arg_TIMEOUT})
  endif()
endfunction()
