"""Friction laws in the compiled multibody march: a mass in stick-slip on a moving belt with a
static/kinetic law and with a Stribeck law, against the same march with one Coulomb coefficient
(the baseline, timed in the same run; goal: within 1.2x per step). The march time is the kernel
loop's ``wall_time`` (the steps, not the set-up); the Coulomb run slides all along, the law runs
stick and slip.

Several nodes, each with its own law: a chain of coupled masses on the belt (Coulomb,
static/kinetic and Stribeck nodes in turn) marched by the compiled kernel (the block sweeps with
each node's law) against the Python step loop (the slower path a user law takes), the same steps
in the same run; goal: the kernel at least 100x faster per step."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact import Body, ContactInterface, MultibodyModel, simulate_multibody
from fesub.contact.engine.friction import Coulomb, StaticKinetic, Stribeck

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


CHAIN_NODES = 12
CHAIN_STEPS = 500


def _chain(n):
    """``n`` masses in a row on the belt, coupled by horizontal and vertical springs, the laws in
    turn Coulomb, static/kinetic, Stribeck."""
    M, K, C = np.eye(2 * n) * BM, np.zeros((2 * n, 2 * n)), np.zeros((2 * n, 2 * n))
    K[0::2, 0::2] += np.eye(n) * BK
    C[0::2, 0::2] += np.eye(n) * BC
    for i in range(n - 1):
        for d, s in ((0, 20.0), (1, 500.0)):
            a, b = 2 * i + d, 2 * i + 2 + d
            K[[a, b], [a, b]] += s
            K[a, b] -= s
            K[b, a] -= s
    loads = np.zeros(2 * n)
    loads[1::2] = -BN * (1 + 0.3 * np.sin(np.arange(n)))
    laws = [Coulomb(0.4) if i % 3 == 0 else StaticKinetic(0.5 + 0.01 * i, 0.3) if i % 3 == 1
            else Stribeck(0.55, 0.3, 0.05 + 0.01 * i) for i in range(n)]
    chain = Body(M, K, np.c_[np.arange(n) * 0.1, np.zeros(n)], np.arange(2 * n).reshape(n, 2), C=C, name="chain",
                 loads=loads)
    belt = Body([[1.0]], [[0.0]], [[-50.0, 0.0], [50.0, 0.0]], [[0, -1], [0, -1]], name="belt", prescribed={0: VB})
    return MultibodyModel([chain, belt], [ContactInterface("chain", list(range(n)), "belt", [[0, 1]],
                                                           friction=laws)])


def test_march_with_many_law_nodes_vs_python_loop(benchmark, goal):
    model = _chain(CHAIN_NODES)
    kw = dict(duration=CHAIN_STEPS * 1e-3, h=1e-3, fs_out=100.0, progress=False)
    pairs = []

    def alternate():  # compiled march and Python loop over the same steps, alternated
        a = simulate_multibody(model, loop="kernel", **kw)
        b = simulate_multibody(model, loop="python", **kw)
        assert a.info["loop"] == "kernel" and b.info["loop"] == "python" and a.status == b.status == "completed"
        pairs.append((a.wall_time / a.steps, b.wall_time / b.steps))
        return a

    benchmark.pedantic(alternate, rounds=3, iterations=1, warmup_rounds=0)
    a = float(np.median([p[0] for p in pairs]))
    b = float(np.median([p[1] for p in pairs]))
    benchmark.extra_info["law_nodes"] = CHAIN_NODES
    benchmark.extra_info["kernel_us_per_step"] = 1e6 * a
    benchmark.extra_info["python_loop_us_per_step"] = 1e6 * b
    goal("ratio_python_loop", 100.0, value=b / a, higher=True)
