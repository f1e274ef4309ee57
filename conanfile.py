# SPDX-License-Identifier: Apache-2.0
"""Conan 2 recipe of enact, built from this source tree (`conan create .` or `conan build .`).

It packages the SDK (enact::sdk, enact::client: static libraries, header-mostly) and, with
`with_c_api`, the C ABI (enact::c: libenact_c.so with enact.h and the SDK linked inside);
`with_cli` adds the `enact` command-line client. The reference server and the tests are not
built: the server's action runtime compiles Duktape's amalgamated source, which ConanCenter's
duktape package does not ship, and the tests need the interop vectors' npm toolchain.

package_type: Conan's requirement traits are per package. Without the C ABI the package holds
static libraries only ("static-library": consumers link boost, openssl and secp256k1 too). With it,
it also holds a shared library that consumers must find at run time, which neither
"static-library" nor "shared-library" describes; "unknown" makes Conan pass every trait of the
dependencies on (link and run), and runenv_info puts lib/ on LD_LIBRARY_PATH for libenact_c.so.

`exports_sources` is every file the build reads with the options below (CMakeLists.txt and cmake/,
sdk/, the registry artifact the SDK compiles in, bindings/, cli/, the licence files and the
Debian copyright file the install step puts under share/doc). tests/package/conan_recipe.py copies
exactly these into an empty directory and configures, builds, installs and runs test_package/
from there with the recipe's own options.

Dependencies map Debian 12's packages (the versions the tree is tested with) to ConanCenter:
libboost-json1.81-dev -> boost/1.81.0, libssl-dev 3.0 -> openssl/3.x, libsecp256k1-dev 0.2 ->
secp256k1, libcpp-httplib-dev 0.11.4 -> cpp-httplib (header-only there, with OpenSSL support). The
top-level CMakeLists.txt finds libsecp256k1 and cpp-httplib with pkg-config, as on Debian, so
PkgConfigDeps writes .pc files under those names and the toolchain puts them on PKG_CONFIG_PATH;
Boost and OpenSSL come from CMakeDeps.

libsecp256k1 must have its recovery module: cmake/CheckSecp256k1Recovery.cmake stops the
configure step with a message when it does not. ConanCenter's secp256k1 recipe has no option for
it and upstream's CMake default leaves it out; a profile can switch it on for that package and
make it part of its package id (the conf exists since Conan 2.4; untested here, as Conan cannot be
installed where this tree is tested):

    [conf]
    secp256k1/*:tools.cmake.cmaketoolchain:extra_variables={"SECP256K1_ENABLE_MODULE_RECOVERY": "ON"}
    tools.info.package_id:confs=["tools.cmake.cmaketoolchain:extra_variables"]
"""

import os
import re

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir
from conan.tools.gnu import PkgConfigDeps

required_conan_version = ">=2.1"


