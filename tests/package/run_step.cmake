# SPDX-License-Identifier: Apache-2.0
# run(<command> <args...>): runs one step of a package test (cmake -P script), failing the test with
# the command, its exit code and its output when it does not exit 0; its stdout is left in
# `last_output`. Arguments must not contain ';' (it would split them).
# expect(<text> <regex> <what>): fails the test, naming `what`, when `text` does not match.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

function(expect text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: no match for '${pattern}' in:\n${text}")
  endif()
endfunction()
