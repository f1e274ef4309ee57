# SPDX-License-Identifier: Apache-2.0
"""package.conan_recipe: what `conan create .` does with conanfile.py, without Conan (it cannot be
installed here), against Debian's packages of the dependencies instead of ConanCenter's.

The recipe and test_package/conanfile.py are loaded with a stand-in for the `conan` Python API
that runs their methods for real:
1. export: copies exactly the files the recipe's `exports_sources` patterns match (Conan's
   fnmatch semantics, `!` excludes) into an empty directory;
2. set_version, config_options, configure, validate with the recipe's default options (or
   --option name=value);
3. generate, build and package from that copy: the CMakeToolchain cache variables the recipe
   sets are passed to CMake, its CMake() calls run cmake, and copy/rmdir act on the files;
4. checks the package against package_type (static-library: no shared object, shared-library: no
   archive) and package_info (every component's libraries exist, the licence is in licenses/);
5. writes a find_package(enact) file from package_info the way CMakeDeps would (component
   targets, their libraries, their requirements mapped to Debian's Boost, OpenSSL, libsecp256k1
   and cpp-httplib), then builds and runs test_package with its own recipe's build() and test(),
   the run environment taken from the recipe's runenv_info.

What stays unverified without Conan: the dependency graph and ConanCenter's packages
(boost/1.81.0, openssl/3.x, secp256k1, cpp-httplib/0.14.3), CMakeDeps' and PkgConfigDeps' real
output, and the package id. Usage: conan_recipe.py --source <tree> --work <dir> [--option k=v].
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import types
from typing import Any, Dict, List

# ---- the stand-in for the conan package ---------------------------------------------------------


class ConanInvalidConfiguration(Exception):
    pass


class _Options:
    def __init__(self, values: Dict[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"option {name!r} does not exist") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[name] = value

    def __delattr__(self, name: str) -> None:
        del self._values[name]

    def get_safe(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)


class _Settings:
    os = "Linux"
    arch = "x86_64"
    compiler = "gcc"
    build_type = "Release"


class _Component:
    def __init__(self) -> None:
        self.libs: List[str] = []
        self.requires: List[str] = []
        self.system_libs: List[str] = []
        self.properties: Dict[str, Any] = {}

    def set_property(self, name: str, value: Any) -> None:
        self.properties[name] = value


class _Components(dict):
    def __missing__(self, key: str) -> _Component:
        self[key] = _Component()
        return self[key]


class _CppInfo(_Component):
    def __init__(self) -> None:
        super().__init__()
        self.components = _Components()
        self.bindirs = ["bin"]


class _Env:
    def __init__(self) -> None:
        self.prepends: Dict[str, List[str]] = {}

    def prepend_path(self, name: str, value: str) -> None:
        self.prepends.setdefault(name, []).insert(0, value)


class _Folders:
    bindir = ""


class ConanFile:
    settings: Any = None
    options: Any = {}
    default_options: Any = {}

    def __init__(self, folder: str, options: Dict[str, Any]) -> None:
        self.recipe_folder = folder
        self.settings = _Settings()
        self.options = _Options(options)
        self.cpp_info = _CppInfo()
        self.runenv_info = _Env()
        self.cpp = types.SimpleNamespace(build=_Folders())
        self.source_folder = self.build_folder = self.package_folder = folder
        self.cache_variables: Dict[str, Any] = {}
        self.extra_cache_variables: Dict[str, Any] = {}
        self.run_env: Dict[str, str] = {}

    def requires(self, *args: Any, **kwargs: Any) -> None:  # the graph is Conan's: not modelled
        pass

    tool_requires = requires

    def run(self, command: str, env: str = "") -> None:
        environ = dict(os.environ)
        if env == "conanrun":
            environ.update(self.run_env)
        print(f"conan_recipe: run {command}", flush=True)
        subprocess.run(shlex.split(command), check=True, env=environ)


def _check_min_cppstd(conanfile: ConanFile, version: int) -> None:
    pass  # the tree sets C++20 itself (CMAKE_CXX_STANDARD)


def _run(*args: str) -> None:
    print("conan_recipe: " + " ".join(args), flush=True)
    subprocess.run(args, check=True)


class CMakeToolchain:
    def __init__(self, conanfile: ConanFile) -> None:
        self._conanfile = conanfile
        self.cache_variables = conanfile.cache_variables
        self.variables: Dict[str, Any] = {}

    def generate(self) -> None:
        # What conan_toolchain.cmake would say for these options: -fPIC as the option reads.
        fpic = self._conanfile.options.get_safe("fPIC")
        if fpic is not None:
            self.cache_variables.setdefault("CMAKE_POSITION_INDEPENDENT_CODE", bool(fpic))
        self.cache_variables.update(self.variables)


class CMake:
    def __init__(self, conanfile: ConanFile) -> None:
        self._c = conanfile

    @staticmethod
    def _value(v: Any) -> str:
        return ("ON" if v else "OFF") if isinstance(v, bool) else str(v)

    def configure(self) -> None:
        cache = {**self._c.cache_variables, **self._c.extra_cache_variables,
                 "CMAKE_BUILD_TYPE": self._c.settings.build_type}
        _run(CMAKE, "-S", self._c.source_folder, "-B", self._c.build_folder,
             *[f"-D{k}={self._value(v)}" for k, v in sorted(cache.items())])

    def build(self) -> None:
        _run(CMAKE, "--build", self._c.build_folder, "-j2")

    def install(self) -> None:
        _run(CMAKE, "--install", self._c.build_folder, "--prefix", self._c.package_folder)


class _NoGenerator:
    """CMakeDeps / PkgConfigDeps: Debian's own CMake config and .pc files stand in for what they
    would write for ConanCenter's packages."""

    def __init__(self, conanfile: ConanFile) -> None:
        pass

    def set_property(self, *args: Any) -> None:
        pass

    def generate(self) -> None:
        pass


