#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file the project wrote starts with its SPDX licence identifier (LICENSE: Apache-2.0).

    tests/style/spdx.py [REPO]                       check: list the files without it, exit 1 if any
    tests/style/spdx.py --fix [REPO]                 add the line where it is missing
    tests/style/spdx.py --fix --unmodified [REPO]    ... only in files git shows unmodified
    tests/style/spdx.py --fix REPO PATH...           ... only in the files named

The line is `// SPDX-License-Identifier: Apache-2.0` in C, C++, JavaScript and Solidity, and
`# SPDX-License-Identifier: Apache-2.0` in Python, shell and CMake. It is the first line, or the
second after a `#!` line. Sources are the tracked files (every file of the tree when REPO is not a
git checkout) with those extensions, CMakeLists.txt, and extensionless scripts whose `#!` names sh,
bash, python or node; third-party data (tests/fixtures/), installed npm packages and lock files
are not the project's and are skipped. --fix is idempotent: a file that has the line is left as
it is, so it can be run again whenever new files arrive.
"""
import os
import re
import sys

from sweep import modified, options, read_text, report, tracked, write_text

LICENSE = "Apache-2.0"
SLASH = ("c", "h", "cc", "cpp", "hpp", "hh", "js", "mjs", "cjs", "sol")
HASH = ("py", "sh", "bash", "cmake")
SKIP_DIRS = ("tests/fixtures/", "node_modules/", ".git/")
SKIP_FILES = ("package-lock.json",)
SHEBANG = re.compile(rb"^#!.*\b(sh|bash|python3?|node)\b")
ANY_SPDX = re.compile(r"SPDX-License-Identifier:\s*(\S+)")


def comment_for(path, head):
    """The comment leader of a source file, or None when the file is not a source."""
    name = os.path.basename(path)
    if name == "CMakeLists.txt":
        return "#"
    base = name[:-3] if name.endswith(".in") else name  # configure_file templates
    ext = base.rsplit(".", 1)[1] if "." in base else ""
    if ext in SLASH:
        return "//"
    if ext in HASH:
        return "#"
    if ext == "" and name == base:
        m = SHEBANG.match(head)
        if m:
            return "//" if m.group(1) == "node" else "#"
    return None


def sources(repo):
    for rel in tracked(repo):
        if rel.startswith(SKIP_DIRS) or "/node_modules/" in rel or os.path.basename(rel) in SKIP_FILES:
            continue
        path = os.path.join(repo, rel)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        with open(path, "rb") as f:
            head = f.read(256)
        leader = comment_for(rel, head)
        if leader:
            yield rel, path, leader


def expected_line(leader):
    return f"{leader} SPDX-License-Identifier: {LICENSE}"


def check_text(text, leader):
    """None when the text carries the line where it belongs, else what is wrong."""
    lines = text.split("\n", 2)
    at = 1 if lines and lines[0].startswith("#!") else 0
    if len(lines) > at and lines[at].rstrip("\r") == expected_line(leader):
        return None
    m = ANY_SPDX.search("\n".join(lines[:at + 2]))
    if m and m.group(1) != LICENSE:
        return f"licence {m.group(1)}, expected {LICENSE}"
    return f"line {at + 1} is not '{expected_line(leader)}'"


def fix_text(text, leader):
    if check_text(text, leader) is None:
        return text
    lines = text.split("\n")
    at = 1 if lines and lines[0].startswith("#!") else 0
    # A misplaced identifier of this licence (say below a file comment) moves to its place.
    for i in range(min(len(lines), at + 3)):
        if lines[i].strip() in (expected_line("//"), expected_line("#")):
            del lines[i]
            break
    lines.insert(at, expected_line(leader))
    return "\n".join(lines)


def main(argv):
    fix, only_unmodified, repo, only = options(argv, __file__)
    skip = modified(repo) if only_unmodified and not only else set()
    bad, fixed, skipped = [], [], []
    total = 0
    for rel, path, leader in sources(repo):
        if only and rel not in only:
            continue
        total += 1
        text = read_text(path)
        problem = check_text(text, leader)
        if problem is None:
            continue
        if fix and rel in skip:
            skipped.append(rel)
        elif fix and not problem.startswith("licence "):
            write_text(path, fix_text(text, leader))
            fixed.append(rel)
            continue
        bad.append(f"{rel}: {problem}")
    summary = f"{total} sources, {len(fixed)} fixed, {len(bad)} without the line"
    if bad and not fix:
        summary += f"; fix with: {os.path.relpath(__file__)} --fix"
    return report([("added", fixed), ("skipped (modified in the working tree)", skipped), ("missing SPDX line", bad)],
                  summary, bad)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
