"""Craig-Bampton reductions of several parts: run in parallel, kept on disk by content.

A model of several substructures (a disc and its pads, the parts of a bolted assembly) is reduced
part by part, each independently of the others. :func:`reduce_parts` takes one :class:`PartSpec`
per part (mesh, material, clamps, boundary node sets, number of fixed-interface modes, damping)
and returns their :class:`~fesub.substructure.CraigBampton` models:

* in parallel: the parts are spread over a local process pool (``jobs`` workers, one BLAS
  thread each, :func:`fesub.parallel.worker_pool`; their reductions come back through files in
  memory, :func:`fesub.parallel.reply_through_file`) or over a Dask cluster (``client``: a
  ``distributed.Client``, as ``fesub sweep --scheduler`` uses), largest part first;
* cached: each reduction is written to a file named by :func:`part_key`, the SHA-256 of
  everything it depends on: the mesh (coordinates, cells, node sets), the material, the clamps,
  the boundary sets, the number of modes, the damping, the element options, the fesub version and
  the source text of the reduction code (FE assembly, substructure, Craig-Bampton). A second call
  with the same inputs reads the file instead of reducing; any change of an input or of that code
  gives another key. The file is an uncompressed NumPy ``.npz`` archive (written atomically by
  :func:`fesub.io.atomic_write`; every member CRC-checked when read) holding the reduced matrices,
  the transformation, the modes' frequencies and the substructure's stiffness and mass over its
  retained DOFs: a rerun reads arrays and assembles nothing. A damaged, foreign or stale file is
  recomputed and replaced, with a warning. The reduction itself is a :class:`ReducedPart`, a
  :mod:`fesub.io` result (``save`` / :func:`fesub.load`) like every other.

The cache folder is ``cache=`` (a path), else ``$FESUB_CACHE_DIR``, else
``$XDG_CACHE_HOME/fesub/reduced`` (``~/.cache/fesub/reduced``); ``cache=False`` turns it off.

Units: SI (m, kg, N/m, Hz, s).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FesubError, ModelError, ParameterError
import scipy.sparse as sp

from ..fe.assembly import DofMap
from ..fe.assembly3d import SolidDofMap
from ..fe.solid_mesh import SolidMesh
from ..atomic import atomic_write
from ..io import Result, summary_record
from .craig_bampton import CraigBampton
from .substructure import Substructure

__all__ = ["PartSpec", "ReducedPart", "part_key", "reduce_part", "reduce_parts", "cache_dir"]

#: modules whose source text enters every key (a change of the reduction code is a new key)
_CODE = ("fesub.fe.assembly", "fesub.fe.assembly3d", "fesub.fe.solid_shapes", "fesub.fe.elements", "fesub.fe.solid",
         "fesub.fe.factor", "fesub.substructure.substructure", "fesub.substructure.craig_bampton",
         "fesub.substructure.fixed_interface", "fesub.substructure.reduction")
_code_hash: dict = {}


@dataclass(frozen=True)
class PartSpec:
    """What a part's Craig-Bampton reduction is made of.

    Parameters
    ----------
    name : str
        The part's name (the substructure's and the body's).
    mesh : fesub.fe.SolidMesh or fesub.fe.Mesh
        Its mesh (m).
    material : Solid, PlaneStress, PlaneStrain or BeamSection
        Its material (Pa, kg/m^3).
    boundary : tuple of str
        Node sets whose nodes stay physical (every component; nodes of a clamped set are left out).
    n_modes : int
        Fixed-interface modes kept (-).
    clamped : tuple of str
        Node sets clamped (every component).
    rayleigh : (float, float)
        Rayleigh damping ``(alpha, beta)`` (1/s, s).
    incompatible, lumped : bool
        Element options of :class:`~fesub.substructure.Substructure`.
    """

    name: str
    mesh: object
    material: object
    boundary: tuple
    n_modes: int
    clamped: tuple = ()
    rayleigh: tuple = (0.0, 0.0)
    incompatible: bool = True
    lumped: bool = False

    def __post_init__(self):
        for what in ("boundary", "clamped"):
            v = getattr(self, what)
            v = (v,) if isinstance(v, str) else tuple(v)
            object.__setattr__(self, what, v)
            missing = [s for s in v if s not in self.mesh.node_sets]
            if missing:
                raise ModelError(f"part {self.name!r}: no node set {missing} in its mesh ({what}); "
                                 f"its node sets are {sorted(self.mesh.node_sets)}")
        if not self.boundary:
            raise ModelError(f"part {self.name!r}: a Craig-Bampton reduction needs boundary node sets")
        n = self.n_modes
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"part {self.name!r}: n_modes must be an integer >= 0, got {n!r}")
        object.__setattr__(self, "rayleigh", tuple(float(v) for v in self.rayleigh))

    def substructure(self) -> Substructure:
        """The part's substructure (assembled now)."""
        return Substructure(self.mesh, self.material, clamped=self.clamped, rayleigh=self.rayleigh,
                            incompatible=self.incompatible, lumped=self.lumped, name=self.name)

    def boundary_dofs(self, sub: Substructure) -> np.ndarray:
        """Model DOFs of the boundary sets' nodes, clamped ones left out (sorted)."""
        nodes = np.unique(np.concatenate([self.mesh.nodes(s) for s in self.boundary]))
        idx = sub._index[sub.dofmap.dofs(nodes)]
        return np.unique(idx[idx >= 0])


