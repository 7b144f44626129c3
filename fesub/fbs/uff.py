"""FRF matrices to and from Universal File Format data sets 58 (the format of modal-test software).

Each FRF ``H[:, i, j]`` is one data set 58 (function type 4, frequency response function):
response node and direction of output ``i``, reference node and direction of input ``j``,
abscissa in Hz, complex ordinate. Written in ASCII with double-precision ordinates (12
significant digits). Reading and writing go through ``pyuff``, a maintained reader of the format
(``pip install pyuff``, part of fesub's ``uff`` and ``test`` extras).
"""

from __future__ import annotations

import numpy as np

from ..errors import FesubError, ParameterError
from .frf import FRFMatrix

__all__ = ["write_uff58", "read_uff58"]

# specific data types of UFF (record 8-10): frequency, displacement, velocity, acceleration, force
_ABSCISSA_FREQUENCY, _FORCE = 18, 13
_ORDINATE = {"receptance": 8, "mobility": 11, "accelerance": 12}
_FRF_FUNCTION = 4


def _pyuff():
    try:
        import pyuff
    except ImportError:
        raise FesubError("reading and writing UFF files needs pyuff: pip install pyuff "
                         "(or pip install 'fesub[uff]')") from None
    return pyuff


def write_uff58(frf: FRFMatrix, path, *, entity: str = "fesub") -> str:
    """Write every FRF of ``frf`` as a UFF data set 58 to ``path`` (overwritten); returns it.

    Parameters
    ----------
    frf : FRFMatrix
        The FRFs: frequency (Hz) as abscissa, ``H`` as complex ordinate in the unit of its
        ``quantity`` (m/N, (m/s)/N or (m/s^2)/N), recorded in the data set's data types.
    path : str or os.PathLike
        UFF file to write (overwritten).
    entity : str, optional
        Entity name written for the response and reference (default ``"fesub"``).

    Returns
    -------
    str
        The path written.
    """
    pyuff = _pyuff()
    if not isinstance(frf, FRFMatrix):
        raise ParameterError("write_uff58 takes an FRFMatrix")
    f = frf.frequency
    even = f.size > 1 and np.allclose(np.diff(f), f[1] - f[0], rtol=1e-12, atol=0)
    sets = []
    for i, (rn, rd) in enumerate(frf.outputs):
        for j, (fn, fd) in enumerate(frf.inputs):
            sets.append(pyuff.prepare_58(
                binary=0, func_type=_FRF_FUNCTION, id1=f"{frf.quantity} {rn}:{rd}/{fn}:{fd}",
                rsp_ent_name=entity, rsp_node=int(rn), rsp_dir=int(rd),
                ref_ent_name=entity, ref_node=int(fn), ref_dir=int(fd),
                abscissa_spacing=1 if even else 0, abscissa_spec_data_type=_ABSCISSA_FREQUENCY,
                ordinate_spec_data_type=_ORDINATE[frf.quantity],
                orddenom_spec_data_type=_FORCE, data=frf.H[:, i, j], x=f))
    pyuff.UFF(str(path)).write_sets(sets, mode="overwrite")
    return str(path)


def _check_complete(path) -> None:
    """Refuse a file whose last data set is not closed: every UFF data set sits between two
    delimiter lines ``    -1``, and a reader silently drops a set cut short (a copy or a download
    that stopped), so an odd count of delimiters means a truncated file."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise FesubError(f"cannot read {path} as a UFF file: {exc.strerror or exc}") from None
    marks = sum(1 for ln in lines if ln.rstrip() == b"    -1")
    if marks == 0:
        raise FesubError(f"{path} is not a UFF file (no data set delimiters '    -1')")
    if marks % 2:
        raise FesubError(f"{path} is truncated: its last data set is not closed by the delimiter "
                         "'    -1'")


def read_uff58(path) -> FRFMatrix:
    """Read the FRF data sets 58 of a UFF file into one :class:`FRFMatrix` (every response /
    reference pair found must be present: a full matrix, on one frequency grid).

    Parameters
    ----------
    path : str or os.PathLike
        UFF file holding FRF data sets 58 (function type 4) with abscissa in Hz and one ordinate
        type: receptance (m/N), mobility ((m/s)/N) or accelerance ((m/s^2)/N).

    Returns
    -------
    FRFMatrix
        The FRFs (frequency in Hz, ``H`` in the unit of the ordinate type found).
    """
    pyuff = _pyuff()
    _check_complete(path)
    try:
        uff = pyuff.UFF(str(path))
        types = list(uff.get_set_types())
        idx = [k for k, t in enumerate(types) if int(t) == 58]
        sets = [uff.read_sets(k) for k in idx]
    except FesubError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyuff raises bare Exceptions
        raise FesubError(f"cannot read {path} as a UFF file: {exc}") from None
    sets = [s for s in sets if int(s.get("func_type", 0)) == _FRF_FUNCTION]
    if not sets:
        raise FesubError(f"{path} holds no FRF data set 58 (function type 4)")
    kinds = {int(s.get("ordinate_spec_data_type", 8)) for s in sets}
    quantity = {v: k for k, v in _ORDINATE.items()}.get(kinds.pop() if len(kinds) == 1 else -1)
    if quantity is None:
        raise FesubError(f"{path}: FRFs of mixed or unknown ordinate types {sorted(kinds)}")
    for s in sets:
        n = s.get("num_pts")
        try:
            x, y = np.asarray(s["x"], dtype=float), np.asarray(s["data"])
        except (KeyError, TypeError, ValueError):
            raise FesubError(f"{path}: a data set 58 without readable abscissa or ordinates") from None
        if n is not None and (x.size != int(n) or y.size != int(n)):
            raise FesubError(f"{path}: the data set 58 {s.get('id1', '')!r} announces {int(n)} "
                             f"points and holds {y.size} (a truncated or edited file)")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise FesubError(f"{path}: the data set 58 {s.get('id1', '')!r} holds non-finite values")
    f = np.asarray(sets[0]["x"], dtype=float)
    outs = list(dict.fromkeys((int(s["rsp_node"]), int(s["rsp_dir"])) for s in sets))
    ins = list(dict.fromkeys((int(s["ref_node"]), int(s["ref_dir"])) for s in sets))
    H = np.full((f.size, len(outs), len(ins)), np.nan + 0j)
    for s in sets:
        x = np.asarray(s["x"], dtype=float)
        if x.shape != f.shape or not np.allclose(x, f, rtol=1e-10, atol=0):
            raise FesubError(f"{path}: the FRFs are not on one frequency grid")
        H[:, outs.index((int(s["rsp_node"]), int(s["rsp_dir"]))),
          ins.index((int(s["ref_node"]), int(s["ref_dir"])))] = s["data"]
    if np.isnan(H).any():
        raise FesubError(f"{path}: the FRF matrix is incomplete (some response/reference pairs "
                         "are missing)")
    return FRFMatrix(f, H, np.array(outs), np.array(ins), quantity,
                     {"source": str(path), "format": "UFF 58 (ASCII)"})
