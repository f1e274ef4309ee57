# SPDX-License-Identifier: Apache-2.0
"""What auditwheel's `repair` does for the enact wheel, done by hand with Debian's binutils and
patchelf (PyPI, and so auditwheel, is not reachable where the wheel is built).

    wheel_libs.py bundle <package dir>   copies every library libenact_c.so.0 needs beyond glibc,
                                         libstdc++ and libgcc_s into <package dir>/_libs under a
                                         name of its own (libcrypto-<hash>.so.3, so another copy
                                         loaded in the process cannot stand in for it), points the
                                         references at those names and sets RUNPATHs ($ORIGIN),
                                         then prints the manylinux platform tag
    wheel_libs.py tag <package dir>      only prints the tag
    wheel_libs.py check <wheel>          fails unless the wheel is what `bundle` makes: every
                                         DT_NEEDED is a system library or bundled and reachable
                                         through the RUNPATH, and the tag (file name and WHEEL)
                                         is manylinux_<the glibc floor the files need>
    wheel_libs.py loaded <site dir>      imports enact from <site dir> (an unpacked wheel), makes
                                         a call of each bundled library's kind, and fails unless
                                         every shared object mapped besides Python's own and
                                         the system libraries is the package's own copy

The tag (PEP 600): manylinux_<glibc major>_<minor>_<arch> states the oldest glibc the wheel runs
on: the highest GLIBC_x.y symbol version any of its ELF files references, raised where the
GLIBCXX or CXXABI versions they use need the libstdc++ of a later manylinux baseline
(LIBSTDCXX_BASELINES; with Debian 12's GCC 12, GLIBCXX_3.4.30 makes it manylinux_2_35).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from typing import Dict, List, Tuple

# The libraries a manylinux wheel may take from the system (PEP 600 / auditwheel's policy): glibc's
# own, and the GCC runtime the C++ ABI comes with.
SYSTEM_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libresolv.so.2",
    "libutil.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libstdc++.so.6",
    "libgcc_s.so.1",
}
LIBS_DIR = "_libs"
MAIN = "libenact_c.so.0"


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def is_elf(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def needed(path: str) -> List[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", path))


def runpath(path: str) -> List[str]:
    m = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[([^\]]*)\]", run("readelf", "-d", path))
    return m.group(1).split(":") if m else []


def needed_versions(path: str, name: str) -> List[Tuple[int, ...]]:
    """The <name>_x.y[.z] versions the file's symbol references need (.gnu.version_r)."""
    text = run("readelf", "--version-info", "--wide", path)
    found = re.findall(r"Name: " + name + r"_(\d+(?:\.\d+)+)\b", text)
    return [tuple(int(part) for part in v.split(".")) for v in found]


# The C++ runtime is the system's too, so the tag must also name a glibc floor whose baseline
# distribution ships a libstdc++ with the GLIBCXX and CXXABI versions the files use. From
# auditwheel's manylinux policy (x86_64 and aarch64 alike at these points): the highest version
# each baseline provides, and its manylinux_2_x. A version between two rows takes the later one,
# which never claims a system too old.
LIBSTDCXX_BASELINES = {
    "GLIBCXX": [((3, 4, 19), (2, 17)), ((3, 4, 22), (2, 24)), ((3, 4, 29), (2, 34)), ((3, 4, 30), (2, 35)),
                ((3, 4, 33), (2, 40))],
    "CXXABI": [((1, 3, 7), (2, 17)), ((1, 3, 10), (2, 24)), ((1, 3, 13), (2, 35)), ((1, 3, 15), (2, 40))],
}


