"""One-DOF oscillator with a grounded Jenkins friction element (the reference of the harmonic
balance studies).

``m x'' + c x' + k x + f_J = alpha cos(w t)``, ``f_J`` the force of a Jenkins element (tangential
stiffness ``kt`` in series with a Coulomb slider of slip force ``mu N0``). Stuck, the resonance
is ``sqrt((k + kt) / m)``; sliding, ``sqrt(k / m)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["jenkins_1dof"]


def jenkins_1dof(nh=7, m=1.0, c=0.02, k=1.0, kt=1.0, mu=0.1, N0=1.0):
    """Harmonic-balance system of the 1-DOF Jenkins oscillator, loaded and monitored at its DOF.

    Parameters
    ----------
    nh : int
        Number of harmonics (>= 1).
    m : float
        Mass (kg).
    c : float
        Viscous damping (N s/m).
    k : float
        Stiffness of the structure (N/m).
    kt : float
        Tangential stiffness of the contact (N/m).
    mu : float
        Friction coefficient (-).
    N0 : float
        Normal load (N); the slip force is ``mu N0``.

    Returns
    -------
    fesub.hbm.HBSystem
    """
    from ..hbm.contact import Jenkins
    from ..hbm.system import ContactElement, HBSystem

    return HBSystem(np.array([[m]]), np.array([[c]]), np.array([[k]]), nh,
                    [ContactElement(Jenkins(kt, mu, N0), np.eye(1), "jenkins")], fex=0, dof=0)
