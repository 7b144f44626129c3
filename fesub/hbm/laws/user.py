"""A contact law given as a Python function ``f(u, v)``, evaluated by AFT.

The function takes arrays of relative displacements ``u`` (m) and velocities ``v`` (m/s), of one
shape, and returns the forces (N) of that shape (NumPy-vectorised: it is called once per
evaluation with all the samples of a period). Its derivatives ``df/du`` (N/m) and ``df/dv``
(N s/m) may be given as functions of the same form, and the second derivatives as one function
returning ``(f_uu, f_uv, f_vv)``. What is not given is computed by central finite differences
(a ``UserWarning`` says so when the law is built):

* first derivatives: ``(f(u + h) - f(u - h)) / (2 h)``, ``h = 6e-6 max(max |u|, u_ref)``
  (``eps^(1/3)`` times the size of the sampled motion: the step that balances truncation
  ``h^2 f'''/6`` and rounding ``eps f / h``, ~1e-10 relative for smooth laws);
* second derivatives: central differences of the first ones with ``h = 1e-4 max(max |u|,
  u_ref)`` (~1e-7 relative; ~1e-5 when the first ones are themselves differenced).

The same for ``v`` with ``max |v|`` and ``v_ref``; ``u_ref`` (m) and ``v_ref`` (m/s) are floors of
the steps for motions that vanish.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...errors import ParameterError, check_positive
from .aft import AFTLaw, check_samples

__all__ = ["UserLaw"]

_H1 = 6e-6    # ~ eps^(1/3): first derivatives of f
_H2 = 1e-4    # second derivatives (differences of the first ones)


class UserLaw(AFTLaw):
    """A scalar contact law from a Python function, ``f(u, v)`` (N).

    Parameters
    ----------
    f : callable
        ``f(u, v) -> forces`` (N), vectorised over arrays ``u`` (m), ``v`` (m/s).
    dfdu, dfdv : callable, optional
        ``df/du`` (N/m), ``df/dv`` (N s/m), same form. Missing: central finite differences.
    d2f : callable, optional
        ``d2f(u, v) -> (f_uu, f_uv, f_vv)`` (N/m^2, N s/m^2, N s^2/m^2) for the Hessian.
        Missing: central differences of the first derivatives.
    symmetric : bool
        The law is odd, ``f(-u, -v) = -f(u, v)`` (default False: the constant term is used).
    velocity_dependent : bool
        False: ``f`` is called with ``v = 0`` and ``df/dv`` is taken as 0 (no frequency needed).
    linear_stiffness : float
        Stiffness (N/m) used by the linear starting guesses (default 0).
    u_ref, v_ref : float
        Displacement (m) and velocity (m/s) scales: floors of the finite-difference steps.
    nt : int
        AFT samples per period (default 512).
    """

    def __init__(self, f, dfdu=None, dfdv=None, d2f=None, *, symmetric: bool = False,
                 velocity_dependent: bool = True, linear_stiffness: float = 0.0,
                 u_ref: float = 1e-6, v_ref: float = 1e-6, nt: int = 512):
        for name, fn in (("f", f), ("dfdu", dfdu), ("dfdv", dfdv), ("d2f", d2f)):
            if fn is not None and not callable(fn):
                raise ParameterError(f"{name} must be a function of (u, v), got {fn!r}")
        if f is None:
            raise ParameterError("f must be a function of (u, v), got None")
        self.f, self.dfdu, self.dfdv, self.d2f = f, dfdu, dfdv, d2f
        self.symmetric = bool(symmetric)
        self.velocity_dependent = bool(velocity_dependent)
        self.linear_stiffness = check_positive("linear_stiffness (N/m)", linear_stiffness,
                                               strict=False)
        self.u_ref = check_positive("u_ref (m)", u_ref)
        self.v_ref = check_positive("v_ref (m/s)", v_ref)
        self.nt = check_samples(nt)
        missing = [n for n, fn in (("df/du", dfdu), ("df/dv", dfdv if velocity_dependent else 0))
                   if fn is None]
        if missing:
            warnings.warn(f"UserLaw: {', '.join(missing)} not given; computed by central finite "
                          f"differences (relative step {_H1:g})", UserWarning, stacklevel=2)

    @staticmethod
    def _check(out, u, what):
        out = np.asarray(out, float)
        if out.ndim == 0:
            out = np.full(u.shape, float(out))
        if out.shape != u.shape:
            raise ParameterError(f"UserLaw: {what}(u, v) returned shape {out.shape} for inputs "
                                 f"of shape {u.shape}")
        if not np.all(np.isfinite(out)):
            raise ParameterError(f"UserLaw: {what}(u, v) returned NaN or inf")
        return out

    def _call(self, fn, u, v, what):
        return self._check(fn(u, v), u, what)

    def _scales(self, u, v):
        """Sizes (m, m/s) of the sampled motion: the finite-difference steps scale with them."""
        return (max(float(np.abs(u).max(initial=0.0)), self.u_ref),
                max(float(np.abs(v).max(initial=0.0)), self.v_ref))

    def _first(self, u, v, scales):
        """``(f_u, f_v)``: given, or central differences."""
        if self.dfdu is not None:
            fu = self._call(self.dfdu, u, v, "dfdu")
        else:
            h = _H1 * scales[0]
            fu = (self._call(self.f, u + h, v, "f") - self._call(self.f, u - h, v, "f")) / (2 * h)
        if not self.velocity_dependent:
            return fu, np.zeros_like(u)
        if self.dfdv is not None:
            fv = self._call(self.dfdv, u, v, "dfdv")
        else:
            h = _H1 * scales[1]
            fv = (self._call(self.f, u, v + h, "f") - self._call(self.f, u, v - h, "f")) / (2 * h)
        return fu, fv

    def _second(self, u, v, scales):
        """``(f_uu, f_uv, f_vv)``: given, or central differences of the first derivatives."""
        if self.d2f is not None:
            out = self.d2f(u, v)
            if len(out) != 3:
                raise ParameterError("UserLaw: d2f(u, v) must return (f_uu, f_uv, f_vv)")
            return tuple(self._check(o, u, "d2f") for o in out)
        hu = _H2 * scales[0]
        fup, fvp = self._first(u + hu, v, scales)
        fum, fvm = self._first(u - hu, v, scales)
        fuu = (fup - fum) / (2 * hu)
        fuv_u = (fvp - fvm) / (2 * hu)
        if not self.velocity_dependent:
            z = np.zeros_like(u)
            return fuu, z, z
        hv = _H2 * scales[1]
        gup, gvp = self._first(u, v + hv, scales)
        gum, gvm = self._first(u, v - hv, scales)
        fvv = (gvp - gvm) / (2 * hv)
        fuv = 0.5 * (fuv_u + (gup - gum) / (2 * hv))
        return fuu, fuv, fvv

    def law(self, u, v, order: int):
        if not self.velocity_dependent:
            v = np.zeros_like(u)
        f = self._call(self.f, u, v, "f")
        if order == 0:
            return (f,)
        scales = self._scales(u, v)
        fu, fv = self._first(u, v, scales)
        if order == 1:
            return f, fu, fv
        return (f, fu, fv) + self._second(u, v, scales)
