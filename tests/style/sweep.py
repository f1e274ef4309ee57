# SPDX-License-Identifier: Apache-2.0
"""What the tree-wide style sweeps (spdx.py, self_contained.py) share: the tracked files of a
checkout (every file of the tree when it is not one), the files being edited in the working tree,
text I/O that keeps every byte as it is, and the report they print."""
import os
import subprocess


def tracked(repo):
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(repo):
            rel = os.path.relpath(root, repo)
            dirs[:] = [d for d in dirs if not d.startswith((".git", "build")) and d != "node_modules"]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
        return files


def modified(repo):
    """Paths `git status` shows changed, staged or untracked: someone may be editing them."""
    out = subprocess.run(["git", "-C", repo, "status", "--porcelain", "-z"], check=True, capture_output=True).stdout
    return {e[3:] for e in out.decode().split("\0") if len(e) > 3}


def read_text(path):
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def write_text(path, text):
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


def report(sections, summary, problems):
    """Prints each (label, items) section and the summary; the exit status: 1 when problems remain."""
    for label, items in sections:
        for item in items:
            print(f"{label}: {item}")
    print(summary)
    return 1 if problems else 0


def options(argv, script):
    """--fix, --unmodified, the checkout (by default the one holding `script`) and the paths named
    after it (then only those, edited or not)."""
    rest = [a for a in argv if not a.startswith("--")]
    repo = os.path.abspath(rest[0] if rest else os.path.join(os.path.dirname(os.path.abspath(script)), "..", ".."))
    return "--fix" in argv, "--unmodified" in argv, repo, set(rest[1:])