def _cmake_layout(conanfile: ConanFile) -> None:
    pass


def _copy(conanfile: ConanFile, pattern: str, src: str, dst: str) -> List[str]:
    copied = []
    for rel in _matching(src, [pattern]):
        os.makedirs(os.path.dirname(os.path.join(dst, rel)) or dst, exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dst, rel))
        copied.append(rel)
    return copied


def _load(conanfile: ConanFile, path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _rmdir(conanfile: ConanFile, path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def install_stub() -> None:
    modules = {
        "conan": {"ConanFile": ConanFile},
        "conan.errors": {"ConanInvalidConfiguration": ConanInvalidConfiguration},
        "conan.tools": {},
        "conan.tools.build": {"check_min_cppstd": _check_min_cppstd, "can_run": lambda c: True},
        "conan.tools.cmake": {"CMake": CMake, "CMakeDeps": _NoGenerator, "CMakeToolchain": CMakeToolchain,
                              "cmake_layout": _cmake_layout},
        "conan.tools.files": {"copy": _copy, "load": _load, "rmdir": _rmdir},
        "conan.tools.gnu": {"PkgConfigDeps": _NoGenerator},
    }
    for name, attrs in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module


def load_recipe(path: str) -> type:
    spec = importlib.util.spec_from_file_location(f"recipe_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    classes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, ConanFile) and v is not ConanFile]
    if len(classes) != 1:
        raise SystemExit(f"{path}: expected one ConanFile class, found {classes}")
    return classes[0]


# ---- export -------------------------------------------------------------------------------------


def _matching(top: str, patterns: List[str]) -> List[str]:
    """Files under `top` (relative paths) as Conan's copy() selects them: fnmatch over the whole
    relative path ('*' crosses '/'), patterns starting with '!' excluding."""
    include = [p for p in patterns if not p.startswith("!")]
    exclude = [p[1:] for p in patterns if p.startswith("!")]
    out = []
    for root, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            rel = os.path.relpath(os.path.join(root, name), top)
            if any(fnmatch.fnmatch(rel, p) for p in include) and not any(fnmatch.fnmatch(rel, p) for p in exclude):
                out.append(rel)
    return sorted(out)


def export(source: str, patterns: List[str], dst: str) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    files = _matching(source, patterns)
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(dst, rel)) or dst, exist_ok=True)
        shutil.copy2(os.path.join(source, rel), os.path.join(dst, rel))
    shutil.copy2(os.path.join(source, "conanfile.py"), os.path.join(dst, "conanfile.py"))
    print(f"conan_recipe: exported {len(files)} files matching {patterns}", flush=True)


# ---- what CMakeDeps would write -----------------------------------------------------------------

# ConanCenter's targets of the recipe's requirements -> Debian's packages standing in for them.
DEPENDENCY_TARGETS = {
    "boost::json": ("find_dependency(Boost 1.81 CONFIG COMPONENTS json)", "Boost::json"),
    "openssl::crypto": ("find_dependency(OpenSSL)", "OpenSSL::Crypto"),
    "openssl::ssl": ("find_dependency(OpenSSL)", "OpenSSL::SSL"),
    "secp256k1::secp256k1": ("pkg_check_modules(conan_secp256k1 REQUIRED IMPORTED_TARGET libsecp256k1)",
                             "PkgConfig::conan_secp256k1"),
    "cpp-httplib::cpp-httplib": ("pkg_check_modules(conan_httplib REQUIRED IMPORTED_TARGET cpp-httplib)",
                                 "PkgConfig::conan_httplib"),
}


def write_deps(recipe: ConanFile, out_dir: str) -> None:
    pkg = recipe.package_folder
    info = recipe.cpp_info
    name = info.properties.get("cmake_file_name", "enact")
    lines = ["# Written by tests/package/conan_recipe.py from the recipe's package_info().",
             "include(CMakeFindDependencyMacro)", "find_dependency(PkgConfig)", "find_dependency(Threads)"]
    finds: List[str] = []
    targets = []
    for comp_name, comp in info.components.items():
        target = comp.properties.get("cmake_target_name", f"{name}::{comp_name}")
        targets.append((comp_name, comp, target))
        for req in comp.requires:
            if "::" in req:
                if req not in DEPENDENCY_TARGETS:
                    raise SystemExit(f"package_info: requirement {req} has no stand-in here")
                if DEPENDENCY_TARGETS[req][0] not in finds:
                    finds.append(DEPENDENCY_TARGETS[req][0])
            elif req not in info.components:
                raise SystemExit(f"package_info: component {comp_name} requires unknown component {req}")
    lines += finds
    for comp_name, comp, target in targets:
        if len(comp.libs) != 1:
            raise SystemExit(f"package_info: component {comp_name} has libs {comp.libs}; expected one")
        lib = comp.libs[0]
        static = os.path.join(pkg, "lib", f"lib{lib}.a")
        shared = os.path.join(pkg, "lib", f"lib{lib}.so")
        if os.path.exists(static):
            lines.append(f"add_library({target} STATIC IMPORTED)")
            location = static
        elif os.path.exists(shared):
            lines.append(f"add_library({target} SHARED IMPORTED)")
            location = os.path.realpath(shared)
        else:
            raise SystemExit(f"package_info: component {comp_name} names lib {lib}, not in {pkg}/lib")
        links = []
        for req in comp.requires:
            if "::" in req:
                links.append(DEPENDENCY_TARGETS[req][1])
            else:
                links.append(info.components[req].properties.get("cmake_target_name", f"{name}::{req}"))
        links += ["Threads::Threads" if s == "pthread" else s for s in comp.system_libs]
        lines.append(f'set_target_properties({target} PROPERTIES IMPORTED_LOCATION "{location}"\n'
                     f'  INTERFACE_INCLUDE_DIRECTORIES "{os.path.join(pkg, "include")}"\n'
                     f'  INTERFACE_LINK_LIBRARIES "{";".join(links)}")')
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{name}-config.cmake"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


# ---- the checks ---------------------------------------------------------------------------------


def check_package(recipe: ConanFile) -> None:
    lib = os.path.join(recipe.package_folder, "lib")
    names = os.listdir(lib) if os.path.isdir(lib) else []
    archives = [n for n in names if n.endswith(".a")]
    shared = [n for n in names if ".so" in n]
    kind = recipe.package_type
    print(f"conan_recipe: package_type {kind}; archives {archives}; shared objects {shared}", flush=True)
    if kind == "static-library" and shared:
        raise SystemExit(f"package_type static-library, but the package ships {shared}")
    if kind == "shared-library" and archives:
        raise SystemExit(f"package_type shared-library, but the package ships {archives}")
    if kind == "library":
        raise SystemExit("package_type library needs a shared option, which the recipe does not have")
    if kind == "unknown" and not (archives and shared):
        raise SystemExit("package_type unknown, but the package is not a mix of archives and shared objects")
    for name in ("LICENSE", "NOTICE"):
        if not os.path.isfile(os.path.join(recipe.package_folder, "licenses", name)):
            raise SystemExit(f"licenses/{name} missing from the package")
    if recipe.options.get_safe("with_cli") and not os.path.isfile(os.path.join(recipe.package_folder, "bin", "enact")):
        raise SystemExit("with_cli=True, but bin/enact is not in the package")
    for leftover in ("lib/cmake", "lib/pkgconfig", "share/doc"):
        if os.path.exists(os.path.join(recipe.package_folder, leftover)):
            raise SystemExit(f"{leftover} left in the package: consumers get Conan's generated files")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--option", action="append", default=[], help="name=value of the recipe's options")
    args = parser.parse_args()
    global CMAKE
    CMAKE = args.cmake
    install_stub()

    source = os.path.realpath(args.source)
    work = os.path.realpath(args.work)
    recipe_class = load_recipe(os.path.join(source, "conanfile.py"))
    patterns = list(recipe_class.exports_sources)
    export_dir = os.path.join(work, "export")
    export(source, patterns, export_dir)

    own = {k: v for k, v in recipe_class.default_options.items() if "/" not in k}
    for item in args.option:
        key, _, value = item.partition("=")
        if key not in recipe_class.options:
            raise SystemExit(f"--option {key}: the recipe has no such option")
        own[key] = {"True": True, "False": False}.get(value, value)
    # The recipe as the export left it: its own methods run from the copy.
    recipe = load_recipe(os.path.join(export_dir, "conanfile.py"))(export_dir, own)
    recipe.set_version()
    for method in ("config_options", "configure", "validate"):
        if hasattr(recipe, method):
            getattr(recipe, method)()
    recipe.source_folder = export_dir
    recipe.build_folder = os.path.join(work, "build")
    recipe.package_folder = os.path.join(work, "package")
    shutil.rmtree(recipe.package_folder, ignore_errors=True)
    shutil.rmtree(recipe.build_folder, ignore_errors=True)  # a fresh build, as conan create's
    recipe.generate()
    recipe.build()
    recipe.package()
    recipe.package_info()
    check_package(recipe)

    deps_dir = os.path.join(work, "deps")
    write_deps(recipe, deps_dir)
    tester = load_recipe(os.path.join(source, "test_package", "conanfile.py"))(
        os.path.join(source, "test_package"), {})
    tester.tested_reference_str = f"{recipe.name}/{recipe.version}"
    tester.dependencies = {recipe.name: types.SimpleNamespace(options=recipe.options)}
    tester.source_folder = os.path.join(source, "test_package")
    tester.build_folder = os.path.join(work, "test_package")
    tester.cpp.build.bindir = tester.build_folder
    tester.extra_cache_variables = {"CMAKE_PREFIX_PATH": deps_dir}
    tester.run_env = {k: os.pathsep.join(v + [os.environ.get(k, "")]).rstrip(os.pathsep)
                      for k, v in recipe.runenv_info.prepends.items()}
    shutil.rmtree(tester.build_folder, ignore_errors=True)
    tester.requirements()
    tester.build()
    tester.test()
    print(f"conan_recipe: {recipe.name}/{recipe.version} with {own} built from its exports_sources; "
          "test_package passed", flush=True)
    return 0


CMAKE = "cmake"

if __name__ == "__main__":
    sys.exit(main())
