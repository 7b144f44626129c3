"""Modes of an assembly of substructures, as a result: frequencies and shapes on each substructure."""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..io import Result, summary_record

__all__ = ["CoupledModes"]


def _xr():
    import xarray as xr

    return xr


def _shape_units(comps) -> str:
    unit = "kg^-1/2"
    return unit if "rz" not in comps else f"{unit} (x, y); rad kg^-1/2 m^-1 (rz)"


class CoupledModes(Result):
    """Undamped modes of tied substructures, each shape given back on every substructure's nodes.

    Parameters
    ----------
    freq_hz : (k,) array
        Natural frequencies (Hz), ascending; rigid-body modes give ~0.
    names : sequence of str
        Substructure names, in assembly order.
    points : sequence of (n_s, 2) or (n_s, 3) arrays
        Node coordinates (m) of each substructure (all of one dimension).
    comps : sequence of tuple of str
        Components of each substructure's nodes (``x``, ``y``[, ``rz``], or ``x``, ``y``, ``z``).
    shapes : sequence of (k, n_s, c_s) arrays
        Mass-normalised mode shapes on the nodes of each substructure (kg^-1/2 for
        translations; clamped components 0, components a reduced model does not hold NaN).
    method : str
        ``"primal"`` or ``"dual"``: the form of the assembled eigenproblem that was solved.
    n_dofs, n_constraints : int
        Stacked coordinates of the substructures and tie rows (-).
    kinds : sequence of str
        ``"full"``, ``"craig-bampton"`` or ``"matrices"`` for each substructure.
    """

    kind = "coupled-modes"

    def __init__(self, freq_hz, names, points, comps, shapes, *, method: str, n_dofs: int, n_constraints: int,
                 kinds):
        self.freq_hz = np.asarray(freq_hz, float)
        self.names = [str(n) for n in names]
        self.points = [np.asarray(p, float) for p in points]
        self.comps = [tuple(str(c) for c in cs) for cs in comps]
        self.shapes = [np.asarray(s, float) for s in shapes]
        self.method, self.n_dofs, self.n_constraints = str(method), int(n_dofs), int(n_constraints)
        self.kinds = [str(k) for k in kinds]

    @property
    def n_modes(self) -> int:
        return self.freq_hz.size

    def shape(self, part, mode: int) -> np.ndarray:
        """(n_nodes, n_comps) shape of ``mode`` on substructure ``part`` (name or position; kg^-1/2).

        Parameters
        ----------
        part : str or int
            Substructure name or position.
        mode : int
            Mode index (-), 0 the lowest.

        Returns
        -------
        (n_nodes, n_comps) array
            Mass-normalised nodal displacements (kg^-1/2 for translations).
        """
        i = self.names.index(part) if isinstance(part, str) and part in self.names else part
        if not isinstance(i, (int, np.integer)) or not 0 <= i < len(self.names):
            raise ModelError(f"no substructure {part!r}; the modes are given on {self.names}")
        if not 0 <= mode < self.n_modes:
            raise ModelError(f"mode must be in 0..{self.n_modes - 1}, got {mode!r}")
        return self.shapes[i][mode]

    def to_xarray(self):
        data = {"freq_hz": ("mode", self.freq_hz, {"units": "Hz", "long_name": "natural frequency"})}
        coords = {"mode": ("mode", np.arange(self.n_modes), {"units": "1", "long_name": "mode index"})}
        for i, (p, c, s) in enumerate(zip(self.points, self.comps, self.shapes)):
            node, comp = f"node_{i}", f"comp_{i}"
            data[f"points_{i}"] = ((node, "axis"), p, {"units": "m", "long_name": f"nodes of {self.names[i]}"})
            data[f"shape_{i}"] = (("mode", node, comp), s, {"units": _shape_units(c),
                                                             "long_name": f"mass-normalised shapes on {self.names[i]}"})
            coords[comp] = (comp, list(c), {"units": "1", "long_name": "displacement component"})
        dim = max((p.shape[1] for p in self.points), default=2)
        coords["axis"] = ("axis", ["x", "y", "z"][:dim], {"units": "1", "long_name": "coordinate axis"})
        return _xr().Dataset(data, coords=coords, attrs={
            "names": self.names, "kinds": self.kinds, "method": self.method, "n_dofs": self.n_dofs,
            "n_constraints": self.n_constraints})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        k = len(a["names"])
        return cls(ds["freq_hz"].values, a["names"], [ds[f"points_{i}"].values for i in range(k)],
                   [[str(c) for c in ds[f"comp_{i}"].values] for i in range(k)],
                   [ds[f"shape_{i}"].values for i in range(k)], method=a["method"], n_dofs=int(a["n_dofs"]),
                   n_constraints=int(a["n_constraints"]), kinds=a["kinds"])

    def summary(self) -> dict:
        return summary_record(self.kind, {
            "substructures": (len(self.names), None), "coordinates": (self.n_dofs, None),
            "constraints": (self.n_constraints, None), "method": (self.method, None)},
            {"freq_hz": (self.freq_hz, "Hz"), "n_modes": (self.n_modes, None)},
            details={"substructures": [{"name": n, "kind": k, "nodes": int(p.shape[0])}
                                       for n, k, p in zip(self.names, self.kinds, self.points)]})

    def __repr__(self) -> str:
        f = self.freq_hz
        rng = f"{f.min():.4g}-{f.max():.4g} Hz" if f.size else "none"
        return f"CoupledModes({self.n_modes} modes, {rng}, {self.method}, on {self.names})"
