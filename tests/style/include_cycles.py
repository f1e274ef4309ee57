#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when the folders of server/ include each other in a cycle.

Every `#include "<folder>/..."` line in a source under server/<a>/ whose <folder> is another
folder of server/ is an edge a -> folder. A cycle in that graph (core -> tee -> core, say) means
neither folder can be built, tested or understood without the other. Each cycle found is printed
with one include line per edge, so the fix is named; exit status 1 then, 0 otherwise.

Usage: include_cycles.py [<repository root>]   (default: two levels above this script)
"""

import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inc", ".in")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)/[^"]*"')


def include_lines(server, folder):
    """(path, line number, line) of every line of the sources under server/<folder>, in path order."""
    for root, dirs, files in os.walk(os.path.join(server, folder)):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    yield path, number, line


def folder_graph(server):
    """{folder: {included folder: (file, line number, line)}} over the folders of `server`."""
    folders = sorted(d for d in os.listdir(server) if os.path.isdir(os.path.join(server, d)))
    graph = {f: {} for f in folders}
    for folder in folders:
        for path, number, line in include_lines(server, folder):
            m = INCLUDE.match(line)
            if not m or m.group(1) == folder or m.group(1) not in graph:
                continue
            graph[folder].setdefault(m.group(1), (path, number, line.strip()))
    return graph


def cycles(graph):
    """The strongly connected components of more than one folder (Tarjan), each as a cycle
    through all of its folders where one exists, else as the component's folders."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [shortest_cycle(graph, c) for c in out]


def shortest_cycle(graph, component):
    """A shortest cycle through the component's first folder, by breadth-first search."""
    start = component[0]
    members = set(component)
    previous = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if w not in previous:
                previous[w] = v
                queue.append(w)
    return component


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    server = os.path.join(root, "server")
    graph = folder_graph(server)
    found = cycles(graph)
    for cycle in found:
        print("include cycle between server folders: " + " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            path, number, line = graph[a][b]
            print("  %s:%d: %s" % (os.path.relpath(path, root), number, line))
    if found:
        return 1
    edges = sum(len(v) for v in graph.values())
    print("no include cycle among %d server folders (%d edges)" % (len(graph), edges))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