def _code_version() -> str:
    """SHA-256 of the fesub version and the source of the reduction modules (computed once)."""
    if "v" not in _code_hash:
        import importlib

        from ..version import __version__

        h = hashlib.sha256(__version__.encode())
        for mod in _CODE:
            try:
                path = importlib.import_module(mod).__file__
                h.update(Path(path).read_bytes())
            except (ImportError, OSError, TypeError):
                h.update(f"<no {mod}>".encode())
        _code_hash["v"] = h.hexdigest()
    return _code_hash["v"]


def part_key(spec: PartSpec) -> str:
    """The content key of a part's reduction (hex SHA-256): mesh, material, clamps, boundary,
    modes, damping, element options, fesub version and reduction code."""
    h = hashlib.sha256(_code_version().encode())
    m = spec.mesh
    h.update(np.ascontiguousarray(m.points, float).tobytes())
    cells = m.cells if isinstance(m.cells, dict) else m.blocks()
    for t in sorted(cells):
        h.update(t.encode())
        h.update(np.ascontiguousarray(cells[t], np.int64).tobytes())
    for name in sorted(m.node_sets):
        h.update(name.encode())
        h.update(np.ascontiguousarray(m.node_sets[name], np.int64).tobytes())
    mat = spec.material
    h.update(f"{type(mat).__name__}{sorted(vars(mat).items())!r}".encode())
    h.update(repr((spec.boundary, spec.clamped, int(spec.n_modes), spec.rayleigh, spec.incompatible,
                   spec.lumped)).encode())
    return h.hexdigest()


def _cache_file(folder: Path, key: str) -> Path:
    """The cache file of the part of content key ``key`` in ``folder``."""
    return Path(folder) / f"{key}.npz"


