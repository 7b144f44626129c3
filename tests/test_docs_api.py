"""The API reference covers the public face of fesub, and public docstrings document parameters.

Fast (no Sphinx build): the pages in docs/api/ are reST sources whose ``autosummary`` blocks name
what gets a generated page; a public name (in a package's ``__all__``) or a public module without
an entry there fails here, so it cannot go undocumented.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS))
from api_names import PACKAGES, exported, public_modules  # noqa: E402

sys.path.remove(str(DOCS))


def _page(package: str) -> Path:
    return DOCS / "api" / f"{'fesub' if package == 'fesub' else package.rsplit('.', 1)[1]}.rst"


def autosummary_entries(text: str) -> set[str]:
    """Full names listed in the ``autosummary`` blocks of a reST page (relative entries resolved
    against the page's ``automodule`` / ``currentmodule``)."""
    names, current, in_block = set(), "", False
    for line in text.splitlines():
        m = re.match(r"\.\. (?:automodule|currentmodule|module):: (\S+)", line)
        if m:
            current = m.group(1)
            continue
        if line.startswith(".. autosummary::"):
            in_block = True
            continue
        if in_block:
            s = line.strip()
            if not s or s.startswith(":"):
                continue
            if not line.startswith(" "):
                in_block = False
                continue
            s = s.lstrip("~")
            names.add(s if s.startswith("fesub") or not current else f"{current}.{s}")
    return names


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_a_page(package):
    page = _page(package)
    assert page.is_file(), f"{package} has no API page {page}"
    listed = autosummary_entries(page.read_text())
    missing = [n for n in exported(package) if f"{package}.{n}" not in listed]
    assert not missing, f"public names of {package} missing from {page.name}: {missing}"
    modules = [m for m in public_modules(package) if m not in listed]
    assert not modules, f"public modules of {package} missing from {page.name}: {modules}"


def test_entries_parser_sees_a_known_entry():
    """The check above cannot pass vacuously: the parser finds the entries of a page."""
    listed = autosummary_entries(_page("fesub.coulomb").read_text())
    assert "fesub.coulomb.steady_state" in listed and "fesub.coulomb.analytic" in listed


# --- parameters documented with units -------------------------------------------------------------

#: a unit in the Parameters section: (m), [N], (-), Hz, rad/s, "dimensionless", "units of", ...
_UNIT = re.compile(r"[\(\[][^()\[\]]*?(?:\b(?:m|s|N|Hz|kg|Pa|rad|J|W|1|dB)\b|-)[^()\[\]]*?[\)\]]|"
                   r"\b(?:Hz|rad/s|m/s|N/m|kg|dimensionless|units? of|unitless|SI)\b")


def _has_parameters(obj) -> bool:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    return any(p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())


#: parameter types that carry no physical quantity (a name, a path, a stream, a flag, an object)
_NO_QUANTITY = re.compile(r"^(?:(?:str|bool|object|file-like|os\.PathLike|path|[A-Z]\w*)(?:,? or |, optional|$))+")


def _only_non_quantities(section: str) -> bool:
    """Whether every parameter of a Parameters section has a type that carries no unit (strings,
    paths, streams, flags, objects of a class): such a section has no unit to name."""
    types = [ln.partition(" : ")[2] for ln in section.splitlines() if re.match(r"^\w[\w, ]* : ", ln)]
    return bool(types) and all(_NO_QUANTITY.match(ty) for ty in types)


def docstring_problems() -> list[str]:
    """Public functions and classes (every package's ``__all__``) that take parameters but whose
    docstring has no numpydoc Parameters section, or one that names no unit."""
    out = []
    for package in PACKAGES:
        mod = importlib.import_module(package)
        for name in exported(package):
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or not _has_parameters(obj):
                continue
            doc = inspect.getdoc(obj) or ""
            m = re.search(r"^Parameters\n-{4,}\n(.*?)(?:^\S[^\n]*\n-{4,}\n|\Z)", doc, re.S | re.M)
            if m is None:
                out.append(f"{package}.{name}: no Parameters section")
            elif not _UNIT.search(m.group(1)) and not _only_non_quantities(m.group(1)):
                out.append(f"{package}.{name}: Parameters name no unit")
    return out


# every public function and class that takes parameters documents them with their units (or takes
# only names, paths, streams, flags or objects, which have none): a new one must too
KNOWN_DOCSTRING_PROBLEMS = 0


def test_the_no_unit_rule_exempts_only_non_quantities():
    assert _only_non_quantities("path : str or os.PathLike\n    Where.\nwarn : bool, optional\n    Say.")
    assert _only_non_quantities("sys : HBSystem\n    The system.")
    for quantity in ("h : float\n    Step.", "n : int\n    Count.", "x : ndarray\n    Values.",
                     "path : str\n    Where.\nmu : float\n    Friction."):
        assert not _only_non_quantities(quantity), quantity


def test_public_docstrings_document_parameters_with_units():
    problems = docstring_problems()
    print("\n".join(problems))
    assert len(problems) <= KNOWN_DOCSTRING_PROBLEMS, (
        f"{len(problems)} public functions/classes lack a Parameters section with units "
        f"(at most {KNOWN_DOCSTRING_PROBLEMS} allowed):\n" + "\n".join(problems))
