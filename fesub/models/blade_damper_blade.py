"""Blade-damper-blade lumped model (paper section 5.2, Table 2, eqs. 66-67).

DOFs ``q = [x1, x2, y3, x4, y5, x6, y7, x8]``: blade masses m1 (x1 left, x8 right), platform
masses m2 ((x2, y3) left, (x6, y7) right), damper md (x4, y5). Two 2D stick-slip-separation
contacts between each platform and the damper.

Conventions (spec 4.2, self-consistent proposal): the columns of the frame ``T`` are the tangent
and the normal; ``u = T^T (q_damper - q_platform)`` (``u_n`` = closure, ``N = N0 + kn u_n``); the
contact force acts on the platform as ``+T [f_t; f_n]`` and on the damper as ``-T [f_t; f_n]``
(eq. 66). The printed right frame gives parallel contact planes and an unbalanced static
horizontal load on the damper; the mirror image ``[[-cos a2, -sin a2], [sin a2, -cos a2]]`` is the
default (``right_frame='mirror'``), the literal one is ``right_frame='paper'``. The text excites
the right blade (x8) while eq. 66 puts the force on x2: default ``force_dof='x8'``. ``C = beta K``
of the structure (the contact elements carry no damping). Force range (not given): 0.01-1000 N.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError, check_names, check_positive

__all__ = ["PAPER", "DOFS", "structure", "build"]

DOFS = ("x1", "x2", "y3", "x4", "y5", "x6", "y7", "x8")

PAPER = dict(kx=3.95e5, ky=3.95e5, kx1=3.95e5, kxd=2e5, kyd=1e5, kt=1e5, kn=1e5, m1=0.1,
             m2=0.1, md=0.0044, alpha1=math.pi / 6, alpha2=math.pi / 6, beta=1.5e-5, mu=0.3,
             N0=50.0, right_frame="mirror", force_dof="x8", monitor_dof="x8", nh=3)


def structure(p):
    """(M, K) of the linear structure (no contact springs), SI units."""
    kx, ky, kx1, kxd, kyd = (p[k] for k in ("kx", "ky", "kx1", "kxd", "kyd"))
    K = np.zeros((8, 8))
    K[0, 0] += kx1; K[0, 1] -= kx1; K[1, 0] -= kx1; K[1, 1] += kx1 + kx    # noqa: E702
    K[2, 2] = ky
    K[3, 3] = kxd
    K[4, 4] = kyd
    K[7, 7] += kx1; K[7, 5] -= kx1; K[5, 7] -= kx1; K[5, 5] += kx1 + kx    # noqa: E702
    K[6, 6] = ky
    M = np.diag([p["m1"], p["m2"], p["m2"], p["md"], p["md"], p["m2"], p["m2"], p["m1"]])
    return M, K


def frames(p):
    a1, a2 = p["alpha1"], p["alpha2"]
    Tl = np.array([[math.cos(a1), math.sin(a1)], [math.sin(a1), -math.cos(a1)]])
    if p["right_frame"] == "mirror":
        Tr = np.array([[-math.cos(a2), -math.sin(a2)], [math.sin(a2), -math.cos(a2)]])
    elif p["right_frame"] == "paper":
        Tr = np.array([[-math.cos(a2), math.sin(a2)], [-math.sin(a2), -math.cos(a2)]])
    else:
        raise ParameterError(f"right_frame must be 'mirror' or 'paper', got {p['right_frame']!r}")
    return Tl, Tr


def gathers(p):
    """Gather matrices (2, 8) of the left and right contacts: u = T^T (q_damper - q_platform)."""
    Tl, Tr = frames(p)
    out = []
    for T, (px, py) in ((Tl, (1, 2)), (Tr, (5, 6))):
        B = np.zeros((2, 8))
        B[0, 3], B[1, 4] = 1.0, 1.0
        B[0, px], B[1, py] = -1.0, -1.0
        out.append(T.T @ B)
    return out


def build(nh: int | None = None, **params):
    """Harmonic-balance system of the blade-damper-blade model (defaults :data:`PAPER`)."""
    from ..hbm.contact import StickSlipSeparation
    from ..hbm.system import ContactElement, HBSystem

    check_names("blade-model parameter(s)", params, PAPER)
    p = dict(PAPER, **params)
    if nh is not None:
        p["nh"] = nh
    for k in ("kx", "ky", "kx1", "kxd", "kyd", "m1", "m2", "md", "kt", "kn", "N0"):
        check_positive(k, p[k])
    beta = check_positive("beta (stiffness-proportional damping, s)", p["beta"], strict=False)
    for k in ("force_dof", "monitor_dof"):
        if p[k] not in DOFS:
            raise ParameterError(f"{k} must be one of {DOFS}, got {p[k]!r}")
    M, K = structure(p)
    Gl, Gr = gathers(p)
    cl = ContactElement(StickSlipSeparation(p["kt"], p["kn"], p["mu"], p["N0"]), Gl, "left")
    cr = ContactElement(StickSlipSeparation(p["kt"], p["kn"], p["mu"], p["N0"]), Gr, "right")
    return HBSystem(M, beta * K, K, p["nh"], [cl, cr], fex=DOFS.index(p["force_dof"]),
                    dof=DOFS.index(p["monitor_dof"]))
