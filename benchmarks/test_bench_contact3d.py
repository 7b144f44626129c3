"""Node-to-surface contact between solid bodies (the Python step loop; each step's cone problem
solved in the ``cone`` kernel by block Gauss-Seidel on the contact rows, linear in the active
nodes, and its close in one pass of that kernel; on one rigid master the sweeps start from the
last step's modal impulse, and the node displacements at a step's end and at the next step's
prediction are formed in one product over the rows): the cost of a 3D step per active node
against the 2D engine's step per node on the same bed (goal: within 2x), and the growth of the
3D step's cost with the active nodes (10, 50, 200, 1000 closed nodes of beds whose modes stay
fixed; goal: linear).

Each node's rows are swept over its own bed's 600 columns, not the model's 3000 (a window of
the columns per node), and the five interfaces' fixed rows are stacked once. Measured in runs
alternated with the sweeps over all 3000 columns (load 2.0 to 2.9): 1000 over 200 nodes 3.3 to
3.6 (4.1 to 4.3 ms a step against 1.2 ms), before 6.8 to 7.2 (32 to 36 ms against 4.7 to 5.0).

The goal is below the ratio of the two steps' products over the contact rows on this bed: a 3D
node has three rows over 600 modes, a 2D node two over 400, 2.25 times the multiplications in
each pass over the rows (a sweep, the node displacements). It is met in the median with the
``cone`` kernel compiled as the 2D march is (reassociated sums and AVX2/AVX-512 builds: the
sweeps' dot products vectorise), the flat face's closest points from its normal equations (no
Newton) and fewer small array operations around the sweeps: 1.85 to 2.2 (median 1.9 of six
runs, 55 to 60 ms for the 100 steps), against 2.3 to 2.75 (median 2.4, 72 to 86 ms) for the
code before, in runs alternated with it at load 1.5 to 2.0; the growth's step at 1000 nodes
2.7 ms against 4.0 to 4.2 ms (1000 over 200 nodes 2.9, before 3.5). A step of the bed is then
about 0.55 ms: the sweeps ~0.17 ms, the joint product of the node displacements ~0.1 ms (both
streaming the 2.9 MB of rows), the search ~0.05 ms, the close ~0.01 ms, the Python around them
the rest (~0.2 ms).

The bed of ``test_bench_contact_multinode`` in 3D: 200 nodes on a line, each hung from a fixed
support by springs in x, y and z and joined to its neighbours, consistent mass, the active ones
pressed by 1 N onto a rigid quad face; it must stay at rest, every active node closed. For the
growth, five such beds side by side (five interfaces on one ground face, 3000 modes), the active
nodes spread evenly over them. Both sides run with one BLAS thread (threaded BLAS on a step's
small products only adds its start-up on a loaded machine).
"""

from __future__ import annotations

import os
from itertools import pairwise

import numpy as np

from fesub.contact import Body, ContactInterface3D, MultibodyModel, simulate_multibody
from fesub.parallel import single_thread_blas

from test_bench_contact_multinode import BED_NODES, _bed

STEPS = 100
#: beds side by side in the growth benchmark (1000 active nodes at most)
BEDS = 5