class EnactConan(ConanFile):
    name = "enact"
    description = (
        "C++20 SDK for running JavaScript actions with TEE-held keys under on-chain permissions: "
        "Keccak, secp256k1, EIP-712 and wallet-proof envelopes, ABI, RLP, IPFS CIDs, cron, PKP "
        "derivation, typed service clients, and a C ABI"
    )
    license = "Apache-2.0"
    topics = ("ethereum", "eip712", "secp256k1", "tee", "sdk")
    package_type = "static-library"  # "unknown" with the C ABI: see configure()
    settings = "os", "arch", "compiler", "build_type"
    # No `shared` option: the C++ libraries are static by design (their C++ ABI is not a stable
    # interface; sdk/CMakeLists.txt declares them STATIC), and the stable shared library is the
    # C ABI (with_c_api). A profile's `*:shared=True` therefore leaves enact as it is.
    options = {
        "fPIC": [True, False],
        "with_c_api": [True, False],
        "with_cli": [True, False],
    }
    default_options = {
        "fPIC": True,
        "with_c_api": True,
        "with_cli": False,
        "cpp-httplib/*:with_openssl": True,
        "boost/*:header_only": False,
        "boost/*:without_json": False,
    }
    exports_sources = (
        "LICENSE",
        "NOTICE",
        "CMakeLists.txt",
        "cmake/*",
        "sdk/*",
        "contracts/build/*",
        "bindings/*",
        "cli/*",
        "packaging/debian/copyright",
    )

    def set_version(self):
        # The one version of the tree: project(enact VERSION x.y.z) in CMakeLists.txt.
        text = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        match = re.search(r"project\(enact VERSION (\d+\.\d+\.\d+)", text)
        if not match:
            raise ConanInvalidConfiguration("CMakeLists.txt: no project(enact VERSION ...)")
        self.version = match.group(1)

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.with_c_api:
            # Static C++ libraries and a shared C library in one package (module docstring).
            self.package_type = "unknown"

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # Boost.JSON types appear in the SDK's public headers.
        self.requires("boost/1.81.0", transitive_headers=True)
        self.requires("openssl/[>=3.0 <4]")
        self.requires("secp256k1/[>=0.2 <1]")
        self.requires("cpp-httplib/0.14.3")
        if self.options.with_cli:
            # cli/CMakeLists.txt parses arguments with CLI11 (header-only).
            self.requires("cli11/2.3.2")

    def build_requirements(self):
        self.tool_requires("cmake/[>=3.25 <4]")
        self.tool_requires("pkgconf/[>=2.0 <3]")

    def validate(self):
        check_min_cppstd(self, 20)
        if self.settings.os != "Linux":
            # The C ABI's symbol list is a GNU ld version script; the server-side parts and the
            # tests run on Linux only.
            raise ConanInvalidConfiguration("enact is built and tested on Linux only")
        if not self.options.get_safe("fPIC", True):
            # The tree sets CMAKE_POSITION_INDEPENDENT_CODE: the static libraries are linked into
            # libenact_c.so, so they are always position-independent.
            raise ConanInvalidConfiguration("enact is always built with -fPIC (fPIC=False)")

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["ENACT_BUILD_TESTS"] = False
        tc.cache_variables["ENACT_BUILD_SERVER"] = False
        tc.cache_variables["ENACT_BUILD_BENCH"] = False
        tc.cache_variables["ENACT_BUILD_EXAMPLES"] = False
        tc.cache_variables["ENACT_BUILD_CLI"] = bool(self.options.with_cli)
        tc.cache_variables["ENACT_BUILD_BINDINGS"] = bool(self.options.with_c_api)
        tc.generate()
        # find_package(Boost CONFIG COMPONENTS json), find_package(OpenSSL), find_package(Threads).
        CMakeDeps(self).generate()
        # pkg_check_modules(... libsecp256k1 cpp-httplib), under the names Debian's .pc files use.
        pc = PkgConfigDeps(self)
        pc.set_property("secp256k1", "pkg_config_name", "libsecp256k1")
        pc.set_property("cpp-httplib", "pkg_config_name", "cpp-httplib")
        pc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        cmake = CMake(self)
        cmake.install()
        # Consumers get the targets below from CMakeDeps and PkgConfigDeps, not from the tree's
        # enactConfig.cmake and .pc files (which name Debian's dependencies).
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))
        rmdir(self, os.path.join(self.package_folder, "lib", "pkgconfig"))
        # The licence where Conan looks for it (licenses/), not under share/doc.
        rmdir(self, os.path.join(self.package_folder, "share", "doc"))
        for name in ("LICENSE", "NOTICE"):
            copy(self, name, src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "enact")

        sdk = self.cpp_info.components["sdk"]
        sdk.set_property("cmake_target_name", "enact::sdk")
        sdk.libs = ["enact_sdk"]
        sdk.requires = ["boost::json", "openssl::crypto", "secp256k1::secp256k1"]

        client = self.cpp_info.components["client"]
        client.set_property("cmake_target_name", "enact::client")
        client.libs = ["enact_client"]
        client.requires = ["sdk", "cpp-httplib::cpp-httplib", "openssl::ssl"]
        client.system_libs = ["pthread"]

        if self.options.with_c_api:
            c_api = self.cpp_info.components["c"]
            c_api.set_property("cmake_target_name", "enact::c")
            c_api.libs = ["enact_c"]
            # A shared library with the SDK linked inside: C consumers link nothing else.
            c_api.requires = []

            # Consumers' run environments (conanrun) find libenact_c.so.0.
            self.runenv_info.prepend_path("LD_LIBRARY_PATH", os.path.join(self.package_folder, "lib"))

        if self.options.with_cli:
            self.cpp_info.bindirs = ["bin"]