def cache_dir(cache=None) -> Path | None:
    """The cache folder: ``cache`` (a path), else ``$FESUB_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/fesub/reduced`` (default ``~/.cache/fesub/reduced``); None when ``cache`` is
    False."""
    if cache is False:
        return None
    if cache not in (None, True):
        return Path(cache)
    env = os.environ.get("FESUB_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fesub" / "reduced"


@dataclass
class ReducedPart(Result):
    """A part's Craig-Bampton reduction as stored: the reduced matrices, the transformation and the
    modes' frequencies (the substructure's matrices are assembled again when it is restored: that
    costs less than reading them).

    Parameters
    ----------
    name, key : str
        The part and its content key (:func:`part_key`).
    n_dofs : int
        DOFs of the substructure (its retained DOFs).
    boundary : (nb,) int
        Boundary DOFs (model numbering).
    Kr, Mr : (k + nb, k + nb)
        Reduced stiffness (N/m) and mass (kg).
    T : (n, k + nb)
        Transformation ``u = T q``.
    mode_freqs_hz : (k,)
        Frequencies of the fixed-interface modes (Hz).
    seconds : float
        Wall time of the assembly and reduction (s).
    """

    kind = "reduced-part"
    name: str = ""
    key: str = ""
    n_dofs: int = 0
    boundary: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    Kr: np.ndarray = None
    Mr: np.ndarray = None
    T: np.ndarray = None
    mode_freqs_hz: np.ndarray = None
    seconds: float = 0.0

    @property
    def n_modes(self) -> int:
        return int(np.size(self.mode_freqs_hz))

    def craig_bampton(self, spec: PartSpec, sub: Substructure | None = None) -> CraigBampton:
        """The :class:`~fesub.substructure.CraigBampton` model over ``spec``'s substructure
        (assembled unless given; no reduction solve)."""
        sub = spec.substructure() if sub is None else sub
        if sub.n_dofs != self.n_dofs:
            raise ModelError(f"the stored reduction of {spec.name!r} has {self.n_dofs} DOFs, its substructure "
                             f"{sub.n_dofs}")
        return CraigBampton.from_reduced(sub, self.boundary, self.n_modes, self.Kr, self.Mr, self.T,
                                         self.mode_freqs_hz, info={"method": "stored", "key": self.key})

    def to_xarray(self):
        import xarray as xr

        data = {
            "reduced": (("matrix", "q", "q2"), np.stack([self.Kr, self.Mr]), {"units": "N/m, kg"}),
            "T": (("dof", "q"), self.T, {"units": "1"}),
            "boundary": (("boundary",), np.asarray(self.boundary, np.int64)),
            "mode_freqs": (("mode",), np.asarray(self.mode_freqs_hz, float), {"units": "Hz"}),
        }
        return xr.Dataset(data, coords={"matrix": ["K", "M"]},
                          attrs={"name": self.name, "key": self.key, "seconds": float(self.seconds)})

    @classmethod
    def from_xarray(cls, ds):
        red = ds["reduced"].values
        return cls(name=str(ds.attrs["name"]), key=str(ds.attrs["key"]), n_dofs=int(ds.sizes["dof"]),
                   boundary=ds["boundary"].values, Kr=red[0], Mr=red[1], T=ds["T"].values,
                   mode_freqs_hz=ds["mode_freqs"].values, seconds=float(ds.attrs["seconds"]))

    def summary(self) -> dict:
        f = np.asarray(self.mode_freqs_hz)
        return summary_record(self.kind, {"name": (self.name, None), "key": (self.key, None)},
                              {"dofs": (int(self.n_dofs), None), "boundary_dofs": (int(self.boundary.size), None),
                               "modes": (int(f.size), None),
                               "highest_mode": (float(f.max()) if f.size else None, "Hz"),
                               "reduction_time": (float(self.seconds), "s")})


def reduce_part(spec: PartSpec, key: str | None = None, jobs: int | None = 1) -> ReducedPart:
    """Assemble and reduce one part: a :class:`ReducedPart`.

    ``jobs`` is passed to :class:`~fesub.substructure.CraigBampton` (1 inside a pool's worker)."""
    return _reduce(spec, key, jobs)[0]


def _reduce(spec: PartSpec, key: str | None = None, jobs: int | None = 1):
    """A worker's task: ``(ReducedPart, Substructure)`` of one part (the substructure travels
    back with its reduction: it is not assembled a second time)."""
    t0 = time.perf_counter()
    sub = spec.substructure()
    b = spec.boundary_dofs(sub)
    if b.size == 0:
        raise ModelError(f"part {spec.name!r}: its boundary sets {spec.boundary} hold no free DOF")
    cb = CraigBampton(sub, boundary=b, n_modes=int(spec.n_modes), jobs=jobs)
    part = ReducedPart(name=spec.name, key=key or part_key(spec), n_dofs=sub.n_dofs, boundary=cb.boundary,
                       Kr=cb.Kr, Mr=cb.Mr, T=cb.T, mode_freqs_hz=cb.mode_freqs_hz, seconds=time.perf_counter() - t0)
    return part, sub


#: the cache file's layout (a file of another layout is recomputed)
_FORMAT = "fesub reduced part, npz 1"
_CACHE_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, FesubError)


def _cache_write(path: Path, part: ReducedPart, sub: Substructure) -> None:
    """Write ``part`` and ``sub``'s retained stiffness and mass to ``path`` (uncompressed .npz,
    atomically)."""
    arrays = {"format": np.array(_FORMAT), "name": np.array(part.name), "key": np.array(part.key),
              "n_dofs": np.array(part.n_dofs), "seconds": np.array(part.seconds),
              "boundary": np.asarray(part.boundary, np.int64), "Kr": part.Kr, "Mr": part.Mr, "T": part.T,
              "mode_freqs_hz": np.asarray(part.mode_freqs_hz, float), "retained": sub.retained,
              "ndpn": np.array(sub.dofmap.ndpn)}
    for what in ("K", "M"):
        m = getattr(sub, what)
        arrays.update({f"{what}_data": m.data, f"{what}_indices": m.indices, f"{what}_indptr": m.indptr})

    def write(tmp):
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)

    atomic_write(path, write)


def _stored(a: dict, what: str, n: int):
    """The stored retained matrix ``what`` (n, n), CSR, entry for entry as it was written."""
    return sp.csr_matrix((a[f"{what}_data"], a[f"{what}_indices"], a[f"{what}_indptr"]), shape=(n, n))


