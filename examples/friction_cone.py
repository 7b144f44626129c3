"""The friction cone of one 3D contact node, and three friction laws
===================================================================

A contact node in 3D has a normal and two tangential directions. Its 3 x 3 Delassus block ``W``
(m/s per N s) maps the contact impulses to relative velocities, ``u = W lambda + q``;
:func:`fesub.contact.solve_cone` finds the impulses that obey Coulomb's law exactly: open,
stick inside the cone ``|lambda_t| <= mu_s lambda_n``, or slip with the friction force opposing
the slip velocity in the tangent plane.

Left: a node whose block is anisotropic and couples the normal to the tangents, pressed
(``q_n = -1 m/s``) and pushed along every direction of the plane (``|q_t| = 3 m/s``). The
friction force opposes the *slip* velocity to round-off, not the free velocity ``q_t`` (they
differ by up to 7.5 degrees here): the exact cone, not a box per direction.

Right: the slip speed against the push ``|q_t|`` for W = I and three laws with the same static
coefficient: Coulomb (mu = 0.5), static/kinetic (0.5 / 0.3) and Stribeck (0.5 -> 0.3,
v_s = 0.3 m/s). Stick holds up to ``|q_t| = 0.5 m/s`` for all three; the static/kinetic law
then jumps to its kinetic slip, the Stribeck law weakens smoothly. (With ``W = I`` and
``lambda_n = 1`` the slip speed solves ``v = |q_t| - mu(v)``: unique while
``(mu_s - mu_k) / v_s < 1 s/m``; a steeper weakening makes the node's problem have several slip
solutions, the branch of the warm start is then taken.)

    python examples/friction_cone.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import Coulomb, StaticKinetic, Stribeck, solve_cone, solve_cones
from fesub.plots import style

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/friction_cone")
out.mkdir(parents=True, exist_ok=True)

# an anisotropic block coupling the normal and the tangents (symmetric positive definite)
W = np.array([[2.0, 0.3, -0.2],
              [0.3, 1.0, 0.4],
              [-0.2, 0.4, 3.0]])
angles = np.linspace(0.0, 2.0 * np.pi, 73)[:-1]
qs = np.array([[-1.0, 3.0 * np.cos(a), 3.0 * np.sin(a)] for a in angles])
sol = solve_cones(np.repeat(W[None], len(angles), axis=0), qs, Coulomb(0.4))
assert np.all(sol.case == 2)  # every push slips


def angle(a, b):
    """Angle (degrees) between 2-vectors, row by row."""
    cross = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return np.degrees(np.abs(np.arctan2(cross, np.sum(a * b, axis=1))))


force_vs_slip = angle(-sol.lam[:, 1:], sol.u[:, 1:])
force_vs_push = angle(-sol.lam[:, 1:], qs[:, 1:])
print(f"friction force against slip velocity: largest angle {force_vs_slip.max():.1e} deg")
print(f"friction force against free velocity: up to {force_vs_push.max():.1f} deg")
ratio = np.hypot(sol.lam[:, 1], sol.lam[:, 2]) / sol.lam[:, 0]
print(f"|lambda_t| / lambda_n in slip: {ratio.min():.15f} .. {ratio.max():.15f} (mu = 0.4)")

laws = {"Coulomb 0.5": Coulomb(0.5), "static/kinetic 0.5/0.3": StaticKinetic(0.5, 0.3),
        "Stribeck 0.5 -> 0.3, v_s 0.3 m/s": Stribeck(0.5, 0.3, 0.3)}
push = np.linspace(0.0, 1.5, 301)
speeds = {name: [np.hypot(*solve_cone(np.eye(3), [-1.0, p, 0.0], law).u[1:]) for p in push]
          for name, law in laws.items()}

plt = style.pyplot()
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.6))
ax0.plot(np.degrees(angles), force_vs_push, label="against the free velocity $q_t$")
ax0.plot(np.degrees(angles), force_vs_slip, label="against the slip velocity $u_t$")
ax0.set_xlabel("direction of the push [deg]")
ax0.set_ylabel("angle to the friction force [deg]")
ax0.set_title("Coupled anisotropic node, mu = 0.4")
ax0.legend(fontsize=8)
for name, v in speeds.items():
    ax1.plot(push, v, label=name)
ax1.set_xlabel("free tangential velocity $|q_t|$ [m/s]")
ax1.set_ylabel("slip speed $|u_t|$ [m/s]")
ax1.set_title("Stick, then slip: three laws (W = I)")
ax1.legend(fontsize=8)
fig.tight_layout()
style.save(fig, out / "friction_cone.png")
