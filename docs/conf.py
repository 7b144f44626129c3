"""Sphinx configuration of the fesub documentation.

Build (from the repository root, warnings are errors)::

    pip install ".[docs]" && sphinx-build -W -b html docs docs/_build/html

The package is imported as installed (this file does not put the checkout on ``sys.path``), so the
pages describe the compiled build that users get. Two pages are generated at build time from running
code: the validation table (``validation.py`` runs the recorded checks of the test suite) and the
performance table (``performance.py`` reads a pytest-benchmark JSON when there is one).
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from pathlib import Path

import fesub

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the generators beside this file (validation.py, performance.py)

project = "fesub"
author = "the fesub authors"
copyright = "the fesub authors"
release = fesub.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    # equations rendered to MathML at build time (docs/mathml.py): the site reads the same
    # opened from disk without a network (MathJax came from a CDN)
    "mathml",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
]
# no sphinx.ext.intersphinx: the build must not download inventories (CI reaches PyPI only)

templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "sg_execution_times.rst", "**.ipynb_checkpoints",
                    "auto_examples/*.py", "auto_examples/*.ipynb", "auto_examples/*.zip",
                    "auto_examples/*.json"]
root_doc = "index"
default_role = "code"          # `x` in docstrings is inline code, not an unresolved reference
nitpicky = False
suppress_warnings = []

# --- API reference: autodoc + autosummary, numpydoc docstrings through napoleon -------------------
# napoleon (part of Sphinx) rather than the numpydoc extension: it reads the numpydoc sections the
# same way, leaves informal entries ("path : PNG to write.") and unknown sections as text instead
# of warning, and adds no dependency.
autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = False
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True,
                           "member-order": "bysource"}
autodoc_typehints = "none"      # the numpydoc Parameters sections carry types and units
autodoc_class_signature = "separated"
autodoc_member_order = "bysource"
autoclass_content = "class"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True
napoleon_use_param = True


def _package_exports() -> dict[str, list[str]]:
    """Names each public package exports: module pages skip them (they have a page at package
    level), so every public function and class is documented once."""
    from api_names import PACKAGES, exported

    return {pkg: exported(pkg) for pkg in PACKAGES}


autosummary_context = {"package_exports": _package_exports()}

# --- gallery: every script in examples/ runs during the build --------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",       # run every script, not only plot_*.py
    "ignore_pattern": r"__init__\.py",
    "reset_argv": "gallery_argv.example_argv",   # each example's output folder: a temporary one
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "plot_gallery": "True",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "capture_repr": (),
    "show_memory": False,
}

# figures that the package writes through fesub.plots.style.save stay open during the build, so the
# gallery scrapes them like any other matplotlib figure
os.environ.setdefault("MPLBACKEND", "Agg")
from fesub.plots import style as _style  # noqa: E402


def _save_keep_open(fig, path, *, dpi: int = 120):
    """``fesub.plots.style.save`` during the build: write the PNG, leave the figure open."""
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path


_style.save = _save_keep_open

# --- generated pages: validation and performance ---------------------------------------------------


def _generate(app):
    import performance
    import validation

    out = HERE / "_generated"
    out.mkdir(exist_ok=True)
    validation.write_page(out / "validation_table.rst")
    performance.write_page(out / "performance_table.rst")
    performance.write_history(out / "performance_history.rst", out)


# Docstrings write absolute values and norms as |x| (readable in help()); reStructuredText would
# take |x| for a substitution. Outside literals, such pairs are escaped before parsing.
_BARS = re.compile(r"(?<![\\|\w])\|(?=[^\s|])([^|\n]*?[^\s|\\])\|(?![A-Za-z0-9|])")
_LITERAL = re.compile(r"(``.+?``|`[^`]+`)")


def _escape_bars(line: str) -> str:
    if line.lstrip().startswith(("| ", "+-", "+=")) or line.strip() == "|":
        return line                                   # line blocks and grid tables keep their bars
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else _BARS.sub(r"\\|\1\\|", p) for i, p in enumerate(parts))


_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)]|#\.)\s")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _preformatted(lines: list[str]) -> list[str]:
    """Docstrings also write formulas and algorithms as a plain-text block, indented under a line
    that ends with a colon, continuation lines indented further. reStructuredText would read a
    ragged block as a block quote with unexpected indentation; such a block (and only such) becomes
    a literal block, shown as written."""
    out = list(lines)
    for i in range(len(out) - 2):
        head = out[i].rstrip()
        if not head.endswith(":") or head.endswith("::") or head.lstrip().startswith(":") \
                or out[i + 1].strip():
            continue
        base = _indent(out[i + 2]) if out[i + 2].strip() else -1
        if base <= _indent(out[i]):
            continue
        if _LIST_ITEM.match(out[i + 2]):
            continue                                  # a list: its items' lines hang indented
        block = []
        for ln in out[i + 2:]:
            if ln.strip() and _indent(ln) < base:
                break
            block.append(ln)
        if any(ln.strip() and _indent(ln) > base for ln in block):
            out[i] = head + ":"
    return out


_NAMED_SECTIONS = ("Parameters", "Other Parameters", "Attributes")
_FIELD = re.compile(r"\*{0,2}[A-Za-z_][\w.]*(\s*,\s*\*{0,2}[A-Za-z_][\w.]*)*\s*(:.*)?$")


def _prose_after_fields(lines: list[str]) -> list[str]:
    """A paragraph of prose after the entries of a Parameters or Attributes section (not indented,
    not a ``name : type`` entry) would be read as more entries: it is given a Notes heading, as
    numpydoc wants prose after the entries to be."""
    out, section = [], None
    for i, ln in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt.strip() and set(nxt.strip()) == {"-"} and ln.strip():
            section = ln.strip()
        elif section in _NAMED_SECTIONS and ln.strip() and _indent(ln) == 0 and i > 0 \
                and not lines[i - 1].strip() and not _FIELD.match(ln.strip()):
            out += ["Notes", "-----"]
            section = "Notes"
        out.append(ln)
    return out


def _drop_type_docstring(app, what, name, obj, options, lines):
    """Before napoleon reads the sections: a constant without a docstring of its own (no ``#:``
    comment) would show the docstring of its type (dict, int, numpy.ndarray), so it is dropped;
    prose after the entries of a section gets its Notes heading."""
    own = getattr(obj, "__doc__", None)             # an instance's __doc__ is its type's
    own = inspect.cleandoc(own) if isinstance(own, str) else ""
    if what in ("data", "attribute") and own and "\n".join(lines).strip() == own.strip():
        lines[:] = []
    else:
        lines[:] = _prose_after_fields(lines)


def _process_docstring(app, what, name, obj, options, lines):
    lines[:] = [_escape_bars(ln) for ln in _preformatted(lines)]


def _light_navigation(app, pagename, templatename, context, doctree):
    """The theme's sidebar expands only the current page's branch: with one page per public
    name, the fully expanded tree on every page made writing the HTML quadratic in the pages."""
    toctree = context.get("toctree")
    if toctree is None:
        return

    def collapsed(**kw):
        kw.update(collapse=True)
        return toctree(**kw)

    context["toctree"] = collapsed


def setup(app):
    app.connect("builder-inited", _generate)
    app.connect("autodoc-process-docstring", _drop_type_docstring, priority=100)
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("html-page-context", _light_navigation, priority=400)


# --- HTML ------------------------------------------------------------------------------------------
html_theme = "furo"
html_math_renderer = "mathml"
html_title = f"fesub {release}"
html_static_path = []
html_show_sourcelink = False
pygments_style = "sphinx"
