#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when the build graph of server/ differs from its code graph or from the documented one.

Three graphs over the folders of server/ must be the same:
  - the code's: folder a includes a header of folder b (`#include "b/..."`), as include_cycles.py reads it;
  - the build's: a CMake target of server/a/ links a target of server/b/ (target_link_libraries);
  - the documented one: the "folder | depends on" table of docs/architecture.md §2.
So a library links what it includes and nothing more, and the table cannot drift from the code.
The SDK's client library (`enact::client`, headers under enact/client/) is checked the same way:
a folder links it exactly when one of its sources includes one of its headers.

Usage: layering.py [<repository root>]   (default: two levels above this script)
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from include_cycles import folder_graph, include_lines  # noqa: E402

CLIENT = "enact::client"
LINK = re.compile(r"target_link_libraries\s*\(\s*([A-Za-z0-9_:.-]+)([^)]*)\)", re.S)
TABLE_ROW = re.compile(r"^\|\s*(`[^|]+`)\s*\|\s*([^|]*)\|\s*$")


def target_folders(server):
    """{CMake target name: folder} for every library or executable defined under server/."""
    out = {}
    define = re.compile(r"(?:add_library|add_executable|enact_server_library)\s*\(\s*([A-Za-z0-9_:.-]+)")
    alias = re.compile(r"add_library\s*\(\s*([A-Za-z0-9_:.-]+)\s+ALIAS\s+([A-Za-z0-9_:.-]+)")
    for folder in sorted(os.listdir(server)):
        for root, dirs, files in os.walk(os.path.join(server, folder)):
            if "CMakeLists.txt" not in files:
                continue
            text = open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8").read()
            text = re.sub(r"#[^\n]*", "", text)
            for m in alias.finditer(text):
                out[m.group(1)] = folder
            for m in define.finditer(text):
                out.setdefault(m.group(1), folder)
    return out


def link_graph(server, targets):
    """{folder: {linked folder or CLIENT: (CMakeLists path, target)}}."""
    graph = {}
    for folder in sorted(set(targets.values())):
        graph.setdefault(folder, {})
    for folder in sorted(os.listdir(server)):
        for root, dirs, files in os.walk(os.path.join(server, folder)):
            if "CMakeLists.txt" not in files:
                continue
            path = os.path.join(root, "CMakeLists.txt")
            text = re.sub(r"#[^\n]*", "", open(path, encoding="utf-8").read())
            for m in LINK.finditer(text):
                owner = targets.get(m.group(1))
                if owner is None:
                    continue
                for token in m.group(2).split():
                    linked = CLIENT if token == CLIENT else targets.get(token)
                    if linked is not None and linked != owner:
                        graph.setdefault(owner, {}).setdefault(linked, (path, m.group(1)))
    return graph


def client_headers(root):
    """The SDK headers whose code is in enact::client: enact/client/ and the header of each other
    source sdk/CMakeLists.txt lists for the client library (src/chain/client.cpp: enact/chain/client.hpp)."""
    text = open(os.path.join(root, "sdk", "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"enact_sdk_library\(client\s([^)]*)\)", text)
    headers = set()
    for source in (m.group(1).split() if m else []):
        if source.startswith("src/") and source.endswith(".cpp"):
            header = "enact/" + source[len("src/"):-len(".cpp")] + ".hpp"
            if os.path.exists(os.path.join(root, "sdk", "include", header)):
                headers.add(header)
    return headers


def client_includes(root, server):
    """{folder: (file, line)} of the folders with a source that includes a header of enact::client."""
    headers = client_headers(root)
    out = {}
    pattern = re.compile(r'^\s*#\s*include\s*"(enact/[^"]+)"')
    for folder in sorted(os.listdir(server)):
        for path, number, line in include_lines(server, folder):
            m = pattern.match(line)
            if m and (m.group(1).startswith("enact/client/") or m.group(1) in headers):
                out.setdefault(folder, (path, number))
    return out


def documented(root):
    """{folder: {folder}} from the "folder | depends on" table of docs/architecture.md."""
    out = {}
    in_table = False
    for line in open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8"):
        if re.match(r"^\|\s*folder\s*\|\s*depends on\s*\|", line):
            in_table = True
            continue
        if in_table and line.startswith("|---"):
            continue
        m = TABLE_ROW.match(line.rstrip("\n")) if in_table else None
        if not m:
            if in_table:
                break
            continue
        folders = re.findall(r"`([a-z_]+)`", m.group(1))
        deps = set(re.findall(r"`([a-z_]+)`", m.group(2)))
        for f in folders:
            out[f] = deps
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    server = os.path.join(root, "server")
    code = folder_graph(server)
    targets = target_folders(server)
    links = link_graph(server, targets)
    clients = client_includes(root, server)
    table = documented(root)
    problems = []
    rel = lambda p: os.path.relpath(p, root)  # noqa: E731
    for folder in sorted(code):
        included = set(code[folder])
        linked = {f for f in links.get(folder, {}) if f != CLIENT}
        for b in sorted(included - linked):
            path, number, line = code[folder][b]
            problems.append("%s includes %s but links no target of it: %s:%d: %s" % (folder, b, rel(path), number, line))
        for b in sorted(linked - included):
            path, target = links[folder][b]
            problems.append("%s links %s but includes none of its headers: %s (%s)" % (folder, b, rel(path), target))
        if folder in clients and CLIENT not in links.get(folder, {}):
            path, number = clients[folder]
            problems.append("%s includes a header of enact::client but links no %s: %s:%d" % (folder, CLIENT, rel(path), number))
        if folder not in clients and CLIENT in links.get(folder, {}):
            path, target = links[folder][CLIENT]
            problems.append("%s links %s but includes none of its headers: %s (%s)" % (folder, CLIENT, rel(path), target))
        want = table.get(folder)
        if want is None:
            problems.append("docs/architecture.md's dependency table has no row for server/%s" % folder)
        elif want != included:
            problems.append(
                "docs/architecture.md's row for %s says %s; its includes say %s"
                % (folder, ", ".join(sorted(want)) or "(none)", ", ".join(sorted(included)) or "(none)"))
    for folder in sorted(set(table) - set(code)):
        problems.append("docs/architecture.md's dependency table names %s, which is no folder of server/" % folder)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("the build, code and documented graphs of %d server folders agree" % len(code))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
