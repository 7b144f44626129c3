"""``report.html``: one page per study with the summary table and every figure with its caption."""

from __future__ import annotations

import html
import json
from pathlib import Path

__all__ = ["write_report"]


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)) and len(v) > 8:
        return html.escape(json.dumps(v[:8])[:-1] + ", ...]")
    if isinstance(v, (list, dict, tuple)):
        return html.escape(json.dumps(v))
    return html.escape(str(v))


def _table(title: str, items: dict) -> str:
    if not items:
        return ""
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{_fmt(q.get('value'))}</td>"
                   f"<td>{html.escape(str(q.get('unit') or ''))}</td></tr>" for k, q in items.items())
    return (f"<h2>{html.escape(title)}</h2><table><tr><th>name</th><th>value</th><th>unit</th></tr>"
            f"{rows}</table>")


def write_report(path, summary: dict, figures) -> Path:
    """Write ``report.html``: header, parameters and results tables, notes, figures with captions.

    ``figures`` is a list of ``(file name relative to the report, one-line caption)``.
    """
    from ..atomic import atomic_write_text

    study = summary.get("study", "fesub")
    notes = "".join(f"<li>{html.escape(str(n))}</li>" for n in summary.get("notes", []))
    figs = "".join(
        f'<figure><img src="{html.escape(f)}" alt="{html.escape(c)}"><figcaption>'
        f"<b>{html.escape(f)}</b>: {html.escape(c)}</figcaption></figure>" for f, c in figures)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fesub {html.escape(study)}</title>
<style>
body {{ font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin-bottom: 1em; }}
td, th {{ border: 1px solid #ccc; padding: 2px 8px; text-align: left; font-size: 90%; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; border: 1px solid #eee; }}
figcaption {{ font-size: 90%; color: #444; }}
</style></head><body>
<h1>fesub {html.escape(study)}</h1>
<p>fesub {html.escape(str(summary.get('fesub_version', '')))}, created
{html.escape(str(summary.get('created', '')))}. Numbers: <code>summary.json</code> beside this page;
results: the <code>.nc</code> files (<code>fesub.load(path)</code>, or netCDF tools).</p>
{_table('Parameters', summary.get('parameters', {}))}
{_table('Results', summary.get('results', {}))}
{'<h2>Notes</h2><ul>' + notes + '</ul>' if notes else ''}
{'<h2>Figures</h2>' + figs if figs else ''}
</body></html>
"""
    return atomic_write_text(path, page)
