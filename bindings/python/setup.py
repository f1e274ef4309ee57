# SPDX-License-Identifier: Apache-2.0
"""Wheel layout and tag of the enact package. The wheel bundles libenact_c.so, so it is specific to
the platform (platlib, tag py3-none-<platform>), but not to the Python version or ABI: the library
is loaded with ctypes, not imported as an extension module. The platform is
$ENACT_WHEEL_PLATFORM when set (build_wheel.cmake sets the manylinux tag that wheel_libs.py
computes for the bundled libraries), else setuptools' own (linux_<arch>). Everything else is in
pyproject.toml."""

import os

from setuptools import setup
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1 takes the command from the wheel package
    from wheel.bdist_wheel import bdist_wheel


class binary_distribution(Distribution):
    """Holds a native library: installed to platlib, in a wheel that is not pure."""

    def has_ext_modules(self):
        return True


class platform_wheel(bdist_wheel):
    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", os.environ.get("ENACT_WHEEL_PLATFORM") or platform


setup(distclass=binary_distribution, cmdclass={"bdist_wheel": platform_wheel})
