"""Circular contact: a disc sliding and spinning to a stop
=======================================================

A disc sliding and spinning on a plane until it stops (uniform pressure, Coulomb friction).

Prints the bifurcation values of the slip dynamics (tangency F_T, pitchfork F_P, fold F_F), the
limit directions at the chosen force, and the stop time and final slip-spin ratio of one run, for
the exact friction model and for the second-order harmonic model. Writes a trajectory figure.

Run:  python examples/circular_disc.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.circular import ExactCircularFriction, HarmonicFriction
from fesub.circular.dynamics import (ReducedContactSystem, bifurcation_values,
                                     find_limit_directions)


def main(outdir="."):
    F = 0.2                                           # horizontal force, units of mu m g
    x0 = np.array([1.0, 0.1, 0.3])                    # (u_x, u_y, rho*omega_z) in m/s
    runs = {}
    for label, model in (("exact", ExactCircularFriction("uniform")),
                         ("harmonic N=2", HarmonicFriction("uniform", N=2))):
        disc = ReducedContactSystem.disc(model, m=1.0, F=F, g=1.0)   # mu = 1, R = 1
        bv = bifurcation_values(disc)
        print(f"{label:>13}: F_T = {bv['F_T']:.6f}  F_P = {bv['F_P']:.6f}  "
              f"F_F = {bv['F_F'] if bv['F_F'] is None else round(bv['F_F'], 6)}")
        for d in find_limit_directions(disc):
            print(f"{'':>15}w = {np.round(d.w, 5)}  r' = {d.rdot:+.4f}  {d.colour}")
        tr = disc.simulate_sliding(x0)
        print(f"{'':>15}stops at t = {tr.t_stop:.6f} s in w = {np.round(tr.w_final, 5)} "
              f"(eps = {tr.eps_final:.4f}), stays stuck: {tr.stuck}")
        runs[label] = (disc, tr)
    from fesub.circular.plots import plot_trajectories

    disc, tr = runs["exact"]
    out = Path(outdir) / "circular_disc.png"
    plot_trajectories(disc, [tr, runs["harmonic N=2"][1]], out)
    print(f"figure: {out}")
    return runs


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
