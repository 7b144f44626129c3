"""Reading mesh files through meshio with one failure mode: a :class:`~fesub.errors.MeshError`
naming the file.

meshio reports some failures by printing and calling ``sys.exit`` (an empty or truncated ``.vtu``,
for one), others by raising whatever its parser raised. :func:`meshio_read` turns each of them,
the reader's exit included, into a ``MeshError`` naming the file and what the reader said, so that
no reader ever ends the program or leaks an exception of its own to a user's script.
"""

from __future__ import annotations

import contextlib
import io
import os

from ..errors import MeshError

__all__ = ["meshio_read"]


def meshio_read(path, *, file_format: str | None = None):
    """Read ``path`` with meshio.

    Parameters
    ----------
    path : str or path-like
        Mesh file (coordinates in whatever unit the file holds; fesub reads them as m).
    file_format : str, optional
        meshio format name, when the extension does not tell.

    Returns
    -------
    meshio.Mesh
        What meshio read.

    Raises
    ------
    MeshError
        Naming the file: missing, empty, truncated or garbled, or a format meshio does not know;
        also when the reader calls ``sys.exit`` (its printed explanation is in the message).
    """
    import meshio

    path = os.fspath(path)
    if not os.path.exists(path):
        raise MeshError(f"{path}: no such mesh file")
    if os.path.isdir(path):
        raise MeshError(f"{path}: is a folder, not a mesh file")
    console = io.StringIO()
    try:
        with contextlib.redirect_stdout(console), contextlib.redirect_stderr(console):
            return meshio.read(path, file_format=file_format)
    except SystemExit:
        # meshio prints a reader's failure and calls sys.exit(1): report it as a MeshError instead
        detail = " ".join(console.getvalue().split())[-300:] or "unreadable"
        raise MeshError(f"{path}: cannot read mesh ({detail})") from None
    except Exception as exc:  # noqa: BLE001 - meshio raises anything on garbled input
        hint = ""
        if "gmsh:physical" in str(exc):
            hint = ("; some Gmsh entities carry no physical group: define physical groups for all "
                    "saved entities (Gmsh: Mesh.SaveAll = 0) or save as format 2.2")
        raise MeshError(f"{path}: cannot read mesh ({type(exc).__name__}: {exc}){hint}") from None
