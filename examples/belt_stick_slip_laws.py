"""Stick-slip of a mass on a moving belt under three friction laws (2D contact engine)
====================================================================================

A damped spring-mass (1 kg, 1 Hz, 5 % damping) pressed with 10 N on a belt moving at 0.3 m/s:
one slave node of the 2D contact engine on a driven master segment. The friction law is given
per interface, ``ContactInterface(..., friction=law)``:

* Coulomb (mu = 0.5): no stick-slip; the mass settles sliding at its equilibrium;
* static/kinetic (0.5 / 0.3): stick until the spring pulls mu_s N, slip at mu_k N: a limit cycle;
* Stribeck (0.5 -> 0.3, v_s = 0.1 m/s): the same cycle with a smooth velocity weakening.

All three march in the compiled kernel (one node with a law; the Stribeck slip speed is that of
the step itself, solved implicitly). Left: the mass's displacement; right: the friction force
against the slip velocity, with each law's curve mu(v) N.

    python examples/belt_stick_slip_laws.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import Body, ContactInterface, MultibodyModel, simulate_multibody
from fesub.contact.engine.friction import Coulomb, StaticKinetic, Stribeck
from fesub.plots import style

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/belt_stick_slip_laws")
out.mkdir(parents=True, exist_ok=True)

M, K, N, VB = 1.0, (2 * np.pi) ** 2, 10.0, 0.3   # kg, N/m, N, m/s
C = 2 * 0.05 * np.sqrt(K * M)                     # N s/m


def model(law):
    mass = Body(np.eye(2) * M, np.diag([K, 0.0]), [[0.0, 0.0]], [[0, 1]], C=np.diag([C, 0.0]), name="mass",
                loads=[0.0, -N], outputs={"x": 0})
    belt = Body([[1.0]], [[0.0]], [[-50.0, 0.0], [50.0, 0.0]], [[0, -1], [0, -1]], name="belt", prescribed={0: VB})
    return MultibodyModel([mass, belt], [ContactInterface("mass", [0], "belt", [[0, 1]], friction=law)])


laws = {"Coulomb 0.5": Coulomb(0.5), "static/kinetic 0.5/0.3": StaticKinetic(0.5, 0.3),
        "Stribeck 0.5 -> 0.3, v_s 0.1 m/s": Stribeck(0.5, 0.3, 0.1)}
runs = {name: simulate_multibody(model(law), duration=5.0, h=2e-4, fs_out=1000.0) for name, law in laws.items()}

plt = style.pyplot()
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.6))
v = np.linspace(0.0, 0.6, 200)
for (name, r), law in zip(runs.items(), laws.values()):
    st = r.nodes["state"][:, 0]
    onsets = r.t[1:][(st[1:] >= 2) & (st[:-1] == 1)]
    period = np.diff(onsets)
    print(f"{name}: {r.info['loop']} loop ({r.backend}), slip onsets {np.round(onsets, 4)} s"
          + (f", period {period[-1]:.4f} s" if period.size else ", no stick-slip"))
    line, = ax0.plot(r.t, r.channels["u_x"], label=name)
    ax1.plot(r.nodes["slip_velocity"][:, 0], r.nodes["lambda_t"][:, 0], ".", ms=2, color=line.get_color())
    ax1.plot(-v, law.coefficient(v) * N, "-", lw=0.8, color=line.get_color())
ax0.set_xlabel("time [s]")
ax0.set_ylabel("mass displacement [m]")
ax0.set_title("A mass on a belt at 0.3 m/s")
ax0.legend(fontsize=8, loc="lower right")
ax1.set_xlabel("slip velocity of the mass on the belt [m/s]")
ax1.set_ylabel("friction force on the mass [N]")
ax1.set_title("Friction force: the run (dots) and mu(v) N")
fig.tight_layout()
style.save(fig, out / "belt_stick_slip_laws.png")
