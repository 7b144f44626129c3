"""Regime maps by time integration: every (r1, beta) point of a grid integrated to its
periodic steady state with :func:`~fesub.coulomb.integrate.simulate_chain`, its stick-slip
regime set beside the closed-form prediction of :func:`~fesub.coulomb.analytic.steady_state`.

:func:`regime_map_point` is a pure function of picklable inputs (one point, in any worker);
:func:`numeric_regime_map` runs a grid in this process or on worker processes and returns what
it computed so far when interrupted.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from .analytic import REGIME_NAMES, steady_state
from .integrate import simulate_chain
from .model import ChainModel, CoulombContact, as_beta, as_r1, check_mu
from .results import NOT_COMPUTED, NumericRegimeMap, RegimePoint

__all__ = ["regime_map_point", "numeric_regime_map", "NumericRegimeMap", "RegimePoint"]


def _chain_from_params(chain_params: dict):
    if not isinstance(chain_params, dict):
        raise ParameterError(f"chain_params must be a dict, got {type(chain_params).__name__}")
    try:
        gamma = chain_params["gamma"]
        kappa = chain_params["kappa"]
    except KeyError as exc:
        raise ParameterError(f"chain_params needs 'gamma' and 'kappa' (mass and stiffness ratios); missing {exc}") from None
    model = ChainModel(gamma, kappa)
    contact = CoulombContact.from_spec(chain_params.get("contact", "wall:0"))
    contact.validate(model.n)
    load = int(chain_params.get("load", 0))
    mu = check_mu(chain_params.get("mu", 1.0))
    return model, contact, load, mu


def regime_map_point(chain_params: dict, r1: float, beta: float) -> RegimePoint:
    """One point of a numeric regime map (pure function; picklable inputs and outputs).

    Parameters
    ----------
    chain_params : dict
        ``gamma``, ``kappa`` (lists), optional ``contact`` (``"wall:0"``, ``"masses:0,1"``,
        ``"base:0"`` or a dict), ``load`` (int, 0-based), ``mu`` (>= 1), and integrator options
        ``max_periods``, ``min_periods``, ``tol``, ``amplitudes`` (default False: skip them).
    r1, beta : float
        Frequency ratio (> 0) and friction ratio (>= 0), dimensionless.

    Returns
    -------
    RegimePoint
        ``regime`` (name), ``regime_code`` (0 continuous, 1 stick-slip, 2 stuck), ``converged``,
        ``periods``, ``stops_per_period``, ``Z`` and ``X`` (None if not converged or not asked
        for), and the closed-form prediction ``analytic_regime``/``analytic_regime_code``.
        A Ctrl-C during the integration is raised again (KeyboardInterrupt).
    """
    model, contact, load, mu = _chain_from_params(chain_params)
    kw = {k: chain_params[k] for k in ("max_periods", "min_periods", "tol") if k in chain_params}
    res = simulate_chain(model, contact, load, r1, beta, mu,
                         amplitudes=bool(chain_params.get("amplitudes", False)), **kw)
    if res.status == "interrupted":
        raise KeyboardInterrupt
    ss = steady_state(model, contact, load, r1, beta, mu=mu, amplitude="monoharmonic")
    code = int(ss.regime[0, 0])
    return RegimePoint(
        r1=float(r1), beta=float(beta), mu=float(mu),
        regime=REGIME_NAMES[res.regime], regime_code=int(res.regime),
        converged=bool(res.converged), periods=int(res.periods),
        stops_per_period=int(res.stops_per_period),
        Z=float(res.Z) if np.isfinite(res.Z) else None,
        X=tuple(float(v) for v in res.X) if np.isfinite(res.X).all() else None,
        analytic_regime=REGIME_NAMES[code], analytic_regime_code=code,
    )


def _map_point(args):
    """One map point in a worker process, on the parent's kernel backend."""
    from .. import _backend

    backend, chain_params, r, b = args
    with _backend.use(backend):
        return _serial_point(chain_params, r, b)


def _map_points(chain_params, jobs, points):
    """``(ib, ir, RegimePoint or None)`` for every ``(ib, ir, r1, beta)`` of ``points``, in
    this process (``jobs == 1``) or on ``jobs`` worker processes, as they finish. On Ctrl-C the
    pending points are cancelled and the workers finish the points they hold."""
    if jobs == 1:
        for ib, ir, r, b in points:
            yield ib, ir, _serial_point(chain_params, r, b)
        return
    from concurrent.futures import as_completed

    from .._backend import active
    from ..parallel import process_pool

    backend = active("coulomb")
    ex = process_pool(jobs)
    try:
        futs = {ex.submit(_map_point, (backend, chain_params, r, b)): (ib, ir)
                for ib, ir, r, b in points}
        for f in as_completed(futs):
            yield (*futs[f], f.result())
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _serial_point(chain_params, r, b):
    """:func:`regime_map_point`, or None where r1 sits on a natural frequency."""
    try:
        return regime_map_point(chain_params, r, b)
    except ParameterError:
        return None


def numeric_regime_map(chain_params: dict, r1, beta, progress: bool = True,
                       jobs: int = 1) -> NumericRegimeMap:
    """Time-integrate every point of an (r1, beta) grid (see :func:`regime_map_point`).

    Parameters
    ----------
    chain_params : dict
        As in :func:`regime_map_point`.
    r1, beta : array_like
        Frequency ratios (> 0) and friction ratios (>= 0) of the grid, dimensionless.
    progress : bool
        Show a progress bar.
    jobs : int
        Worker processes (1: in this process). The map does not depend on it: every point is
        independent and the integrator deterministic.

    Returns
    -------
    NumericRegimeMap
        Arrays (nb, nr). On Ctrl-C, what was computed so far with ``status == "interrupted"``;
        missing points (and r1 at a natural frequency) have regime -1.
    """
    from tqdm.auto import tqdm

    _chain_from_params(chain_params)
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ParameterError(f"jobs (worker processes) must be an integer >= 1, got {jobs!r}")
    r1 = as_r1(r1)
    beta = as_beta(beta)
    shape = (beta.size, r1.size)
    out = NumericRegimeMap(r1, beta, np.full(shape, NOT_COMPUTED, np.int8), np.zeros(shape, bool),
                           np.zeros(shape, np.int64), np.full(shape, np.nan), dict(chain_params))
    points = [(ib, ir, float(r), float(b)) for ib, b in enumerate(beta) for ir, r in enumerate(r1)]
    bar = tqdm(total=len(points), disable=not progress, desc="regime map")
    try:
        for ib, ir, d in _map_points(chain_params, int(jobs), points):
            bar.update()
            if d is None:   # exactly resonant r1: leave the point out
                continue
            out.regime[ib, ir] = d.regime_code
            out.converged[ib, ir] = d.converged
            out.stops[ib, ir] = d.stops_per_period
            out.Z[ib, ir] = np.nan if d.Z is None else d.Z
    except KeyboardInterrupt:
        out.status = "interrupted"
    finally:
        bar.close()
    return out
