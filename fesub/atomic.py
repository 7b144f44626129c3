"""Files written whole or not at all, and the JSON text of results.

A file written through :func:`atomic_write` (or :func:`atomic_write_text`, :func:`write_json`)
goes to a temporary file beside its path, gets the permissions of the process's umask and is
renamed onto the path: a reader, or a rerun after an interrupt, sees the old file or the new one,
never half of one; a Ctrl-C during the write is held until the file is in place. JSON is written
with NumPy values and paths (:func:`json_default`) and read back with a malformed file refused by
name (:func:`read_json`).

The result files of :mod:`fesub.io` are written this way; :mod:`fesub.io` exports these names
too (they are documented there).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import tempfile
import threading
from pathlib import Path

import numpy as np

from .errors import FesubError

__all__ = ["atomic_write", "atomic_write_text", "json_default", "read_json", "write_json"]


def json_default(o):
    """``default=`` hook of :func:`json.dumps` for NumPy scalars and arrays and paths.

    Non-finite floats are written as JSON's NaN/Infinity extensions (which :mod:`json` reads back);
    any other type is an error rather than a silent string.

    Parameters
    ----------
    o : object
        The value :mod:`json` cannot serialise itself: a NumPy array or scalar (written as a list
        or a number, its unit unchanged: the caller records it, as in :func:`quantity`) or a
        :class:`pathlib.Path` (written as a string).

    Returns
    -------
    list or int or float or bool or str
        A JSON-serialisable equivalent of ``o``, values unchanged.

    Raises
    ------
    TypeError
        For any other type.
    """
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


@contextlib.contextmanager
def _sigint_held():
    """Hold SIGINT (Ctrl-C) until the block ends, then deliver it to the handler that was in
    place: a file being written is finished, not abandoned half-way (an interrupt inside the
    HDF5 writer's constructor would also leave an object whose finaliser fails at exit). Only in
    the main thread, where Python delivers signals; elsewhere the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    except ValueError:  # (not the main interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)

def _atomic(path: Path, write) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, give it the umask's permissions,
    then rename it to ``path``: a reader (or a rerun after an interrupt) sees the old file or the
    new one, never half of one. A Ctrl-C during the write is held until the file is in place
    (:func:`_sigint_held`): the write of one result takes well under a second to a few seconds."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        with _sigint_held():
            write(tmp)
            os.chmod(tmp, _umask_mode())
            os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise
    return path


def atomic_write_text(path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (through a temporary file and a rename).

    Parameters
    ----------
    path : str or os.PathLike
        File to write; its folder must exist. A reader sees the old file or the new one, never
        a partial one.
    text : str
        Content, written as UTF-8.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    return _atomic(Path(path), lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def atomic_write(path, write) -> Path:
    """Write a file atomically with a writer of one's own (a VTU file through meshio, say).

    Parameters
    ----------
    path : str or os.PathLike
        File to write; its folder must exist.
    write : Callable
        ``write(tmp)`` writes the whole file to the path ``tmp`` (a temporary file beside
        ``path``, whose name ends in ``.tmp``: a writer that chooses the format by the suffix
        must be told it).

    Returns
    -------
    pathlib.Path
        The path written; a reader sees the old file or the new one, never a partial one.
    """
    return _atomic(Path(path), write)


def write_json(path, obj, indent: int = 2) -> Path:
    """Write ``obj`` (with NumPy values) as JSON to ``path`` atomically; returns the path.

    Parameters
    ----------
    path : str or os.PathLike
        JSON file to write; its folder must exist.
    obj : object
        JSON-serialisable data (dicts, lists, numbers, strings, NumPy arrays and scalars, paths;
        see :func:`json_default`). Numbers are written as they are: their units are the caller's
        to record (a summary's ``{"value", "unit"}`` entries, see :func:`quantity`).
    indent : int, optional
        Spaces of indentation (-); default 2.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    return atomic_write_text(path, json.dumps(obj, indent=indent, default=json_default) + "\n")


def read_json(path):
    """Read a JSON file, turning a malformed one into a :class:`FesubError` naming it.

    Parameters
    ----------
    path : str or os.PathLike
        JSON file to read (UTF-8).

    Returns
    -------
    object
        The decoded content (dicts, lists, numbers, strings), numbers in whatever units the file
        records.
    """
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FesubError(f"cannot read {path}: {exc}") from None


def _umask_mode() -> int:
    """Permissions of a new file under this process's umask (``mkstemp`` makes files 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def unlink_quietly(path) -> None:
    """Remove the file ``path`` if it is there; nothing happens when it is not, or cannot be
    removed (a temporary file left behind, a claim another process removed first)."""
    try:
        os.unlink(path)
    except OSError:
        pass
