#!/usr/bin/env python3
"""Circles of files importing each other inside a crate.

    python3 scripts/file_cycles.py [CRATE_DIR ...]   (default: every crate of crates/)

A file uses another when its code (tests apart: `tests.rs` files and what follows
`#[cfg(test)]`) names a path `crate::a::b…`, `super::…`, `self::…` or `child::…` (a module it
declares) that leads into the other file's module; the path is taken to the deepest module
file it names. Declaring a module (`mod x;`) is not using it. Prints each circle (a strongly connected
component of more than one file) and exits 1 when there is one, 0 when there is none.
"""

import os
import re
import sys

# A path's first segment (not itself after `::`) and the rest.
PATH = re.compile(r"(?<![:\w])([a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+([a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};", re.S)


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    found = {}
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel in (["lib"], ["main"]):
                module = ()
            elif rel[-1] == "mod":
                module = tuple(rel[:-1])
            else:
                module = tuple(rel)
            found[module] = path
    return found


def code_of(path):
    """The file's code without comments, strings and its tests."""
    if os.path.basename(path) == "tests.rs":
        return ""
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def file_of(found, path):
    """The file holding the longest module prefix of `path`."""
    for end in range(len(path), -1, -1):
        if path[:end] in found:
            return found[path[:end]]
    return None


def uses(found, module, path):
    """The files `path` (as written in `module`'s file) reaches."""
    text = code_of(path)
    targets = set()
    # This file's module as the base of `self::` and `super::` (a non-mod.rs file is a module
    # whose `super` is its directory's module).
    def resolve(head, rest):
        if head == "crate":
            return rest
        if head not in ("self", "super"):
            # A child module named without `self::` (`live::HUMAN` in lib.rs), or a path of
            # another crate or a local name (not a file of this crate).
            return tuple(module) + (head,) + rest if tuple(module) + (head,) in found else None
        base = list(module)
        if head == "super":
            base = base[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
        return tuple(base) + rest

    paths = []
    for m in USE_GROUP.finditer(text):
        prefix = tuple(p for p in m.group(2).split("::") if p)
        for item in re.split(r",", m.group(3)):
            item = item.strip().split(" as ")[0].strip()
            if not item or item == "self":
                paths.append((m.group(1), prefix))
                continue
            nested = tuple(p for p in re.split(r"::", item.split("{")[0]) if p)
            paths.append((m.group(1), prefix + nested))
    for m in PATH.finditer(text):
        paths.append((m.group(1), tuple(p for p in m.group(2).split("::") if p)))
    for head, rest in paths:
        resolved = resolve(head, rest)
        if resolved is None:
            continue
        target = file_of(found, resolved)
        if target and target != path:
            targets.add(target)
    return targets


def circles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    crates = sys.argv[1:] or sorted(
        os.path.join(root, "crates", c) for c in os.listdir(os.path.join(root, "crates"))
    )
    found_any = False
    for crate in crates:
        src = os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        found = modules(src)
        graph = {path: uses(found, module, path) for module, path in found.items()}
        for circle in circles(graph):
            found_any = True
            names = [os.path.relpath(p, src) for p in circle]
            edges = [
                f"{os.path.relpath(a, src)} -> {os.path.relpath(b, src)}"
                for a in circle for b in sorted(graph[a]) if b in circle
            ]
            print(f"{os.path.basename(crate)}: {' ⇄ '.join(names)}")
            for edge in edges:
                print(f"    {edge}")
    if not found_any:
        print("no circle of files importing each other")
    return 1 if found_any else 0


if __name__ == "__main__":
    sys.exit(main())
