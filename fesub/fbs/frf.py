"""FRF matrices: measured or computed, labelled by node and direction, saved through fesub.io.

An :class:`FRFMatrix` holds ``H[k, i, j]``, the response at output DOF ``i`` to a unit force at
input DOF ``j`` at frequency ``frequency[k]`` (Hz). A DOF is ``(node, direction)`` with the
direction coded as in UFF files: 1, 2, 3 the translations x, y, z, 4, 5, 6 the rotations about
them, negative for the opposite sense. :func:`frf_from_matrices` computes one from a model's
mass, damping and stiffness matrices by direct solution of the dynamic stiffness.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError, check_positive
from ..io import Result, summary_record

__all__ = ["FRFMatrix", "frf_from_matrices", "FRF_UNITS", "dof_label"]

#: units of H for each kind of FRF (translations; rotational DOFs use rad instead of m, N m
#: instead of N)
FRF_UNITS = {"receptance": "m/N", "mobility": "(m/s)/N", "accelerance": "(m/s^2)/N"}
_DIRS = {1: "x", 2: "y", 3: "z", 4: "rx", 5: "ry", 6: "rz"}


def dof_label(node: int, direction: int) -> str:
    """``'12+y'`` for node 12, direction +2.

    Parameters
    ----------
    node : int
        Node number.
    direction : int
        Direction code as in UFF files: 1, 2, 3 the translations x, y, z (m), 4, 5, 6 the
        rotations about them (rad); negative for the opposite sense.

    Returns
    -------
    str
        The label: node, sign and direction name (``x``, ``y``, ``z``, ``rx``, ``ry``, ``rz``).
    """
    d = int(direction)
    if abs(d) not in _DIRS:
        raise ParameterError(f"DOF direction must be +-1..6 (x, y, z, rx, ry, rz), got {direction}")
    return f"{int(node)}{'+' if d > 0 else '-'}{_DIRS[abs(d)]}"


def _dofs(dofs, what: str) -> np.ndarray:
    a = np.asarray(dofs)
    if a.ndim != 2 or a.shape[1] != 2 or a.shape[0] == 0 or a.dtype.kind not in "iu":
        raise ParameterError(f"{what} must be a non-empty list of integer (node, direction) pairs")
    for node, d in a:
        dof_label(node, d)  # checks the direction
    if len({(int(n), abs(int(d))) for n, d in a}) != len(a):
        raise ParameterError(f"{what} name a DOF twice")
    return a.astype(np.int64)


@dataclass(eq=False)
class FRFMatrix(Result):
    """Frequency response functions between labelled DOFs.

    Parameters
    ----------
    frequency : (nf,) array
        Frequencies (Hz), strictly increasing.
    H : (nf, n_out, n_in) complex array
        FRFs: ``H[k, i, j]`` response at ``outputs[i]`` per unit force at ``inputs[j]``
        (unit from ``quantity``: m/N for a receptance).
    outputs, inputs : (n, 2) int arrays
        ``(node, direction)`` of each response and each excitation DOF (directions +-1..6).
    quantity : str
        'receptance' (m/N), 'mobility' ((m/s)/N) or 'accelerance' ((m/s^2)/N).
    info : dict
        How it was obtained (method, regularisation, source file, ...).
    """

    frequency: np.ndarray
    H: np.ndarray
    outputs: np.ndarray
    inputs: np.ndarray
    quantity: str = "receptance"
    info: dict = field(default_factory=dict)
    kind = "frf-matrix"

    def __post_init__(self):
        self.frequency = np.asarray(self.frequency, dtype=float)
        self.H = np.asarray(self.H, dtype=complex)
        self.outputs = _dofs(self.outputs, "outputs")
        self.inputs = _dofs(self.inputs, "inputs")
        f = self.frequency
        if f.ndim != 1 or f.size == 0 or not np.all(np.isfinite(f)) or np.any(np.diff(f) <= 0):
            raise ParameterError("frequency must be a non-empty, finite, strictly increasing array (Hz)")
        shape = (f.size, len(self.outputs), len(self.inputs))
        if self.H.shape != shape:
            raise ParameterError(f"H must have shape (n_freq, n_out, n_in) = {shape}, got {self.H.shape}")
        if self.quantity not in FRF_UNITS:
            raise ParameterError(f"quantity must be one of {sorted(FRF_UNITS)}, got {self.quantity!r}")

    # ------------------------------------------------------------------------------- labels
    @property
    def output_labels(self) -> list[str]:
        """Labels of the response DOFs (``'12+y'``)."""
        return [dof_label(n, d) for n, d in self.outputs]

    @property
    def input_labels(self) -> list[str]:
        """Labels of the excitation DOFs."""
        return [dof_label(n, d) for n, d in self.inputs]

    @property
    def collocated(self) -> bool:
        """True when inputs and outputs are the same DOFs in the same order (a square FRF
        matrix, as coupling needs)."""
        return np.array_equal(self.outputs, self.inputs)

    def index(self, dofs, side: str = "outputs") -> np.ndarray:
        """Positions of ``dofs`` ((node, direction) pairs) among the outputs or inputs."""
        table = {(int(n), int(d)): i for i, (n, d) in enumerate(getattr(self, side))}
        out = []
        for n, d in np.atleast_2d(np.asarray(dofs)):
            if (int(n), int(d)) not in table:
                raise ParameterError(f"DOF {dof_label(n, d)} is not among the {side}")
            out.append(table[(int(n), int(d))])
        return np.asarray(out, dtype=int)

    def select(self, outputs=None, inputs=None) -> "FRFMatrix":
        """The FRFs between a subset of the DOFs (all when None)."""
        io = self.index(outputs, "outputs") if outputs is not None else np.arange(len(self.outputs))
        ii = self.index(inputs, "inputs") if inputs is not None else np.arange(len(self.inputs))
        return FRFMatrix(self.frequency, self.H[:, io][:, :, ii], self.outputs[io],
                         self.inputs[ii], self.quantity, dict(self.info))

    # ----------------------------------------------------------------------------- protocol
    def to_xarray(self):
        import xarray as xr

        unit = FRF_UNITS[self.quantity]
        return xr.Dataset(
            {"H": (("frequency", "output", "input"), self.H,
                   {"units": unit, "long_name": f"{self.quantity} FRF"}),
             "output_node": (("output",), self.outputs[:, 0], {"units": "1"}),
             "output_direction": (("output",), self.outputs[:, 1],
                                  {"units": "1", "long_name": "1-3 x, y, z; 4-6 rotations; sign"}),
             "input_node": (("input",), self.inputs[:, 0], {"units": "1"}),
             "input_direction": (("input",), self.inputs[:, 1], {"units": "1"})},
            coords={"frequency": ("frequency", self.frequency, {"units": "Hz"}),
                    "output": ("output", self.output_labels, {"units": "1"}),
                    "input": ("input", self.input_labels, {"units": "1"})},
            attrs={"quantity": self.quantity, "info": self.info})

    @classmethod
    def from_xarray(cls, ds):
        outs = np.stack([ds["output_node"].values, ds["output_direction"].values], axis=1)
        ins = np.stack([ds["input_node"].values, ds["input_direction"].values], axis=1)
        return cls(ds["frequency"].values, ds["H"].values, outs, ins, ds.attrs["quantity"],
                   ds.attrs.get("info", {}))

    def summary(self) -> dict:
        f = self.frequency
        return summary_record(
            self.kind,
            {"quantity": (self.quantity, None), "n_outputs": (len(self.outputs), None),
             "n_inputs": (len(self.inputs), None), "f_min": (float(f[0]), "Hz"),
             "f_max": (float(f[-1]), "Hz"), "n_freq": (int(f.size), None)},
            {"max_abs_H": (float(np.abs(self.H).max()), FRF_UNITS[self.quantity])},
            details={k: v for k, v in self.info.items() if isinstance(v, (str, int, float, bool))})


def frf_from_matrices(K, M, frequency, dofs, *, C=None, eta: float = 0.0,
                      quantity: str = "receptance") -> FRFMatrix:
    """Receptance (or mobility, accelerance) of a model at the DOFs ``dofs`` by direct solution.

    ``H(w) = [K (1 + i eta) + i w C - w^2 M]^-1`` restricted to the chosen DOFs, one sparse
    factorisation per frequency.

    Parameters
    ----------
    K, M : (n, n) arrays or sparse matrices
        Stiffness (N/m) and mass (kg) matrices.
    frequency : (nf,) array
        Frequencies (Hz), strictly increasing and > 0.
    dofs : dict or list
        ``{index: (node, direction)}`` or a list of ``(index, node, direction)``: which rows of
        the model are the FRF's DOFs and how they are labelled.
    C : (n, n) array or sparse matrix, optional
        Viscous damping (N s/m).
    eta : float
        Structural (hysteretic) loss factor (-).
    quantity : str
        'receptance', 'mobility' or 'accelerance'.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    f = np.asarray(frequency, dtype=float)
    if f.ndim != 1 or f.size == 0 or np.any(f <= 0) or not np.all(np.isfinite(f)):
        raise ParameterError("frequency must be a non-empty array of finite frequencies > 0 (Hz)")
    check_positive("eta (loss factor)", eta, strict=False)
    items = sorted(dofs.items()) if isinstance(dofs, dict) else [(i, (n, d)) for i, n, d in dofs]
    rows = np.array([int(i) for i, _ in items])
    labels = np.array([[int(n), int(d)] for _, (n, d) in items])
    K, M = sp.csc_matrix(K), sp.csc_matrix(M)
    n = K.shape[0]
    if K.shape != (n, n) or M.shape != (n, n) or np.any(rows < 0) or np.any(rows >= n):
        raise ParameterError(f"K and M must be square of one size and the DOF rows within 0..{n - 1}")
    C = sp.csc_matrix((n, n)) if C is None else sp.csc_matrix(C)
    rhs = np.zeros((n, rows.size), dtype=complex)
    rhs[rows, np.arange(rows.size)] = 1.0
    H = np.empty((f.size, rows.size, rows.size), dtype=complex)
    for k, fk in enumerate(f):
        w = 2 * np.pi * fk
        Z = (K * (1 + 1j * eta) + 1j * w * C - w * w * M).tocsc()
        x = spla.splu(Z).solve(rhs)
        H[k] = x[rows]
    if quantity == "mobility":
        H *= (2j * np.pi * f)[:, None, None]
    elif quantity == "accelerance":
        H *= (-(2 * np.pi * f) ** 2)[:, None, None]
    return FRFMatrix(f, H, labels, labels, quantity,
                     {"method": "direct solution of the dynamic stiffness", "eta": float(eta)})
