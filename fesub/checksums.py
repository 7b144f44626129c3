"""Checksums of result files: a record appended after a file's HDF5 bytes, verified before any
HDF5 reader sees the file.

:func:`seal` appends to an HDF5 file a record of BLAKE2b-128 digests: of the whole file and of the
stored bytes of every dataset (its chunks, or its one contiguous block), then a footer of 32
bytes. HDF5 and netCDF readers ignore bytes past the end a file declares, so other tools read a
sealed file as before. :func:`verify` checks the record with plain file reads only: a damaged file
can make an HDF5 reader fail in any way, or hang inside the library, so nothing of HDF5 runs
before the bytes are known to be the ones written. A damaged file is a
:class:`~fesub.errors.FesubError` naming the variable whose data changed, or saying that the
file's structure or attributes did. :mod:`fesub.io` seals every file it writes and verifies every
file it opens. Knows no physics.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .errors import FesubError

__all__ = ["seal", "verify", "byte_ranges", "MAGIC"]

#: the record of checksums ends every file written by :func:`fesub.io.save_dataset`: after the HDF5 bytes
#: (which HDF5 and netCDF readers ignore), a JSON record, then a footer of 32 bytes: the record's
#: length (8 bytes, little-endian), its BLAKE2b-128 digest (16 bytes) and this magic (8 bytes)
MAGIC = b"FESUBSUM"
_CHECKSUMS = "fesub-checksums/1"
_BLOCK = 1 << 20


def _digest(fh, ranges) -> str:
    h = hashlib.blake2b(digest_size=16)
    for off, n in ranges:
        fh.seek(off)
        while n > 0:
            chunk = fh.read(min(n, _BLOCK))
            if not chunk:
                return "short"
            h.update(chunk)
            n -= len(chunk)
    return h.hexdigest()


def byte_ranges(path) -> dict:
    """``{dataset name: [[offset, length], ...]}``: where each HDF5 dataset's stored bytes lie
    (its chunks, or its one contiguous block); datasets kept in their header have none."""
    import h5py

    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if not isinstance(obj, h5py.Dataset):
                return
            dsid, ranges = obj.id, []
            if obj.chunks is not None:
                for i in range(dsid.get_num_chunks()):
                    info = dsid.get_chunk_info(i)
                    ranges.append([int(info.byte_offset), int(info.size)])
            else:
                off = dsid.get_offset()
                if off is not None:
                    ranges.append([int(off), int(dsid.get_storage_size())])
            out[name] = ranges

        f.visititems(visit)
    return out


def seal(path) -> None:
    """Append the record of checksums to the HDF5 file ``path`` (see :data:`MAGIC`): the
    digest of the whole file and of each dataset's stored bytes."""
    ranges = byte_ranges(path)
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        record = {"format": _CHECKSUMS, "algorithm": "blake2b-128", "size": size,
                  "file": _digest(fh, [(0, size)]),
                  "variables": {name: {"ranges": r, "digest": _digest(fh, r)}
                                for name, r in sorted(ranges.items())}}
        blob = json.dumps(record, separators=(",", ":")).encode()
        fh.seek(size)
        fh.write(blob + len(blob).to_bytes(8, "little")
                 + hashlib.blake2b(blob, digest_size=16).digest() + MAGIC)


def verify(path) -> None:
    """Verify the checksums a result file carries (written by :func:`fesub.io.save_dataset`), before any
    HDF5 reader touches it: a damaged file can make a reader fail in any way, or even hang.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.nc`` file.

    Raises
    ------
    ~fesub.errors.FesubError
        When the file carries no checksums (not written by fesub, or rewritten by another tool),
        is truncated or extended, or any byte of it changed: the message names the variable
        whose data changed, or says that the file's structure or attributes did.
    """
    path = Path(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise FesubError(f"cannot read {path}: {exc.strerror or exc}") from None
    with fh:
        total = os.fstat(fh.fileno()).st_size
        if total >= 32:
            fh.seek(total - 32)
            foot = fh.read(32)
        else:
            foot = b""
        if len(foot) != 32 or foot[24:] != MAGIC:
            head = (fh.seek(0), fh.read(8))[1]
            what = ("carries no checksums (not written by fesub's save, or rewritten by another "
                    "tool); it cannot be trusted (to open a file of an older fesub anyway: "
                    "fesub.load(path, verify=False))" if head == b"\x89HDF\r\n\x1a\n"
                    else "is not a fesub result (a netCDF-4/HDF5 file sealed by fesub)")
            raise FesubError(f"cannot read {path}: it {what}")
        n = int.from_bytes(foot[:8], "little")
        if not 0 < n <= total - 32:
            raise FesubError(f"{path} is damaged: its record of checksums is unreadable")
        fh.seek(total - 32 - n)
        blob = fh.read(n)
        if hashlib.blake2b(blob, digest_size=16).digest() != foot[8:24]:
            raise FesubError(f"{path} is damaged: its record of checksums does not match its "
                             "own digest")
        try:
            rec = json.loads(blob)
            size, whole, variables = int(rec["size"]), str(rec["file"]), dict(rec["variables"])
        except (ValueError, KeyError, TypeError):
            raise FesubError(f"{path} is damaged: its record of checksums is unreadable") from None
        if size + n + 32 != total:
            raise FesubError(f"{path} is damaged: {total} bytes where {size + n + 32} were "
                             "written (a truncated or extended copy)")
        if _digest(fh, [(0, size)]) == whole:
            return
        bad = []
        for name, v in variables.items():
            try:
                ok = _digest(fh, [(int(a), int(b)) for a, b in v["ranges"]]) == v["digest"]
            except (KeyError, TypeError, ValueError):
                ok = False
            if not ok:
                bad.append(name)
    if bad:
        raise FesubError(f"{path} is damaged: the data of variable"
                         f"{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))} changed "
                         "after it was written (checksum mismatch)")
    raise FesubError(f"{path} is damaged: its structure or attributes changed after it was "
                     "written (checksum mismatch; no variable's data did)")
