"""Friction laws in the compiled multibody march: a mass in stick-slip on a moving belt with a
static/kinetic law and with a Stribeck law, against the same march with one Coulomb coefficient
(the baseline, timed in the same run; goal: within 1.2x per step). The march time is the kernel
loop's ``wall_time`` (the steps, not the set-up); the Coulomb run slides all along, the law runs
stick and slip."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact import Body, ContactInterface, MultibodyModel, simulate_multibody
from fesub.contact.engine.friction import StaticKinetic, Stribeck

BM, BK, BN, VB = 1.0, (2 * np.pi) ** 2, 10.0, 0.3
BC = 2 * 0.05 * np.sqrt(BK * BM)
STEPS = 100_000
H = 1e-4


def _model(friction):
    mass = Body(np.eye(2) * BM, np.diag([BK, 0.0]), [[0.0, 0.0]], [[0, 1]], C=np.diag([BC, 0.0]), name="mass",
                loads=[0.0, -BN], outputs={"x": 0})
    belt = Body([[1.0]], [[0.0]], [[-50.0, 0.0], [50.0, 0.0]], [[0, -1], [0, -1]], name="belt", prescribed={0: VB})
    return MultibodyModel([mass, belt], [ContactInterface("mass", [0], "belt", [[0, 1]], friction=friction)])


def _per_step(model):
    res = simulate_multibody(model, duration=STEPS * H, h=H, fs_out=100.0, progress=False)
    assert res.info["loop"] == "kernel" and res.status == "completed"
    return res.wall_time / res.steps


@pytest.mark.parametrize("law", ["static_kinetic", "stribeck"])
def test_march_with_a_law_vs_coulomb(benchmark, goal, law):
    friction = StaticKinetic(0.5, 0.3) if law == "static_kinetic" else Stribeck(0.5, 0.3, 0.1)
    laws, coulomb = _model(friction), _model(0.3)
    pairs = []

    def alternate():  # law and Coulomb alternated in the same run (the machine is shared)
        a = _per_step(laws)
        b = _per_step(coulomb)
        pairs.append((a, b))
        return a

    benchmark.pedantic(alternate, rounds=5, iterations=1, warmup_rounds=1)
    a = float(np.median([p[0] for p in pairs]))
    b = float(np.median([p[1] for p in pairs]))
    benchmark.extra_info["law_ns_per_step"] = 1e9 * a
    benchmark.extra_info["coulomb_ns_per_step"] = 1e9 * b
    benchmark.extra_info["ratio_coulomb"] = b / a
    goal("law_over_coulomb_per_step", 1.2, value=a / b)
