"""Command-line arguments of the gallery's examples while the documentation is built."""

from __future__ import annotations

import tempfile
from pathlib import Path

_OUT = Path(tempfile.mkdtemp(prefix="fesub-gallery-"))


def example_argv(gallery_conf, script_vars):
    """An example's only argument: its output folder, a fresh one under this build's temporary
    directory (examples never write into the checkout)."""
    out = _OUT / Path(script_vars["src_file"]).stem
    out.mkdir(parents=True, exist_ok=True)
    return [str(out)]
