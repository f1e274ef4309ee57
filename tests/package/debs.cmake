# SPDX-License-Identifier: Apache-2.0
# package.debs: configures SOURCE_DIR as a Debian package is built (prefix /usr, no test suite, so
# no sandbox test hooks) in WORK_DIR/build, builds it, makes the four packages with
# packaging/build-debs into WORK_DIR/out, and checks their control fields, their contents and
# lintian's verdict. The build uses ccache with paths relative to the checkout, so a later run, in
# this tree or in another clone (CI), compiles only what changed; the first one builds the
# SDK, the CLI, the C ABI and the server once more. package.deb_clean_root installs the packages
# this leaves in WORK_DIR/out.
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)
function(refuse text pattern what)
  if(text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: '${pattern}' matches in:\n${text}")
  endif()
endfunction()

set(ENV{CCACHE_BASEDIR} ${SOURCE_DIR})
set(ENV{CCACHE_NOHASHDIR} 1)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr
    -DENACT_BUILD_TESTS=OFF -DENACT_BUILD_CLI=ON -DENACT_BUILD_EXAMPLES=OFF -DENACT_BUILD_SERVER=ON
    -DENACT_BUILD_BINDINGS=ON -DENACT_BUILD_BENCH=OFF
    # Read-only relocations and immediate binding, as Debian links; link flags only, so the
    # objects stay those the main tree compiled.
    "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-z,relro -Wl,-z,now"
    "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-z,relro -Wl,-z,now")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j 2)
run(${SOURCE_DIR}/packaging/build-debs ${WORK_DIR}/build ${WORK_DIR}/out)

set(debs "")
foreach(package libenact-dev libenact-c0 enact enact-server)
  file(GLOB deb ${WORK_DIR}/out/${package}_*.deb)
  list(LENGTH deb count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "expected one ${package}_*.deb in ${WORK_DIR}/out, found: ${deb}")
  endif()
  list(APPEND debs ${deb})
  run(${DPKG_DEB} --field ${deb})
  set(control_${package} "${last_output}")
  expect("${last_output}" "^Package: ${package}\n" "${package} control")
  expect("${last_output}" "\nVersion: [0-9.]+-[0-9]+\n" "${package} control")
  run(${DPKG_DEB} --contents ${deb})
  set(contents_${package} "${last_output}")
  # Every package carries the licence and the Debian changelog, and nothing under /usr/local.
  expect("${last_output}" " \\./usr/share/doc/${package}/copyright\n" "${package} contents")
  expect("${last_output}" " \\./usr/share/doc/${package}/changelog\\.Debian\\.gz\n" "${package} contents")
  refuse("${last_output}" "/usr/local/" "${package} contents")
endforeach()

# Depends: computed by dpkg-shlibdeps from what each binary links.
foreach(lib libc6 libstdc\\+\\+6 libssl3 libsecp256k1-1 libboost-json1\\.81\\.0)
  expect("${control_libenact-c0}" "\nDepends: [^\n]*${lib}" "libenact-c0 Depends (${lib})")
  expect("${control_enact}" "\nDepends: [^\n]*${lib}" "enact Depends (${lib})")
endforeach()
foreach(lib adduser libsqlite3-0 libpq5 libmozjs-102-0 libtomlplusplus3 libseccomp2
    libcpp-httplib0\\.11)
  expect("${control_enact-server}" "\nDepends: [^\n]*${lib}" "enact-server Depends (${lib})")
endforeach()
expect("${control_libenact-dev}" "\nDepends: libenact-c0 \\(= [0-9.]+-[0-9]+\\), libboost-json1\\.81-dev"
  "libenact-dev Depends")

