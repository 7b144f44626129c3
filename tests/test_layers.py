"""The house's layers, checked on the source: no import cycle, no private name across modules,
kernels reached only through the backend chooser, twins that know no physics, and a front door
whose map names things that exist."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path


import fesub

ROOT = Path(fesub.__file__).resolve().parent


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield ".".join(parts), path, is_pkg


MODULES = {name: (path, is_pkg) for name, path, is_pkg in _modules()}


def _package(mod: str) -> str:
    return mod if MODULES[mod][1] else mod.rpartition(".")[0]


def _resolve(mod: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package(mod).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(mod: str, *, top_level_only: bool):
    """(target module, imported names, node) of each import in ``mod``."""
    tree = ast.parse(MODULES[mod][0].read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:  # imports under `if TYPE_CHECKING:` / try blocks at module level count too
        nodes = [n for stmt in tree.body for n in ast.walk(stmt)
                 if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("fesub"):
                    yield a.name, [], node
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(mod, node)
            if target.startswith("fesub"):
                yield target, [a.name for a in node.names], node


def _edges(*, top_level_only: bool = True):
    """Module -> modules it imports (at module level, or anywhere with ``top_level_only=False``).

    An import of one of the module's own packages (``from . import x`` names the package too) is
    no edge: a package is loaded before any module inside it."""
    graph = {m: set() for m in MODULES}
    for mod in MODULES:
        for target, names, _ in _imports(mod, top_level_only=top_level_only):
            for name in names:  # `from pkg import submodule`
                if f"{target}.{name}" in MODULES:
                    graph[mod].add(f"{target}.{name}")
            if target in MODULES and not (top_level_only is False and mod.startswith(target + ".")):
                graph[mod].add(target)
    return graph


def _cycles(graph):
    """The import cycles of ``graph``: strongly connected components of two modules or more."""
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            # a package importing its own submodules, which import siblings, is no cycle of
            # modules; a cycle is two modules that each need the other to load
            mods = [c for c in comp if not MODULES[c][1]]
            if len(mods) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycle_at_module_level():
    assert _cycles(_edges()) == []


def test_no_import_cycle_hidden_in_a_function():
    """A lazy import (inside a function) that closes a circle only hides it: the two modules still
    need each other. Counted with every import, wherever it stands."""
    assert _cycles(_edges(top_level_only=False)) == []


def test_the_cycle_checks_can_fail():
    """The checker finds a circle closed by a lazy import, and one at module level."""
    graph = {"fesub.contact.analyses.eigen": {"fesub.contact.analyses.deformed"},
             "fesub.contact.analyses.deformed": {"fesub.contact.analyses.eigen"}}
    assert _cycles(graph) == [sorted(graph)]
    assert _cycles({"fesub.io": {"fesub.errors"}, "fesub.errors": set()}) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_uses(mod):
    """What ``mod`` takes from elsewhere that is private: a private name of another module (a
    helper two modules share lives in a module of its own under a public name), a kernel module
    outside the backend chooser, a private module of another package."""
    pkg = _package(mod)
    for target, names, node in _imports(mod, top_level_only=False):
        for name in names:
            if _private(name) and target != mod and f"{target}.{name}" not in MODULES:
                yield f"{mod}:{node.lineno} imports {target}.{name}"
        if target.startswith("fesub._core") and not pkg.startswith("fesub._core"):
            yield f"{mod}:{node.lineno} imports the kernel module {target} (use fesub._backend.kernels)"
        parts = target.split(".")
        if any(p.startswith("_") and not p.startswith("__") for p in parts[1:]) and \
                not target.startswith(pkg + ".") and target != pkg and \
                target not in ("fesub._backend", "fesub._core") and not target.startswith("fesub._core"):
            yield f"{mod}:{node.lineno} imports the private module {target}"


def test_no_private_name_across_modules():
    found = [u for mod in MODULES for u in _private_uses(mod)]
    assert found == []


def _private_cimports(paths):
    """``file:line cimports module.name`` for each private name a compiled file takes from
    another (``from fesub._core._pgs cimport pgs_solve``: the .pxd files are modules too)."""
    found = []
    for path in paths:
        text = Path(path).read_text()
        for m in re.finditer(r"^from\s+([\w.]+)\s+cimport\s+(.+)$", text, re.M):
            if not m.group(1).startswith("fesub"):
                continue
            line = text.count("\n", 0, m.start()) + 1
            for name in (n.strip().split(" as ")[0] for n in m.group(2).strip("()").split(",")):
                if _private(name):
                    found.append(f"{Path(path).name}:{line} cimports {m.group(1)}.{name}")
    return found


def test_no_private_name_across_compiled_modules():
    assert _private_cimports(sorted(ROOT.glob("_core/*.p[yx][xd]"))) == []


def test_the_private_name_checks_can_fail(tmp_path, monkeypatch):
    """A module of a package taking a private helper of its sibling is found (lazily too), and so
    is a compiled file cimporting one; a private module of its own package and public names
    are not."""
    bad = tmp_path / "bad.py"
    bad.write_text("from .store import SweepError\nfrom . import _helpers\n\n"
                   "def f():\n    from .cases import _jsonable\n")
    monkeypatch.setitem(MODULES, "fesub.sweep.bad", (bad, False))
    monkeypatch.setitem(MODULES, "fesub.sweep._helpers", (bad, False))
    assert list(_private_uses("fesub.sweep.bad")) == ["fesub.sweep.bad:5 imports fesub.sweep.cases._jsonable"]
    pyx = tmp_path / "k.pyx"
    pyx.write_text("from libc.math cimport _x\nfrom fesub._core._pgs cimport pgs_solve, _hidden\n")
    assert _private_cimports([pyx]) == ["k.pyx:2 cimports fesub._core._pgs._hidden"]


def test_kernel_twins_import_no_physics():
    for mod, (path, _) in MODULES.items():
        if mod.startswith("fesub._core."):
            for target, _, node in _imports(mod, top_level_only=False):
                assert target.startswith("fesub._core") or target in ("fesub.errors", "fesub._backend"), \
                    f"{mod}:{node.lineno} imports {target}"


def test_every_module_imports_alone():
    import subprocess
    import sys

    code = ("import importlib, sys\nbad = []\n"
            f"for m in {sorted(MODULES)!r}:\n"
            "    if m.endswith('__main__'):\n        continue\n"
            "    for k in [k for k in sys.modules if k.startswith('fesub')]:\n"
            "        del sys.modules[k]\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except ImportError as e:\n        bad.append((m, str(e)))\n"
            "print(bad)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          cwd=str(ROOT.parent))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]", proc.stdout[-2000:]


def test_front_door_map_names_what_exists():
    names = re.findall(r"``((?:fesub\.)?[a-z_]+\.[A-Za-z_.]+)``", fesub.__doc__)
    assert len(names) >= 10
    for dotted in names:
        obj = fesub
        for part in dotted.removeprefix("fesub.").split("."):
            obj = getattr(obj, part, None) or importlib.import_module(
                f"{obj.__name__}.{part}")
        assert obj is not None, dotted


#: the rooms of the contact package, each importing only itself and the rooms before it
CONTACT_ROOMS = ("geometry", "engine", "sliding", "analyses")


def test_contact_rooms_import_only_the_rooms_before_them():
    """geometry (search) < engine (bodies, interfaces, stepper) < sliding (the seed paper's system,
    a model on the engine) < analyses (what the linearised sliding states predict): every import,
    lazy ones too, goes down this list or stays in its room (ARCHITECTURE.md)."""
    def room(mod):
        parts = mod.split(".")
        return CONTACT_ROOMS.index(parts[2]) if len(parts) > 2 and parts[:2] == ["fesub", "contact"] \
            and parts[2] in CONTACT_ROOMS else None

    bad = []
    for mod in MODULES:
        here = room(mod)
        if here is None:
            continue
        for target, names, node in _imports(mod, top_level_only=False):
            for t in [target] + [f"{target}.{n}" for n in names]:
                there = room(t)
                if there is not None and there > here:
                    bad.append(f"{mod}:{node.lineno} imports {t}")
    assert bad == []
    assert {m.split(".")[2] for m in MODULES if m.startswith("fesub.contact.") and room(m) is None} == set()


#: the package's layers from the bottom up (ARCHITECTURE.md); a module imports, anywhere in it,
#: only modules of its own layer or of the layers below. The front door (``fesub/__init__.py``)
#: stands above layer 2: what it re-exports must not be read back from below.
LAYERS = (
    ("fesub._core", "fesub.errors", "fesub.version", "fesub._backend", "fesub.limits", "fesub.parallel",
     "fesub.atomic", "fesub.checksums", "fesub.io"),
    ("fesub.fe", "fesub.substructure", "fesub.fbs", "fesub.continuation", "fesub.signal", "fesub.plots"),
    ("fesub.contact", "fesub.coulomb", "fesub.hbm", "fesub.nonsmooth", "fesub.circular"),
    ("fesub",),
    ("fesub.models",),
    ("fesub.sweep",),
    ("fesub.cli", "fesub.__main__"),
)


def _layer(mod: str):
    """The layer of a module (the longest listed prefix), None for a name outside the package."""
    best, level = "", None
    for i, names in enumerate(LAYERS):
        for p in names:
            if (mod == p or mod.startswith(p + ".")) and len(p) > len(best):
                best, level = p, i
    return level


def _upward_imports(modules):
    bad = []
    for mod in modules:
        here = _layer(mod)
        for target, names, node in _imports(mod, top_level_only=False):
            # `from pkg import submodule` is the submodule; `from pkg import name` is pkg
            targets = [f"{target}.{n}" if f"{target}.{n}" in MODULES else target for n in names] or [target]
            for t in targets:
                there = _layer(t)
                if there is not None and there > here:
                    bad.append(f"{mod}:{node.lineno} imports {t}")
    return bad


def test_every_module_imports_only_its_layer_and_those_below():
    assert {m for m in MODULES if _layer(m) is None} == set()
    assert _upward_imports(MODULES) == []


def test_the_layer_check_can_fail(tmp_path, monkeypatch):
    """A physics module that imports the model registry (a layer above it), even lazily inside a
    function, is found, and so is a name read back from the front door; imports downwards are
    not."""
    bad = tmp_path / "bad.py"
    bad.write_text("from ..errors import ParameterError\n\ndef f():\n    from ..models import build\n"
                   "    from .. import __version__\n    from ..version import __version__\n")
    monkeypatch.setitem(MODULES, "fesub.hbm.bad", (bad, False))
    assert _upward_imports(["fesub.hbm.bad"]) == ["fesub.hbm.bad:4 imports fesub.models",
                                                  "fesub.hbm.bad:5 imports fesub"]
