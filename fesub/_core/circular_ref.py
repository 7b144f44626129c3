"""NumPy twin of ``circular.pyx``: closed-form friction profiles of a circular contact.

Same functions and signatures as the compiled kernel; ``law`` is 0 (uniform) or 1 (Hertz). The
branches are those of :mod:`fesub.circular.exact` (SciPy's complete elliptic integrals).
"""

from __future__ import annotations

import numpy as np

_LAWS = ("uniform", "hertz")


def profile_ab(law, a, b, eps_small, eps_large, Q, T):
    """Profiles ``(Q_eps, T_eps)`` at ``eps = a/b`` (a, b >= 0, not both zero) into Q, T."""
    from fesub.circular.exact import profile_ab as _pab

    q, t = _pab(_LAWS[law], np.asarray(a), np.asarray(b), eps_small, eps_large)
    Q[:] = q
    T[:] = t


def force_torque(law, ux, uy, om, R, muP, kappa, eps_small, eps_large, Qx, Qy, Tz, set_valued):
    """Resultant friction of the exact model for slip (ux, uy) and spin om (all length n)."""
    from fesub.circular.exact import profile_ab as _pab

    ux = np.asarray(ux)
    uy = np.asarray(uy)
    om = np.asarray(om)
    speed = np.hypot(ux, uy)
    spin = R * np.abs(om)
    sv = (speed == 0) & (spin == 0)
    q, t = _pab(_LAWS[law], np.where(sv, 1.0, speed), spin, eps_small, eps_large)
    f = np.where(speed > 0, q / np.where(speed > 0, speed, 1.0), 0.0)
    Qx[:] = -muP * f * ux
    Qy[:] = -muP * f * uy
    Tz[:] = -muP * kappa * np.sign(om) * t
    Qx[sv] = 0.0
    Qy[sv] = 0.0
    Tz[sv] = 0.0
    set_valued[:] = sv