# Contents, by package.
set(lib "\\./usr/lib/[a-z0-9_]+-linux-gnu")
foreach(pattern
    " \\./usr/include/enact\\.h\n" " \\./usr/include/enact/eip712/typed_data\\.hpp\n"
    " ${lib}/libenact_sdk\\.a\n" " ${lib}/libenact_client\\.a\n"
    " ${lib}/libenact_c\\.so -> libenact_c\\.so\\.0\n"
    " ${lib}/cmake/enact/enactConfig\\.cmake\n" " ${lib}/cmake/enact/enactTargets\\.cmake\n"
    " ${lib}/pkgconfig/enact\\.pc\n" " ${lib}/pkgconfig/enact-c\\.pc\n")
  expect("${contents_libenact-dev}" "${pattern}" "libenact-dev contents")
endforeach()
expect("${contents_libenact-c0}" " ${lib}/libenact_c\\.so\\.0\\.[0-9]+\\.[0-9]+\n" "libenact-c0 contents")
expect("${contents_libenact-c0}" " ${lib}/libenact_c\\.so\\.0 -> libenact_c\\.so\\.0\\.[0-9.]+\n" "libenact-c0 contents")
refuse("${contents_libenact-c0}" "\\.a\n|/include/" "libenact-c0 contents")
foreach(pattern " \\./usr/bin/enact\n" " \\./usr/share/man/man1/enact\\.1\\.gz\n"
    " \\./usr/share/bash-completion/completions/enact\n")
  expect("${contents_enact}" "${pattern}" "enact contents")
endforeach()
foreach(pattern " \\./usr/bin/enact-server\n" " \\./usr/libexec/enact/enact-worker\n"
    " \\./usr/share/man/man8/enact-server\\.8\\.gz\n" " \\./lib/systemd/system/enact-server\\.service\n"
    " \\./etc/enact/config\\.toml\n" " \\./var/lib/enact/\n")
  expect("${contents_enact-server}" "${pattern}" "enact-server contents")
endforeach()

# The maintainer files: the library's shlibs and ldconfig trigger, the server's conffile and
# the postinst that creates its user.
foreach(package libenact-c0 enact-server)
  file(REMOVE_RECURSE ${WORK_DIR}/control-${package})
  file(GLOB deb ${WORK_DIR}/out/${package}_*.deb)
  run(${DPKG_DEB} -e ${deb} ${WORK_DIR}/control-${package})
endforeach()
file(READ ${WORK_DIR}/control-libenact-c0/shlibs shlibs)
expect("${shlibs}" "^libenact_c 0 libenact-c0 \\(>= [0-9.]+-[0-9]+\\)\n" "libenact-c0 shlibs")
file(READ ${WORK_DIR}/control-libenact-c0/triggers triggers)
expect("${triggers}" "activate-noawait ldconfig" "libenact-c0 triggers")
file(READ ${WORK_DIR}/control-enact-server/conffiles conffiles)
expect("${conffiles}" "^/etc/enact/config\\.toml\n$" "enact-server conffiles")
file(READ ${WORK_DIR}/control-enact-server/postinst postinst)
expect("${postinst}" "adduser --system --group [^\n]*enact" "enact-server postinst")

# The unit runs the server as its own user, with the hardening options.
file(READ ${SOURCE_DIR}/packaging/debian/enact-server.service unit)
foreach(pattern "\nUser=enact\n" "\nExecStart=/usr/bin/enact-server --config /etc/enact/config\\.toml\n"
    "\nNoNewPrivileges=yes\n" "\nProtectSystem=strict\n" "\nCapabilityBoundingSet=CAP_SETUID CAP_SETGID\n"
    "\nAmbientCapabilities=CAP_SETUID CAP_SETGID\n"
    "\nStateDirectory=enact\n")
  expect("${unit}" "${pattern}" "enact-server.service")
endforeach()

# lintian: no error or warning beyond the overrides (packaging/debian/*.lintian-overrides, each
# with its reason).
execute_process(COMMAND ${LINTIAN} --fail-on error,warning --display-info ${debs}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "lintian:\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lintian failed (${rc}):\n${out}\n${err}")
endif()