def _cache_read(path: Path, key: str, spec: PartSpec):
    """``(ReducedPart, Substructure)`` from the cache file ``path`` when it holds ``key``'s
    reduction; None when there is no such file, or (with a warning) when it is damaged, foreign or
    stale."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            a = {name: z[name] for name in z.files}         # reads every member: CRC-checked
        if str(a["format"]) != _FORMAT or str(a["key"]) != key or str(a["name"]) != spec.name:
            raise ValueError("it holds another part or another layout")
        mesh = spec.mesh
        n = mesh.n_points
        dm = SolidDofMap(n) if isinstance(mesh, SolidMesh) else DofMap(n, int(a["ndpn"]))
        retained = a["retained"]
        K, M = (_stored(a, what, retained.size) for what in ("K", "M"))
        sub = Substructure.from_matrices(mesh, spec.material, K, M, dm, clamped=spec.clamped,
                                         rayleigh=spec.rayleigh, name=spec.name, retained_only=True)
        if not np.array_equal(sub.retained, retained):
            raise ValueError("its retained DOFs differ from the part's")
        part = ReducedPart(name=spec.name, key=key, n_dofs=int(a["n_dofs"]), boundary=a["boundary"], Kr=a["Kr"],
                           Mr=a["Mr"], T=a["T"], mode_freqs_hz=a["mode_freqs_hz"], seconds=float(a["seconds"]))
    except _CACHE_ERRORS as exc:
        warnings.warn(f"the cached reduction of part {spec.name!r} ({path}) cannot be used ({exc}); "
                      "reducing it again", RuntimeWarning, stacklevel=3)
        return None
    return part, sub


def reduce_parts(specs, *, jobs: int = 1, client=None, cache=None, progress: bool = False):
    """Craig-Bampton models of several parts, reduced in parallel and cached by content.

    Parameters
    ----------
    specs : sequence of PartSpec
        The parts (distinct names).
    jobs : int
        Local worker processes (1: in this process). Ignored when ``client`` is given.
    client : distributed.Client, optional
        A Dask client: the parts to reduce are submitted to its cluster.
    cache : path, bool or None
        Cache folder (see :func:`cache_dir`); False: no cache.
    progress : bool
        A progress bar over the parts.

    Returns
    -------
    models : dict
        Part name -> :class:`~fesub.substructure.CraigBampton`.
    info : dict
        ``reduced`` and ``cached`` (part names), ``seconds`` (name -> reduction wall time, s, of
        the run that made it), ``cache`` (the folder or None), ``wall_time`` (s).
    """
    from ..parallel import received, reply_folder, reply_through_file, worker_pool

    t0 = time.perf_counter()
    specs = list(specs)
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ParameterError(f"part names must be distinct, got {names}")
    folder = cache_dir(cache)
    keys = [part_key(s) for s in specs]
    parts, subs, todo = {}, {}, []
    for s, k in zip(specs, keys):
        hit = _cache_read(_cache_file(folder, k), k, s) if folder is not None else None
        if hit is not None:
            parts[s.name], subs[s.name] = hit
        else:
            todo.append((s, k))
    cached = [n for n in names if n in parts]
    # largest first: the pool's last task is then a small one
    todo.sort(key=lambda sk: -sk[0].mesh.n_points)
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="reducing parts", unit="part")
    if client is not None:
        futures = [client.submit(_reduce, s, k, 1, pure=False) for s, k in todo]
        for (s, _), fut in zip(todo, futures):
            parts[s.name], subs[s.name] = fut.result()
            bar is not None and bar.update()
    else:
        # the workers' reductions (20 MB for a 5400-DOF plate) come back through files in memory,
        # not the pool's pipe (fesub.parallel.reply_through_file); the pool is stopped before the
        # folder is removed
        n = min(int(jobs), max(len(todo), 1))
        with reply_folder() if n > 1 else contextlib.nullcontext() as replies, worker_pool(n) as pool:
            if pool == "serial":
                for s, k in todo:
                    parts[s.name], subs[s.name] = _reduce(s, k, 1)
                    bar is not None and bar.update()
            else:
                futures = [pool.submit(reply_through_file, replies, _reduce, s, k, 1) for s, k in todo]
                for (s, _), fut in zip(todo, futures):
                    parts[s.name], subs[s.name] = received(fut.result())
                    bar is not None and bar.update()
    if bar is not None:
        bar.close()
    if folder is not None and todo:
        folder.mkdir(parents=True, exist_ok=True)
        for s, k in todo:
            _cache_write(_cache_file(folder, k), parts[s.name], subs[s.name])
    models = {s.name: parts[s.name].craig_bampton(s, subs[s.name]) for s in specs}
    return models, {"reduced": [s.name for s, _ in todo], "cached": cached,
                    "seconds": {n: float(parts[n].seconds) for n in names},
                    "cache": None if folder is None else str(folder), "wall_time": time.perf_counter() - t0}
