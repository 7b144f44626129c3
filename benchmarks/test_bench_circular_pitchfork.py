"""Speed of the disc's stopping run at its pitchfork ``F = -F_P`` (exact model, uniform pressure).

At the pitchfork the stop direction is non-hyperbolic: the slip direction converges only
algebraically in rescaled time. Goal: the run to the stop, with the default horizon, takes well
under a second (recorded against 0.25 s). Baselines timed in the same run: the same disc and start
at a regular force (``F = 0.2 mu m g``, a hyperbolic stop; goal: the limit case costs at most
twice as much, ratio >= 0.5) and fesub's integration of the pitchfork in physical time.
"""

from __future__ import annotations

import math

from fesub.circular import ExactCircularFriction, ReducedContactSystem

X0 = (-1.0, 0.0, 0.3)       # (u_x, u_y, rho omega_z) (m/s)


def test_bench_pitchfork_stop(benchmark, ratio_to, goal):
    disc = ReducedContactSystem.disc(ExactCircularFriction("uniform"))
    pitchfork = disc.with_force(-disc.F_P)
    regular = disc.with_force(0.2)
    tr = benchmark(pitchfork.simulate_sliding, X0)
    assert tr.stopped and tr.info["outcome"] == "stopped" and math.isfinite(tr.t_stop)
    benchmark.extra_info["t_stop_s"] = tr.t_stop
    benchmark.extra_info["horizon_s"] = tr.info["t_end"]
    benchmark.extra_info["steps"] = int(tr.t.size)
    goal("median_s", 0.25)
    r = ratio_to("regular_force_F0.2", regular.simulate_sliding, X0, rounds=5)
    if r is not None:
        goal("ratio_regular_force_F0.2", 0.5, value=r, higher=True)
    ratio_to("physical_time_method", pitchfork.simulate_sliding, X0, method="t", rounds=5)
