"""Multibody contact stepper: cost per step against the two-body sliding core on the same
problem (one slave node of the beam-on-beam benchmark), and its growth with the number of
contact nodes (an FE block pressed on the ground with 11 and 41 bottom nodes)."""

from __future__ import annotations

import numpy as np

from fesub.contact import Body, ContactInterface, MultibodyModel, simulate, simulate_multibody
from fesub.fe import PlaneStress, rectangle
from fesub.models import beam_on_beam as bb
from fesub.substructure import Substructure

N_STEPS = 2000


def _beam_on_beam(mu=0.3, vx=0.03):
    m = bb.build()
    S, p = bb.contact_system(m), m.params
    s1, s2 = m.sub1, m.sub2
    A, C = s1.mesh.nodes("A"), s1.mesh.node("C")
    slider = Body.from_craig_bampton(m.cb1, name="slider", prescribed={int(d): vx for d in s1.dofs(A, "x")},
                                     loads={int(d): -p.Fy / A.size for d in s1.dofs(A, "y")})
    target = Body.from_craig_bampton(m.cb2, name="target")
    model = MultibodyModel([slider, target], [ContactInterface("slider", [C], "target", s2.mesh.edges("contact"),
                                                                mu=mu)])
    w1, q2, _ = S.static_state(mu, vx, 1.0)
    u1, v1 = np.zeros(slider.n), np.zeros(slider.n)
    u1[slider.f_idx], v1[slider.f_idx] = w1, vx * S.r1[S.f1_idx]
    initial = {"slider": (u1, v1), "target": (q2, np.zeros(target.n))}
    return S, model, initial, 0.9 * S.critical_step()


def test_one_node_against_the_two_body_core(benchmark, ratio_to, goal):
    S, model, initial, h = _beam_on_beam()
    res = benchmark.pedantic(simulate_multibody, args=(model,),
                             kwargs=dict(duration=N_STEPS * h, h=h, initial=initial), rounds=3)
    assert res.steps == N_STEPS
    r = ratio_to("two_body_core", simulate, S, mu=0.3, duration=N_STEPS * h, h=h, fs_out=1 / h, vx=0.03)
    benchmark.extra_info.update(steps=N_STEPS, modes=model.n_modes)
    if r is not None:
        # the core marches in one compiled loop (its time is mostly the static state and the set-up
        # at this length); the general stepper assembles rows and searches in NumPy each step:
        # recorded, the goal is the general stepper within 20 x of the core
        goal("ratio_two_body_core", 0.05, value=r, higher=True)


def _block(nx):
    mesh = rectangle(0.1, 0.02, nx, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), rayleigh=(200.0, 0.0))
    top = mesh.nodes("top")
    w = np.ones(top.size)
    w[[0, -1]] = 0.5
    f = np.zeros(sub.n_dofs)
    f[sub.dofs(top, "y")] = -10.0 * w / w.sum()
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]], [[-1, -1], [-1, -1]],
                  name="ground")
    return MultibodyModel([Body.from_substructure(sub, name="block", loads=f), ground],
                          [ContactInterface("block", mesh.nodes("bottom"), "ground", [[0, 1]], mu=0.3)])


def test_cost_per_step_with_the_number_of_nodes(benchmark, ratio_to, goal):
    small, large = _block(10), _block(40)
    kw = dict(duration=200 * 2.5e-5, h=2.5e-5)  # below the stability limit of the finer mesh
    res = benchmark.pedantic(simulate_multibody, args=(large,), kwargs=kw, rounds=3)
    assert res.nodes["state"].shape[1] == 41
    r = ratio_to("11_nodes", simulate_multibody, small, **kw)
    benchmark.extra_info.update(nodes=(11, 41), modes=(small.n_modes, large.n_modes))
    if r is not None:
        # 3.7 x the nodes and 3.6 x the modes: a step linear in (active rows x modes) would cost
        # 13 x; the per-step Python work is shared, so the goal is at most that
        goal("cost_ratio_41_to_11_nodes", 13.0, value=1.0 / r)