def floor_of(files: List[str]) -> Tuple[Tuple[int, int], str]:
    """The oldest glibc the files run on, and what sets it."""
    glibc = max(v for f in files for v in needed_versions(f, "GLIBC"))
    floor, reason = (glibc[0], glibc[1]), "GLIBC_%d.%d" % glibc[:2]
    for name, table in LIBSTDCXX_BASELINES.items():
        versions = [v for f in files for v in needed_versions(f, name)]
        if not versions:
            continue
        need = max(versions)
        rows = [baseline for provides, baseline in table if provides >= need]
        if not rows:
            raise SystemExit(f"{name}_{'.'.join(map(str, need))}: newer than any manylinux baseline known here")
        if rows[0] > floor:
            floor, reason = rows[0], f"{name}_{'.'.join(map(str, need))}"
    return floor, reason


def arch() -> str:
    # "linux-x86_64" -> "x86_64"
    return sysconfig.get_platform().split("-", 1)[1].replace("-", "_").replace(".", "_")


def tag_of(files: List[str]) -> str:
    (major, minor), _ = floor_of(files)
    return f"manylinux_{major}_{minor}_{arch()}"


def elf_files(top: str) -> List[str]:
    out = []
    for root, _, names in os.walk(top):
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path) and is_elf(path):
                out.append(path)
    return sorted(out)


def closure(library: str) -> Dict[str, str]:
    """soname -> path of every library `library` loads (directly or not) beyond the system's,
    as the dynamic loader of this machine resolves them."""
    found: Dict[str, str] = {}
    for line in run("ldd", library).splitlines():
        m = re.match(r"\s*(\S+) => (/\S+) \(", line)
        if m and m.group(1) not in SYSTEM_LIBRARIES:
            found[m.group(1)] = os.path.realpath(m.group(2))
        elif "not found" in line:
            raise SystemExit(f"{library}: {line.strip()}")
    return found


def bundle(package: str) -> str:
    main = os.path.join(package, MAIN)
    libs = os.path.join(package, LIBS_DIR)
    os.makedirs(libs, exist_ok=True)
    deps = closure(main)
    renamed: Dict[str, str] = {}
    for soname, path in sorted(deps.items()):
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:8]
        stem, _, version = soname.partition(".so")
        renamed[soname] = f"{stem}-{digest}.so{version}"
        shutil.copyfile(path, os.path.join(libs, renamed[soname]))
        os.chmod(os.path.join(libs, renamed[soname]), 0o755)
    for soname, new in renamed.items():
        target = os.path.join(libs, new)
        run("patchelf", "--set-soname", new, target)
        run("patchelf", "--set-rpath", "$ORIGIN", target)
    for target in [main] + [os.path.join(libs, n) for n in renamed.values()]:
        for old in needed(target):
            if old in renamed:
                run("patchelf", "--replace-needed", old, renamed[old], target)
    run("patchelf", "--set-rpath", "$ORIGIN/" + LIBS_DIR, main)
    check_tree(package)
    return tag_of(elf_files(package))


def check_tree(top: str) -> None:
    """Every DT_NEEDED of every ELF file under `top` is a system library or a file its RUNPATH
    ($ORIGIN-relative, inside the tree) reaches; nothing else is searched for."""
    files = elf_files(top)
    if not any(os.path.basename(f) == MAIN for f in files):
        raise SystemExit(f"no {MAIN} under {top}")
    for path in files:
        dirs = []
        for entry in runpath(path):
            if not entry.startswith("$ORIGIN"):
                raise SystemExit(f"{path}: RUNPATH entry {entry!r} outside the package")
            dirs.append(os.path.normpath(entry.replace("$ORIGIN", os.path.dirname(path))))
        for name in needed(path):
            if name in SYSTEM_LIBRARIES:
                continue
            if not any(os.path.isfile(os.path.join(d, name)) for d in dirs):
                raise SystemExit(f"{path}: needs {name}, neither a system library nor bundled")


