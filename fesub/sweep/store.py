"""The result store of a sweep: its manifest, one checked file per case, and gathering.

A store is a directory holding ``manifest.json`` (study, grid or cases, fixed parameters, units,
fesub version), written before the first case runs and compared on every resume (a different
sweep in the same store is refused with :class:`SweepError`; a missing or unreadable manifest is
reported and written again), ``fesub-result.json`` (the store is a result folder:
:func:`fesub.load` reopens it as :class:`~fesub.sweep.SweepData`; it also holds the store's
summary), ``cases/case-<hash>.json``, one file per case, named by a SHA-256 hash of the study name
and the case's full parameter dict, and ``claims/`` (see :mod:`fesub.sweep.claims`).

Each case file records the case's index, its parameters, its outcome and a SHA-256 checksum of
all three; it is written through a temporary file in the same directory that is then renamed
with :func:`os.replace` (atomic on POSIX and Windows), so a file in ``cases/`` is always
complete. Every case file is checked when it is read, by a run and by :func:`load_store` alike:
a file that cannot be read, is not a case record, fails its checksum, or whose index or
parameters are not those of a case of this sweep is not used; its case counts as missing (and is
computed again) and the file is listed in ``problems``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import warnings

import numpy as np

from ..atomic import unlink_quietly, write_json
from ..errors import FesubError, ParameterError
from ..io import FOLDER_MARKER
from .cases import Study, canonical_json, case_key, get_study, sweep_cases
from .claims import HOST_TAG
from .data import SweepData

STORE_FORMAT = "fesub-sweep/2"
#: stores of this format are read (and resumed: their case files, which carry no checksum, are
#: computed again)
_OLD_FORMATS = ("fesub-sweep/1",)


class SweepError(FesubError, RuntimeError):
    """A result store is inconsistent with the requested sweep, or the executor broke."""


# --- files and the manifest ----------------------------------------------------------------------


def _temp_beside(path: str):
    """A new temporary file ``.tmp-<pid>@<host tag>-*`` in the directory of ``path``: (fd, name).

    Unlike :func:`tempfile.mkstemp` (mode 0600) the file gets the usual permissions (0666 minus
    the umask), which the final file keeps after :func:`os.replace`.
    """
    d = os.path.dirname(path) or "."
    for _ in range(100):
        tmp = os.path.join(d, f".tmp-{os.getpid()}@{HOST_TAG}-{os.urandom(6).hex()}-"
                              f"{os.path.basename(path)}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    raise SweepError(f"cannot create a temporary file in {d!r}")  # pragma: no cover


def atomic_write_json(path: str, obj) -> None:
    """Write ``obj`` as JSON to ``path`` through a temporary file and :func:`os.replace`: ``path``
    is either absent, the old file or the complete new one, never a partial file."""
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(obj, fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _read_json(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def make_manifest(study: Study, body: dict, n: int, shape) -> dict:
    from ..version import __version__

    man = {"format": STORE_FORMAT, "study": study.name, **body, "shape": list(shape),
           "n_cases": n, "units": study.unit_table(), "primary": study.primary,
           "dims": {k: list(v) for k, v in study.dims.items()},
           "categories": {k: list(v) for k, v in study.categories.items()},
           "fesub_version": __version__,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    # the manifest names the fields, units and categories the store is read with: a byte of it
    # changed (a field renamed, a unit altered) would be read as good, so it carries the
    # checksum of its content as every case file does
    man["checksum"] = _checksum(man)
    return man


def _manifest_intact(man: dict) -> bool:
    """Whether a manifest of the current format carries its checksum and matches it."""
    try:
        return isinstance(man.get("checksum"), str) and man["checksum"] == _checksum(man)
    except (ParameterError, TypeError, ValueError):
        return False


def check_manifest(store: str, want: dict) -> tuple:
    """``(ok, problems)``: ``ok`` when the store's manifest is this sweep's, in the current format.

    A missing, unreadable or malformed manifest (or one of an older store format) is reported in
    ``problems`` and is to be written again: the case files name their parameters and are checked
    one by one, so nothing of another sweep can be mixed in. A readable manifest of another sweep
    is refused with :class:`SweepError`.
    """
    path = os.path.join(store, "manifest.json")
    again = "; it is written again (each case file is checked against this sweep)"

    def problem(text):
        return [{"file": "manifest.json", "index": None, "problem": text}]

    if not os.path.exists(path):
        cases_dir = os.path.join(store, "cases")
        if os.path.isdir(cases_dir) and any(f.endswith(".json") for f in os.listdir(cases_dir)):
            return False, problem(f"missing{again}")
        return False, []
    try:
        have = _read_json(path)
    except (OSError, ValueError) as exc:
        return False, problem(f"unreadable ({exc}){again}")
    if not isinstance(have, dict) or "format" not in have:
        return False, problem(f"not a sweep manifest{again}")
    if have["format"] not in (STORE_FORMAT, *_OLD_FORMATS):
        raise SweepError(f"store {store!r} is not a fesub sweep store (format {have['format']!r})")
    if not _manifest_ok(have):
        return False, problem(f"malformed (study, grid or cases, fixed){again}")
    if have["format"] == STORE_FORMAT and not _manifest_intact(have):
        return False, problem(f"its checksum is missing or does not match its content{again}")
    for key in ("study", "grid", "cases", "fixed"):
        try:
            same = canonical_json(have.get(key)) == canonical_json(want.get(key))
        except ParameterError:
            same = False
        if not same:
            raise SweepError(
                f"store {store!r} holds a different sweep ({key} differs: stored "
                f"{_short(have.get(key))}, requested {_short(want.get(key))}); refusing to mix "
                f"sweeps in one store: use another directory or start it afresh (overwrite)")
    if have["format"] != STORE_FORMAT:
        return False, problem(f"written by an older fesub ({have['format']}): the manifest is "
                              f"written again and the case files, which carry no checksum, are "
                              f"computed again")
    if have.get("fesub_version") != want.get("fesub_version"):
        warnings.warn(f"store {store!r} was started with fesub {have.get('fesub_version')}, "
                      f"resuming with {want.get('fesub_version')}", stacklevel=3)
    return True, []


def _short(v, n=120):
    s = json.dumps(v, default=str)
    return s if len(s) <= n else s[: n - 3] + "..."


def write_marker(store: str, summary: dict) -> None:
    """``fesub-result.json``: the store is a result folder that :func:`fesub.load` reopens."""
    write_json(os.path.join(store, FOLDER_MARKER), {"fesub_class": "fesub.sweep:load_store",
                                                   **summary})


def wipe_store(store: str) -> None:
    """Remove what a sweep store holds (case files, claims, manifest, marker); nothing else."""
    for sub, ok in (("cases", lambda f: f.startswith(("case-", ".tmp-"))),
                    ("claims", lambda f: True)):
        d = os.path.join(store, sub)
        if os.path.isdir(d):
            for f in os.listdir(d):
                if ok(f):
                    unlink_quietly(os.path.join(d, f))
    for f in ("manifest.json", FOLDER_MARKER):
        unlink_quietly(os.path.join(store, f))


# --- case records ------------------------------------------------------------------------------


def _checksum(rec: dict) -> str:
    """SHA-256 of the canonical JSON of a case record (without its checksum)."""
    return hashlib.sha256(canonical_json({k: v for k, v in rec.items() if k != "checksum"}).encode()
                          ).hexdigest()


def case_record(i: int, params: dict, outcome: dict) -> dict:
    """The record of case ``i`` as written: index, parameters, outcome and their checksum."""
    rec = {"index": i, "params": params, **outcome}
    rec["checksum"] = _checksum(rec)
    return rec


def _case_problem(rec, fname: str, study: str, n: int, keys=None, base=None):
    """Why ``rec`` (read from ``cases/fname``) is not a valid case of this sweep, or None.

    Valid: a JSON object with status ``ok`` (and a ``result`` object) or ``failed``, whose
    checksum matches its content, whose index is a case of the sweep and whose parameters are
    those of that case (their hash is the file name, and the case's own key in ``keys``, or
    they contain the grid point or listed case ``base(index)`` when the study is not at hand).
    """
    if not isinstance(rec, dict):
        return f"not a case record (a JSON {type(rec).__name__})"
    status = rec.get("status")
    if status not in ("ok", "failed"):
        return f"status {status!r} is neither 'ok' nor 'failed'"
    if status == "ok" and not isinstance(rec.get("result"), dict):
        return "status 'ok' without a result"
    if "checksum" not in rec:
        return "no checksum (written by an older fesub)"
    try:
        if rec["checksum"] != _checksum(rec):
            return "checksum mismatch (the file changed after it was written)"
    except ParameterError as exc:
        return f"not JSON data ({exc})"
    i, params = rec.get("index"), rec.get("params")
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
        return f"index {i!r} is not a case of this sweep (0 to {n - 1})"
    if not isinstance(params, dict):
        return "no parameters"
    if fname != f"case-{case_key(study, params)}.json":
        return "its parameters do not match its file name"
    if keys is not None:
        if fname != f"case-{keys[i]}.json":
            return f"its parameters are not those of case {i}"
    else:
        for k, v in base(i).items():
            if k not in params or canonical_json(params[k]) != canonical_json(v):
                return f"its parameters are not those of case {i} ({k} differs)"
    return None


def _read_case(path: str):
    """``(record, None)`` or ``(None, problem)`` for the case file ``path``."""
    try:
        return _read_json(path), None
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        return None, f"unreadable ({type(exc).__name__}: {exc})"


def done_case(path: str, study: str, n: int, keys, i: int, retry_failed: bool,
               problems: list | None = None) -> bool:
    """Whether case ``i`` has a valid file that a run is to keep (what is wrong with an invalid
    one is appended to ``problems``)."""
    rec, prob = _read_case(path)
    if rec is not None:
        prob = _case_problem(rec, os.path.basename(path), study, n, keys=keys)
    if prob is not None:
        if problems is not None:
            problems.append({"file": os.path.basename(path), "index": i,
                             "problem": f"{prob}; computed again"})
        return False
    return rec is not None and (rec.get("status") == "ok" or not retry_failed)


# --- gathering ------------------------------------------------------------------------------------


def _manifest_ok(man: dict) -> bool:
    """Whether a manifest has what gathering needs: a study, a grid or cases, fixed values."""
    grid, cases, fixed = man.get("grid"), man.get("cases"), man.get("fixed")
    return isinstance(man.get("study"), str) and isinstance(fixed, dict) and (
        (isinstance(grid, dict) and bool(grid) and cases is None
         and all(isinstance(v, list) and v for v in grid.values()))
        or (grid is None and isinstance(cases, list) and bool(cases)
            and all(isinstance(c, dict) for c in cases)))


def _read_manifest(store: str) -> dict:
    """The manifest of a store, or :class:`SweepError` saying why it cannot be used."""
    path = os.path.join(store, "manifest.json")
    if not os.path.isdir(store):
        raise SweepError(f"{store!r} is not a sweep store (not a directory)")
    if not os.path.exists(path):
        raise SweepError(f"{store!r} is not a sweep store (no manifest.json)")
    try:
        man = _read_json(path)
    except (OSError, ValueError) as exc:
        raise SweepError(f"the manifest of store {store!r} is unreadable ({exc}); run the sweep "
                         f"again to rewrite it") from None
    if not isinstance(man, dict) or man.get("format") not in (STORE_FORMAT, *_OLD_FORMATS):
        what = man.get("format") if isinstance(man, dict) else type(man).__name__
        raise SweepError(f"{store!r} is not a fesub sweep store (manifest format {what!r})")
    if not _manifest_ok(man):
        raise SweepError(f"the manifest of store {store!r} is malformed (study, grid or cases, "
                         f"fixed); run the sweep again to rewrite it")
    if man["format"] == STORE_FORMAT and not _manifest_intact(man):
        raise SweepError(f"the manifest of store {store!r} is damaged (its checksum is missing or "
                         f"does not match its content); run the sweep again to rewrite it (the "
                         f"case files are checked one by one and kept)")
    return man


def _manifest_cases(store: str, man: dict):
    """``(axes, shape, base)`` of the sweep a manifest records: the grid axes (empty for a list
    of cases), the grid shape (or ``(n,)``) and ``base(i)``, the parameters it gives case ``i``."""
    fixed = man["fixed"]
    if man["grid"] is None:
        def base(i):
            return dict(fixed, **man["cases"][i])

        return {}, (len(man["cases"]),), base
    try:
        axes = {k: np.asarray(v, float) for k, v in man["grid"].items()}
    except (TypeError, ValueError):
        raise SweepError(f"the manifest of store {store!r} has a grid axis that is not numbers") from None
    shape = tuple(a.size for a in axes.values())

    def base(i):
        idx = np.unravel_index(i, shape)
        return dict(fixed, **{k: float(a[j]) for (k, a), j in zip(axes.items(), idx)})

    return axes, shape, base


def _study_cases(man: dict, study, full, keys):
    """``(study, full, keys)``: the study of a manifest (None where it cannot be had here) and
    the full parameter dicts and keys of its cases (None where they cannot be rebuilt)."""
    st = study
    if st is None:
        try:
            st = get_study(man["study"])
        except ParameterError:  # a plugin study not importable here: checked against the grid
            st = None
    if keys is None and st is not None:
        try:
            full, keys, _, _ = sweep_cases(st, man["grid"], man["cases"], man["fixed"], None)
        except FesubError:  # the study's ranges changed since: checked against the grid
            full, keys = None, None
    return st, full, keys


def _read_records(cases_dir: str, study: str, n: int, keys, base, cases: list):
    """Read and check every case file of a store: ``(status, results, failures, problems,
    warned)``; the parameters each valid file records replace its entry of ``cases``."""
    status = np.zeros(n, np.int8)
    results: list = [None] * n
    failures, problems, warned = [], [], []
    files = sorted(f for f in os.listdir(cases_dir) if f.startswith("case-") and f.endswith(".json")) \
        if os.path.isdir(cases_dir) else []
    for f in files:
        rec, prob = _read_case(os.path.join(cases_dir, f))
        if rec is None and prob is None:  # removed meanwhile
            continue
        if prob is None:
            prob = _case_problem(rec, f, study, n, keys=keys, base=base)
        if prob is None and status[rec["index"]] != 0:
            prob = f"a second file for case {rec['index']}"
        if prob is not None:
            idx = rec.get("index") if isinstance(rec, dict) else None
            problems.append({"file": f, "index": idx if isinstance(idx, int) else None,
                             "problem": prob})
            continue
        i = rec["index"]
        cases[i] = rec["params"]
        if isinstance(rec.get("warnings"), list) and rec["warnings"]:
            warned.append({"index": i, "warnings": rec["warnings"]})
        if rec["status"] == "ok":
            status[i] = 1
            results[i] = rec["result"]
        else:
            status[i] = -1
            failures.append({"index": i, "params": rec["params"], "error": rec.get("error"),
                             "traceback": rec.get("traceback")})
    failures.sort(key=lambda d: d["index"])
    warned.sort(key=lambda d: d["index"])
    return status, results, failures, problems, warned


def _result_arrays(results: list, shape: tuple):
    """``(fields, other)``: each result name -> a float array of ``shape`` (+ the result's own
    shape; NaN where a case has no result) when every case gives numbers of one shape, else an
    object array of ``shape`` (None where a case has no result)."""
    n = len(results)
    names = []
    for r in results:
        for k in r or {}:
            if k not in names:
                names.append(k)
    fields, other = {}, {}
    for k in names:
        vals = [None if r is None else r.get(k) for r in results]
        arrs, ok = [], True
        for v in vals:
            if v is None:
                arrs.append(None)
                continue
            try:
                a = np.asarray(v, dtype=float)
            except (TypeError, ValueError):
                ok = False
                break
            arrs.append(a)
        shapes = {a.shape for a in arrs if a is not None}
        if ok and len(shapes) == 1:
            sub = shapes.pop()
            out = np.full((n,) + sub, np.nan)
            for i, a in enumerate(arrs):
                if a is not None:
                    out[i] = a
            fields[k] = out.reshape(shape + sub)
        else:
            obj = np.empty(n, dtype=object)
            for i, v in enumerate(vals):
                obj[i] = v
            other[k] = obj.reshape(shape)
    return fields, other


def gather_store(store: str, study=None, *, full=None, keys=None) -> SweepData:
    """Gather a store; case files that are not valid cases of its sweep are listed in
    ``problems`` (not raised). ``full``/``keys``: the sweep's cases and their keys when known."""
    store = os.fspath(store)
    man = _read_manifest(store)
    axes, shape, base = _manifest_cases(store, man)
    n = math.prod(shape)
    st, full, keys = _study_cases(man, study, full, keys)
    cases = list(full) if full is not None else [base(i) for i in range(n)]
    status, results, failures, problems, warned = _read_records(
        os.path.join(store, "cases"), man["study"], n, keys, base, cases)
    fields, other = _result_arrays(results, shape)
    units = dict(man.get("units") or (st.unit_table() if st is not None else {}))
    dims = {k: tuple(v) for k, v in (man.get("dims") or (st.dims if st is not None else {})).items()}
    cats = {k: tuple(v) for k, v in
            (man.get("categories") or (st.categories if st is not None else {})).items()}
    primary = man.get("primary", st.primary if st is not None else None)
    return SweepData(man["study"], axes, shape, fields, other, status.reshape(shape), failures,
                     cases, man, units, dims, primary, problems, cats, warned)


def load_store(store, *, warn: bool = True) -> SweepData:
    """Gather a result store into grid-shaped arrays and the list of failures (see :class:`SweepData`).

    Every case file is checked (its checksum, its index and its parameters against the sweep):
    one that fails is not used, its case counts as missing (and is computed again by the next
    :func:`run_sweep`), and it is listed in ``SweepData.problems`` (and warned about when
    ``warn``). Also what :func:`fesub.load` returns for a store.

    Parameters
    ----------
    store : str or os.PathLike
        Folder of the result store.
    warn : bool, optional
        Warn about case files not used; default True.

    Returns
    -------
    SweepData
        The gathered results, in the SI units the study declares (``"1"`` for dimensionless
        ones).
    """
    data = gather_store(store)
    if warn and data.problems:
        shown = "; ".join(f"{p['file']}: {p['problem']}" for p in data.problems[:5])
        more = f" (and {len(data.problems) - 5} more)" if len(data.problems) > 5 else ""
        warnings.warn(f"store {os.fspath(store)!r}: {len(data.problems)} case file(s) not used, "
                      f"their cases count as missing: {shown}{more}", stacklevel=2)
    return data
