# SPDX-License-Identifier: Apache-2.0
"""`conan create .` builds this against the package just created: a C++ program on enact::sdk and
enact::client and, when the package has the C ABI, a C program on enact::c; both are run."""

import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, cmake_layout


class EnactTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain", "VirtualRunEnv"
    test_type = "explicit"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if not can_run(self):
            return
        self.run(os.path.join(self.cpp.build.bindir, "test_package"), env="conanrun")
        if self.dependencies[self.tested_reference_str.split("/")[0]].options.with_c_api:
            self.run(os.path.join(self.cpp.build.bindir, "test_package_c"), env="conanrun")