def _bed_body(active, name="bed", y=0.0):
    """One 3D bed (600 coordinates) with ``active`` of its 200 nodes (evenly spread) pressed by
    1 N each; returns (body, the pressed nodes)."""
    n = BED_NODES
    lap = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    lap[0, 0] = lap[-1, -1] = 1.0
    K1 = 1e4 * np.eye(n) + 1e5 * lap
    M1 = 0.01 / 6 * (4 * np.eye(n) + np.eye(n, k=1) + np.eye(n, k=-1))
    K, M = np.kron(K1, np.eye(3)), np.kron(M1, np.eye(3))
    X = np.column_stack([np.linspace(0.0, 0.2, n), np.full(n, y), np.zeros(n)])
    nodes = np.round(np.linspace(0, n - 1, active)).astype(int) if active > 1 else np.array([n // 2])
    f = np.zeros(3 * n)
    f[3 * nodes + 2] = -1.0
    return Body(M, K, X, np.arange(3 * n).reshape(n, 3), name=name, loads=f), nodes


def _ground(y1=0.1):
    G = np.array([[-0.1, -0.1, 0.0], [0.3, -0.1, 0.0], [0.3, y1, 0.0], [-0.1, y1, 0.0]])
    return Body(np.zeros((0, 0)), np.zeros((0, 0)), G, -np.ones((4, 3), int), name="ground")


def _bed3d(active):
    """The 3D bed: ``active`` of its 200 nodes on the ground face z = 0; 600 modes for every
    count."""
    bed, nodes = _bed_body(active)
    return MultibodyModel([bed, _ground()], [ContactInterface3D("bed", nodes, "ground", [[0, 1, 2, 3]], 0.3,
                                                                face_type="quad4", reach=0.5)])


def _beds3d(active):
    """:data:`BEDS` beds 0.01 m apart on one ground face, ``active`` nodes in all (an equal share
    on each bed); 3000 modes for every count."""
    bodies, itfs = [], []
    for i in range(BEDS):
        bed, nodes = _bed_body(active // BEDS, f"bed{i}", 0.01 * i)
        bodies.append(bed)
        itfs.append(ContactInterface3D(bed.name, nodes, "ground", [[0, 1, 2, 3]], 0.3, face_type="quad4",
                                       reach=0.5))
    return MultibodyModel(bodies + [_ground(0.15)], itfs)


def _run(model):
    h = 0.9 * model.critical_step()
    with single_thread_blas():  # the 3D step's small products: threads only add their start-up
        res = simulate_multibody(model, duration=STEPS * h, h=h)
    assert res.steps == STEPS
    return res


def test_3d_step_per_active_node_against_2d(benchmark, ratio_to, goal):
    model = _bed3d(BED_NODES)
    res = benchmark.pedantic(_run, args=(model,), rounds=3)
    # every node closed at rest under its 1 N (to the sweeps' tolerance, see the 2D benchmark)
    assert np.all(res.nodes["state"] == 1)
    np.testing.assert_allclose(res.nodes["lambda_n"], 1.0, rtol=0, atol=1e-6)
    bed2d = _bed(BED_NODES)
    r = ratio_to("2d_engine", _run, bed2d)
    benchmark.extra_info.update(nodes=BED_NODES, steps=STEPS, modes_3d=model.n_modes, modes_2d=bed2d.n_modes,
                                load_average=os.getloadavg())
    if r is not None:
        # per active node: the same count of nodes on both sides (every one closed), so the ratio
        # of the steps; the step per node of each recorded beside it
        per_node = benchmark.stats.stats.median / (STEPS * BED_NODES)
        benchmark.extra_info.update(step_per_node_3d_s=per_node, step_per_node_2d_s=per_node * r)
        goal("cost_ratio_3d_to_2d_per_node", 2.0, value=1.0 / r)


def test_3d_cost_per_step_with_the_active_nodes(benchmark, ratio_to, goal):
    counts = (10, 50, 200, 1000)
    models = {k: _beds3d(k) for k in counts}
    top = counts[-1]
    res = benchmark.pedantic(_run, args=(models[top],), rounds=3)
    assert np.all(res.nodes["state"] == 1) and res.nodes["state"].shape[1] == top
    np.testing.assert_allclose(res.nodes["lambda_n"], 1.0, rtol=0, atol=1e-6)
    # the cost at k nodes over the cost at the top count (a ratio below 1), named with that count:
    # a ratio measured against another top count is another quantity
    ratios = {k: ratio_to(f"{k}_of_{top}_nodes", _run, models[k]) for k in counts[:-1]}
    benchmark.extra_info.update(modes=models[top].n_modes, steps=STEPS, load_average=os.getloadavg())
    if None in ratios.values():
        return
    med = benchmark.stats.stats.median
    per_step = {top: med / STEPS, **{k: med * r / STEPS for k, r in ratios.items()}}
    benchmark.extra_info.update(**{f"cost_per_step_{k}_nodes_s": c for k, c in per_step.items()})
    # linear in the active nodes: n times the nodes at most n times the cost (x 1.25 for a
    # shared machine), from each count to the next
    for lo, hi in pairwise(counts):
        goal(f"cost_ratio_{hi}_to_{lo}_nodes", hi / lo * 1.25, value=per_step[hi] / per_step[lo])
