"""The public face of fesub, as the API reference documents it.

A package's public names are its ``__all__``; a package without one (``fesub.fe``) exports the
classes and functions its ``__init__`` imports from its own modules. Public modules are the
modules and subpackages of a package whose names do not start with an underscore.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

#: packages and modules with a page in docs/api/ (fesub.cli is the command line, documented in
#: the user guide, and fesub._core holds the kernels behind the backend chooser)
PACKAGES = [
    "fesub", "fesub.fe", "fesub.substructure", "fesub.fbs", "fesub.contact", "fesub.coulomb",
    "fesub.hbm", "fesub.nonsmooth", "fesub.circular", "fesub.continuation", "fesub.sweep",
    "fesub.models", "fesub.plots", "fesub.signal", "fesub.io", "fesub.errors", "fesub.limits", "fesub.parallel",
]


def exported(package: str) -> list[str]:
    """Public names of ``package``: its ``__all__``, else the classes and functions its
    ``__init__`` takes from its own modules."""
    mod = importlib.import_module(package)
    names = getattr(mod, "__all__", None)
    if names is not None:
        return list(names)
    out = []
    for name, obj in vars(mod).items():
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and \
                getattr(obj, "__module__", "").startswith(package + "."):
            out.append(name)
    return out


def public_modules(package: str) -> list[str]:
    """Full names of the public modules and subpackages of ``package`` (none for a module)."""
    mod = importlib.import_module(package)
    if not hasattr(mod, "__path__") or package == "fesub":
        return []
    return [f"{package}.{m.name}" for m in pkgutil.iter_modules(mod.__path__)
            if not m.name.startswith("_")]
