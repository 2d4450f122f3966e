"""The package's imports point down: no import circle (imports inside functions counted),
and each phase of ``ad/`` imports only the phases below it (docs/design.md, "The floors
of ad/"). Read from the source with ``ast``; nothing is imported."""
import ast
import os

import numba_adstack

PACKAGE = os.path.dirname(numba_adstack.__file__)

# ad/'s floors, lowest first; a module may import its own floor and those below it.
FLOORS = ["rules", "runtime", "typeinfo", "generated_source", "capture", "facts", "plan",
          "emit", "tangent", "dispatch", "calls"]
BASE = {"rules", "runtime", "typeinfo", "generated_source"}   # shared by every floor


def _modules():
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                parts = ["numba_adstack"] + os.path.relpath(path, PACKAGE)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts.pop()
                found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module, path):
    """Every numba_adstack module ``module`` imports, at its top or inside a function."""
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1]
                                + ([node.module] if node.module else []))
            else:
                base = node.module
            for a in node.names:
                target = base + "." + a.name
                target = target if target in MODULES else base
                if target in MODULES and target != module:
                    out.add(target)
    return out


IMPORTS = {m: _imports(m, p) for m, p in MODULES.items()}


def _floor(module):
    parts = module.split(".")
    if parts[:2] != ["numba_adstack", "ad"] or len(parts) < 3:
        return None
    return parts[2]


def test_no_import_circle():
    state = {}
    stack = []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(IMPORTS[m]):
            if state.get(t) == "open":
                raise AssertionError("import circle: " + " -> ".join(
                    stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(MODULES):
        if m not in state:
            visit(m)


def test_phases_import_only_the_phases_below():
    upward = []
    for m, targets in IMPORTS.items():
        here = _floor(m)
        if here is None or here in BASE:
            continue
        for t in targets:
            there = _floor(t)
            if there is not None and FLOORS.index(there) > FLOORS.index(here):
                upward.append("%s imports %s" % (m, t))
    assert not upward, upward


def test_ad_top_level_is_its_floors():
    ad = os.path.join(PACKAGE, "ad")
    entries = sorted(e[:-3] if e.endswith(".py") else e for e in os.listdir(ad)
                     if e.endswith(".py") or os.path.isfile(os.path.join(ad, e, "__init__.py")))
    assert len(entries) <= 12, entries
    assert set(entries) - {"__init__"} == set(FLOORS), entries


def test_one_module_runs_generated_source():
    # Generated source is run by ad/generated_source.py only (exec_source, and the disk
    # cache's modules through exec_file_source), so that its text is kept where inspect
    # and tracebacks find it.
    runs = []
    for m, path in MODULES.items():
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("exec", "eval"):
                runs.append("%s:%d" % (m, node.lineno))
    assert runs == ["numba_adstack.ad.generated_source:%d" % _exec_line()], runs


def _exec_line():
    path = MODULES["numba_adstack.ad.generated_source"]
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "exec":
            return node.lineno
    return None
