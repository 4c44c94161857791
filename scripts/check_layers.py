#!/usr/bin/env python3
"""The layer rule, as a check: a file under src/parasol/<layer>/ includes only parasol headers of
its own layer or of the layers below it (ARCHITECTURE.md's order). The applications are one layer:
one may use another's library (mlr reads text with lda's tokeniser), but the uses must not form a
cycle. Prints `file:line: what is wrong` for each offence; exit 1 if there is any.
Usage: scripts/check_layers.py [ROOT]"""
import pathlib
import re
import sys

# Lowest first; each folder may include itself and those before it.
LAYERS = ["core", "comm", "collective", "ps", "data", "modelpar", "sched", "dl", "apps", "bindings"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"parasol/([a-z_]+)/(?:([a-z_]+)/)?')


def layer_of(parts):
    """The layer and, for an application, its name, of a path below src/parasol/."""
    top = parts[0]
    return top, parts[1] if top == "apps" and len(parts) > 1 else None


def main(root):
    src = root / "src" / "parasol"
    problems, app_uses = [], {}
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(src).parts
        layer, app = layer_of(rel)
        if layer not in LAYERS:
            problems.append(f"{path}:1: folder '{layer}' is not a layer of ARCHITECTURE.md")
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            used = m.group(1)
            if used not in LAYERS:
                problems.append(f"{path}:{number}: includes 'parasol/{used}/', which is not a layer")
            elif LAYERS.index(used) > LAYERS.index(layer):
                problems.append(f"{path}:{number}: {layer}/ includes {used}/, a layer above it")
            elif used == "apps" and app and m.group(2) and m.group(2) != app:
                app_uses.setdefault(app, {}).setdefault(m.group(2), f"{path}:{number}")
    problems += cycles(app_uses)
    for p in problems:
        print(p)
    return 1 if problems else 0


def cycles(uses):
    """A `file:line` for each application that reaches itself through the others' libraries."""
    found = []
    for start in sorted(uses):
        stack, seen = [(start, [start])], set()
        while stack:
            app, trail = stack.pop()
            for used, where in sorted(uses.get(app, {}).items()):
                if used == start:
                    found.append(f"{where}: the applications depend on each other: {' -> '.join(trail + [used])}")
                elif used not in seen:
                    seen.add(used)
                    stack.append((used, trail + [used]))
    return found


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
