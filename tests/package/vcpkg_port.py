# SPDX-License-Identifier: Apache-2.0
"""package.vcpkg_port: what can be checked of ports/enact without vcpkg (which cannot be installed
here). The port builds from this tree, so there is no export to get wrong; what can drift is the
port against the tree:
- vcpkg.json: name, the version of project(enact VERSION ...), the licence, Linux only;
- every feature of vcpkg.json is mapped by vcpkg_check_features, and every variable the portfile
  passes (-DNAME=... and the features' variables) is an option() of the tree;
- the pkg-config modules the portfile writes are the ones the tree looks for
  (pkg_check_modules), and vcpkg.json depends on a port for each library the tree finds;
- vcpkg_cmake_config_fixup names the directory the tree installs its CMake package into, and the
  installed enactConfig.cmake reads the .pc files the port puts beside it (share/enact/pkgconfig).
Unverified without vcpkg: the ports' own builds (secp256k1 with its recovery module, cpp-httplib
header-only with OpenSSL), vcpkg's fixups, and the triplets.
Usage: vcpkg_port.py <tree>
"""

from __future__ import annotations

import json
import os
import re
import sys


def fail(message: str) -> None:
    raise SystemExit(f"package.vcpkg_port: {message}")


def main(tree: str) -> int:
    with open(os.path.join(tree, "ports", "enact", "vcpkg.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    with open(os.path.join(tree, "ports", "enact", "portfile.cmake"), encoding="utf-8") as f:
        portfile = f.read()
    with open(os.path.join(tree, "CMakeLists.txt"), encoding="utf-8") as f:
        top = f.read()

    version = re.search(r"project\(enact VERSION (\d+\.\d+\.\d+)", top).group(1)
    expected = {"name": "enact", "version": version, "license": "Apache-2.0", "supports": "linux"}
    for key, value in expected.items():
        if manifest.get(key) != value:
            fail(f"vcpkg.json {key} is {manifest.get(key)!r}, expected {value!r}")

    options = set(re.findall(r"^\s*option\((\w+)", top, re.M))
    features_block = re.search(r"vcpkg_check_features\((.*?)\)", portfile, re.S).group(1)
    mapped = dict(re.findall(r"^\s*(\w[\w-]*)\s+(ENACT_\w+)\s*$", features_block, re.M))
    if set(mapped) != set(manifest.get("features", {})):
        fail(f"features of vcpkg.json {sorted(manifest.get('features', {}))} != mapped {sorted(mapped)}")
    configure = re.search(r"vcpkg_cmake_configure\((.*?)\n\)", portfile, re.S).group(1)
    passed = set(re.findall(r"-D(ENACT_\w+)=", configure)) | set(mapped.values())
    unknown = sorted(passed - options)
    if unknown:
        fail(f"the portfile sets {unknown}, which are not option()s of CMakeLists.txt")
    for must_be_off in ("ENACT_BUILD_TESTS", "ENACT_BUILD_SERVER", "ENACT_BUILD_BENCH"):
        if f"-D{must_be_off}=OFF" not in configure:
            fail(f"the portfile must configure with -D{must_be_off}=OFF")

    wanted_pcs = set(re.findall(r"pkg_check_modules\(\w+ REQUIRED IMPORTED_TARGET ([\w+-]+)\)", top))
    written_pcs = set(re.findall(r'file\(WRITE "\$\{dir\}/([\w+-]+)\.pc"', portfile))
    if wanted_pcs != written_pcs:
        fail(f"the tree looks for pkg-config modules {sorted(wanted_pcs)}, the port writes {sorted(written_pcs)}")

    deps = {d if isinstance(d, str) else d["name"] for d in manifest.get("dependencies", [])}
    needed = {"boost-json": r"find_package\(Boost\b", "openssl": r"find_package\(OpenSSL\b",
              "secp256k1": r"libsecp256k1", "cpp-httplib": r"cpp-httplib"}
    for port, pattern in needed.items():
        if re.search(pattern, top) and port not in deps:
            fail(f"the tree needs {port}, vcpkg.json does not depend on it")

    fixup = re.search(r"vcpkg_cmake_config_fixup\(CONFIG_PATH ([\w/]+)\)", portfile).group(1)
    if not re.search(r"install\(EXPORT enactTargets .*DESTINATION \$\{CMAKE_INSTALL_LIBDIR\}/cmake/enact\)", top):
        fail("the tree no longer installs its CMake package into ${CMAKE_INSTALL_LIBDIR}/cmake/enact")
    if fixup != "lib/cmake/enact":
        fail(f"vcpkg_cmake_config_fixup(CONFIG_PATH {fixup}), the tree installs into lib/cmake/enact")
    if "share/${PORT}/pkgconfig" not in portfile:
        fail("the portfile no longer writes the consumers' .pc files into share/enact/pkgconfig")
    with open(os.path.join(tree, "cmake", "enactConfig.cmake.in"), encoding="utf-8") as f:
        if '"${CMAKE_CURRENT_LIST_DIR}/pkgconfig' not in f.read():
            fail("enactConfig.cmake no longer puts its pkgconfig directory on PKG_CONFIG_PATH")
    print(f"package.vcpkg_port: enact {version}, features {mapped}, pkg-config modules {sorted(written_pcs)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