def check_wheel(wheel: str) -> None:
    name = os.path.basename(wheel)
    m = re.fullmatch(r"([A-Za-z0-9_]+)-([0-9.]+)-(py3)-(none)-([a-z0-9_]+)\.whl", name)
    if not m:
        raise SystemExit(f"unexpected wheel name: {name}")
    distribution, version, python, abi, platform = m.groups()
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
            for info in z.infolist():  # zipfile drops the mode: restore it for readelf's sake
                mode = info.external_attr >> 16
                if mode:
                    os.chmod(os.path.join(tmp, info.filename), mode)
        with open(os.path.join(tmp, f"{distribution}-{version}.dist-info", "WHEEL"), encoding="utf-8") as f:
            wheel_meta = f.read()
        tags = re.findall(r"^Tag: (\S+)$", wheel_meta, re.M)
        if tags != [f"{python}-{abi}-{platform}"]:
            raise SystemExit(f"WHEEL tags {tags} do not match the file name's {python}-{abi}-{platform}")
        if "Root-Is-Purelib: false" not in wheel_meta:
            raise SystemExit("WHEEL: a wheel holding a native library must not be purelib")
        package = os.path.join(tmp, "enact")
        check_tree(package)
        expected = tag_of(elf_files(package))
        if platform != expected:
            raise SystemExit(f"platform tag {platform}, but the files need {expected}")
        bundled = sorted(os.listdir(os.path.join(package, LIBS_DIR)))
        _, reason = floor_of(elf_files(package))
        print(f"{name}: tag {platform} (set by {reason}, the newest of its ELF files' needs), "
              f"bundled: {', '.join(bundled)}; system: {', '.join(sorted(needed_system(package)))}")


def needed_system(package: str) -> set:
    return {n for f in elf_files(package) for n in needed(f) if n in SYSTEM_LIBRARIES}


def mapped_objects() -> set:
    with open("/proc/self/maps", encoding="utf-8") as f:
        return {os.path.realpath(line.split()[-1]) for line in f
                if len(line.split()) >= 6 and ".so" in os.path.basename(line.split()[-1])}


def check_loaded(site: str) -> None:
    site = os.path.realpath(site)
    before = mapped_objects()  # the interpreter's own
    sys.path.insert(0, site)
    import enact  # noqa: E402  (from the site directory just put first)

    if not os.path.realpath(enact.__file__).startswith(site + os.sep):
        raise SystemExit(f"imported {enact.__file__}, not the package under {site}")
    # Keccak and secp256k1 (libsecp256k1, libcrypto), JSON (Boost.JSON), the HTTP client.
    enact.Account.from_key(enact.keccak256(b"x")).sign_message("m")
    enact.typed_data_hash({"types": {"EIP712Domain": []}, "primaryType": "EIP712Domain", "domain": {},
                           "message": {}})
    enact.CoreClient("http://127.0.0.1:1").close()
    added = mapped_objects() - before
    libs = os.path.join(site, "enact", LIBS_DIR)
    own = {os.path.join(site, "enact", MAIN)} | {os.path.join(libs, n) for n in os.listdir(libs)}
    missing = sorted(own - added)
    if missing:
        raise SystemExit(f"bundled libraries not loaded: {missing}")
    # libcrypto-1a2b3c4d.so.3 stands for libcrypto.so.3: no libcrypto.so* may come from elsewhere.
    stems = {re.sub(r"-[0-9a-f]{8}$", "", n.split(".so")[0]) for n in os.listdir(libs)}
    shadowed = sorted(p for p in added - own if os.path.basename(p).split(".so")[0] in stems)
    if shadowed:
        raise SystemExit(f"system copies of bundled libraries were loaded: {shadowed}")
    others = sorted(os.path.basename(p) for p in added - own)
    print(f"loaded from the wheel: {len(own)} libraries; besides them only {', '.join(others) or 'nothing'}")


def main(argv: List[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("bundle", "tag", "check", "loaded"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "bundle":
        print(bundle(argv[2]))
    elif argv[1] == "tag":
        print(tag_of(elf_files(argv[2])))
    elif argv[1] == "check":
        check_wheel(argv[2])
    else:
        check_loaded(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
