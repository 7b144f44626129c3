"""Equations rendered to MathML when the site is built: the pages need no script and no network.

Sphinx's default renderer (MathJax) loads a script from a CDN in the reader's browser, so a site
opened from disk without a network showed equations as LaTeX source. Here every ``:math:`` role and
``.. math::`` block is converted once, at build time, by latex2mathml (a maintained, pure-Python
converter, MIT licence) into presentation MathML, which every current browser draws itself
(MathML Core). No TeX installation is needed and nothing is copied into the repository. An
equation the converter cannot read is a build warning (an error under ``sphinx-build -W``) naming
the page and the LaTeX.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)


def to_mathml(latex: str, display: str) -> str:
    """MathML of one LaTeX formula (``display`` 'inline' or 'block')."""
    from latex2mathml.converter import convert

    return convert(latex.strip(), display=display)


def _convert(self, node, latex: str, display: str) -> str:
    try:
        return to_mathml(latex, display)
    except Exception as exc:  # noqa: BLE001 - any failure of the converter is reported
        logger.warning("equation not rendered to MathML (%s): %s", exc, latex, location=node)
        return f"<code>{self.encode(latex)}</code>"


def _visit_inline(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_convert(self, node, node.astext(), "inline"))
    self.body.append("</span>")
    raise nodes.SkipNode


def _visit_block(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    # equations separated by a blank line are one aligned block; lines broken by \\ are aligned
    parts = [p.strip() for p in node.astext().split("\n\n") if p.strip()]
    latex = r" \\ ".join(parts)
    if len(parts) > 1 or r"\\" in latex:
        if r"\begin{" not in latex:
            # align*: the environment the converter lays out as a table, unnumbered (it reads no
            # "aligned", and "align" numbers every row)
            latex = r"\begin{align*}" + latex + r"\end{align*}"
    self.body.append(_convert(self, node, latex, "block"))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", inline_renderers=(_visit_inline, None),
                               block_renderers=(_visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
