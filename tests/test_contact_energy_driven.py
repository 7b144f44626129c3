"""Energy accounts of bodies moved far by their drives (multibody contact engine).

A soft plane-stress block (10 x 5 mm in 1 mm elements) is pressed on a rigid ground by 10 N and
dragged 10 mm (ten element sizes) by its top edge, with Coulomb friction mu = 0.3: by a constant
velocity, by a callable motion, and through a holder tied to the block whose own top edge is
driven. Every node's displacement is an output channel, so the checks use quantities formed
here from the substructures' own matrices, independently of the modal accounts:

* the strain energy reported equals ``d' K d / 2`` of the bodies' deformation ``d`` (the nodal
  displacements minus their least-squares rigid motion), at every sample;
* the drive's work over the sliding window equals the friction dissipation plus the changes of
  strain and kinetic energy (and the damping loss), and equals the work of the reaction force
  at the driven edge (``(M q'' + C q' + K q)`` on the prescribed coordinates) times its motion;
* the friction dissipation over that window equals mu N times the distance the contact nodes
  slid on the ground (their displacement, read from the channels) within 1 %.
"""

import numpy as np
import pytest

from fesub.contact import Body, ContactInterface, MultibodyModel, TiedInterface, simulate_multibody
from fesub.fe import PlaneStress, rectangle
from fesub.errors import ParameterError
from fesub.substructure import Substructure

N, MU, V = 10.0, 0.3, 0.1           # normal load (N), friction, drag velocity (m/s)
T_LOAD, T_END = 5e-3, 0.105          # load ramp (s), end of the run: 10 mm of drag and more (s)
RUBBER = PlaneStress(2e6, 0.3, 1000.0, 0.01)


def _smooth(t, T):
    s = min(max(t / T, 0.0), 1.0)
    return s * s * (3 - 2 * s)


def _sub(length, height, nx, ny, origin, name):
    mesh = rectangle(length, height, nx, ny, origin=origin)
    # stiffness-proportional damping, 5 % near the block's first modes (~2 kHz): it settles the
    # load ramp and the start of the drag; no mass-proportional part (it would resist the drag)
    return mesh, Substructure(mesh, RUBBER, rayleigh=(0.0, 2 * 0.05 / (2 * np.pi * 2e3)), name=name)


def _press(sub, nodes):
    share = np.ones(nodes.size)
    share[[0, -1]] = 0.5
    share /= share.sum()
    dy = sub.dofs(nodes, "y")

    def loads(t):
        f = np.zeros(sub.n_dofs)
        f[dy] = -N * _smooth(t, T_LOAD) * share
        return f
    return loads


def _ramp_motion(t):
    """Still during the load ramp, then the velocity rises smoothly to V over 2 ms."""
    r, tau = 2e-3, max(t - T_LOAD, 0.0)
    if tau < r:
        s = tau / r
        return V * r * (s ** 3 - 0.5 * s ** 4), V * (3 * s * s - 2 * s ** 3), V * (6 * s - 6 * s * s) / r
    return V * (tau - 0.5 * r), V, 0.0


def _ground():
    return Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]], [[-1, -1], [-1, -1]],
                name="ground")


def _all_outputs(sub, tag):
    return {f"{tag}{i}": i for i in range(sub.n_dofs)}


def _build(case):
    """(model, parts): parts = [(substructure, body index, channel tag, driven coordinates)]."""
    mesh, block = _sub(0.010, 0.005, 10, 5, (0.0, 0.0), "block")
    top, bottom = mesh.nodes("top"), mesh.nodes("bottom")
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    contact = ContactInterface("block", bottom, "ground", [[0, 1]], mu=MU)
    if case in ("constant", "callable"):
        motion = V if case == "constant" else _ramp_motion
        driven = block.dofs(top, "x")
        body = Body.from_substructure(block, name="block", loads=_press(block, top),
                                      prescribed={int(d): motion for d in driven},
                                      outputs=_all_outputs(block, "b"))
        model = MultibodyModel([body, _ground()], [contact])
        return model, [(block, 0, "b", driven)], bottom, block
    hmesh, holder = _sub(0.010, 0.002, 10, 2, (0.0, 0.005), "holder")
    htop = hmesh.nodes("top")
    hbottom, btop = hmesh.nodes("bottom"), top
    hbottom, btop = hbottom[np.argsort(hmesh.points[hbottom, 0])], btop[np.argsort(mesh.points[btop, 0])]
    driven = holder.dofs(htop, "x")
    hbody = Body.from_substructure(holder, name="holder", loads=_press(holder, htop),
                                   prescribed={int(d): V for d in driven}, outputs=_all_outputs(holder, "h"))
    bbody = Body.from_substructure(block, name="block", outputs=_all_outputs(block, "b"))
    model = MultibodyModel([bbody, hbody, _ground()], [contact], [TiedInterface("block", btop, "holder", hbottom)])
    return model, [(block, 0, "b", None), (holder, 1, "h", driven)], bottom, block


def _deformation(sub, u):
    """Nodal displacements (k, n_dofs) minus their least-squares (linearised) rigid motion."""
    X = sub.mesh.points[:, :2]
    full = np.array([sub.expand(x)[:, :2] for x in u])          # (k, nodes, 2)
    c = X.mean(0)
    A = np.zeros((2 * X.shape[0], 3))
    A[0::2, 0], A[1::2, 1] = 1.0, 1.0
    A[0::2, 2], A[1::2, 2] = -(X[:, 1] - c[1]), X[:, 0] - c[0]
    flat = full.reshape(full.shape[0], -1)
    rigid = np.linalg.lstsq(A, flat.T, rcond=None)[0]
    return flat - (A @ rigid).T, full


def _fields(res, sub, tag):
    """Displacement at the mid-step (m), at t_n, velocity and acceleration of every coordinate."""
    u, v, a = (np.column_stack([res.channels[f"{p}_{tag}{i}"] for i in range(sub.n_dofs)]) for p in "uva")
    h = res.h
    # the channels hold q_n, (q_{n+1} - q_{n-1}) / 2h and (q_{n+1} - 2 q_n + q_{n-1}) / h^2:
    # (q_n + q_{n+1}) / 2 = q_n + h/2 v + h^2/4 a exactly
    return u + 0.5 * h * v + 0.25 * h * h * a, u, v, a


def _elastic(sub, q):
    """d' K d / 2 (J) of the deformation of coordinates q (k, n_dofs), K the substructure's."""
    d, _ = _deformation(sub, q)
    K = sub.K.toarray()
    dofs = np.array([sub.dofmap.dofs([i], c)[0] for i in range(sub.mesh.points.shape[0]) for c in ("x", "y")])
    full = np.zeros((q.shape[0], sub.dofmap.n_dofs))
    full[:, dofs] = d
    dq = full[:, sub.retained]
    return 0.5 * np.einsum("ki,ij,kj->k", dq, K, dq)


@pytest.fixture(scope="module", params=["constant", "callable", "tied"])
def run(request):
    model, parts, bottom, block = _build(request.param)
    res = simulate_multibody(model, duration=T_END, fs_out=2e4, progress=False)
    return request.param, model, parts, bottom, block, res


def test_strain_energy_is_the_elastic_energy_of_the_deformation(run):
    case, model, parts, bottom, block, res = run
    assert res.status == "completed"
    strain = sum(_elastic(sub, _fields(res, sub, tag)[0]) for sub, _, tag, _ in parts)
    # the block is dragged 10 mm: the quasi-static drag stores nothing; what is stored is the
    # shear of friction and the compression of the load, ~1e-3 J
    assert 1e-4 < strain[-1] < 1e-2
    # both sides are the same quadratic form of the same displacements (the reported one over the
    # modal coordinates): round-off of ~1e-16 of the 10 mm motion in K q, far below 1e-9 of it
    np.testing.assert_allclose(res.energies["strain"], strain, rtol=1e-7, atol=1e-9 * strain.max())


def _window(res):
    """Samples of steady sliding after the ramps (the last 80 ms): no contact node sticks (the
    trailing corner may lift off), most slip."""
    i0 = np.searchsorted(res.t, T_END - 0.08)
    st = res.nodes["state"][i0:]
    assert np.all(st != 1) and np.all(np.count_nonzero(st >= 2, axis=1) >= 8)
    return i0, res.t.size - 1


def test_drive_work_is_dissipation_plus_stored_and_kinetic_changes(run):
    case, model, parts, bottom, block, res = run
    e = res.energies
    i0, i1 = _window(res)
    d = {k: v[i1] - v[i0] for k, v in e.items()}
    balance = d["friction_dissipation"] + d["strain"] + d["kinetic"] + d["damping_loss"] + d["impact_loss"]
    # the balance of the central-difference step holds to h^2/8 v'Kv per sample: ~1e-9 of the work
    assert abs(d["external_work"] - balance) < 1e-6 * d["external_work"]
    # the drive's work measured independently: the reaction at the driven coordinates
    # (M q'' + C q' + K q over them; no load or contact acts there) times their motion
    work = 0.0
    for sub, _, tag, driven in parts:
        if driven is None:
            continue
        _, u, v, a = _fields(res, sub, tag)
        K, M, C = (x.toarray() for x in (sub.K, sub.M, sub.C))
        R = (a @ M[:, driven] + v @ C[:, driven] + u @ K[:, driven]).sum(1)   # (k,) in N along x
        work = np.sum(0.5 * (R[i0:i1] + R[i0 + 1:i1 + 1]) * V * np.diff(res.t[i0:i1 + 1]))
    # steady sliding at constant velocity: the drive's work and the accounts' agree to the
    # oscillation of the relative momentum (the kinetic energy of the deformation's cross term
    # with the drag), a few 1e-4 of the work; 1 % is the standard
    assert work == pytest.approx(d["external_work"], rel=1e-2)


def test_friction_dissipation_is_mu_n_times_sliding_distance(run):
    case, model, parts, bottom, block, res = run
    i0, i1 = _window(res)
    xs = block.dofs(bottom, "x")
    slide = np.mean([res.channels[f"u_b{i}"][i1] - res.channels[f"u_b{i}"][i0] for i in xs])
    assert slide > 7e-3                                        # seven element sizes in the window
    dissipated = res.energies["friction_dissipation"][i1] - res.energies["friction_dissipation"][i0]
    # the normal force sums to N in steady sliding up to the block's vibration (damped): 1 %
    assert dissipated == pytest.approx(MU * N * slide, rel=1e-2)


def test_steel_block_dragged_2_mm_stores_only_what_friction_and_load_strain_into_it():
    """A steel block (10 x 5 mm, 5 mm thick, 4 x 2 elements) pressed by 20 N on a rigid ground
    and dragged 2 mm at 0.1 m/s by its top edge, mu = 0.25: the strain energy reported is the
    block's elastic energy (of order 1e-8 - 1e-7 J: 20 N of compression and 5 N of shear on a
    stiffness of ~1e9 N/m), not the ~kJ of a 2 mm rigid drag formed as if the driven edge stayed
    put."""
    mesh = rectangle(0.010, 0.005, 4, 2)
    steel = PlaneStress(210e9, 0.3, 7850.0, 0.005)
    sub = Substructure(mesh, steel, rayleigh=(0.0, 2 * 0.05 / (2 * np.pi * 200e3)), lumped=True, name="block")
    top, bottom = mesh.nodes("top"), mesh.nodes("bottom")
    body = Body.from_substructure(sub, name="block", prescribed={int(d): 0.1 for d in sub.dofs(top, "x")},
                                  outputs=_all_outputs(sub, "b"))
    model = MultibodyModel([body, _ground()], [ContactInterface("block", bottom, "ground", [[0, 1]], mu=0.25)])
    h = 0.9 * model.critical_step()
    steps = int(np.ceil(0.02 / h - 1e-9))
    ramp = np.clip(np.arange(steps) * h / 2e-3, 0.0, 1.0)
    ramp = -20.0 * ramp * ramp * (3 - 2 * ramp) / (top.size - 1)
    series = [("block", int(d), ramp * (0.5 if k in (0, top.size - 1) else 1.0))
              for k, d in enumerate(sub.dofs(top[np.argsort(mesh.points[top, 0])], "y"))]
    res = simulate_multibody(model, duration=0.02, h=h, fs_out=1e4, series=series, progress=False)
    strain = _elastic(sub, _fields(res, sub, "b")[0])
    assert 1e-9 < res.energies["strain"][-1] < 1e-6
    # the same quadratic form of the same displacements; round-off of K q for the 2 mm motion
    # (~1e-16 x 1e9 N/m x 2 mm x 2 mm ~ 1e-15 J) far below 1e-3 of the energy
    np.testing.assert_allclose(res.energies["strain"], strain, rtol=1e-6, atol=1e-3 * strain[-1])
    # the drive's work is the friction's (mu N x 2 mm less the load ramp: ~0.0099 J) plus what
    # is stored, to the balance's O(h^2) residual h^2/8 v'Kv: the block starts at 0.1 m/s against
    # its still free nodes, and that vibration leaves ~3e-5 of the work
    assert abs(res.energy_residual()[-1]) < 1e-4 * res.energies["external_work"][-1]
    assert res.energies["external_work"][-1] == pytest.approx(0.25 * 20.0 * 2e-3, rel=0.05)


@pytest.mark.slow
def test_own_contact_study_example_holds_its_numbers(tmp_path, drawn_figures, monkeypatch):
    """The gallery's contact study of one's own (steel block dragged 2 mm on an aluminium
    Craig-Bampton plate): friction at mu N while sliding, friction dissipation mu N times the
    distance slid, energies of the deformation (mJ, not the kJ of a drag formed with the driven
    edge held at zero), the balance closed; its figures carry titles and labelled axes; the
    result reopens."""
    import runpy
    import sys
    from pathlib import Path

    import fesub
    from fesub.plots import style

    script = Path(__file__).resolve().parents[1] / "examples" / "own_contact_study.py"
    monkeypatch.setattr(sys, "argv", [str(script), str(tmp_path)])
    ns = runpy.run_path(str(script), run_name="__main__")
    res, MU_, N_ = ns["res"], ns["MU"], ns["N"]
    assert res.status == "completed"
    # 4 ms after the drag starts every node slides: the forces' ratio is mu to the kernel's
    # tolerance on the friction cone (1e-12), averaged over samples
    assert ns["ratio"].mean() == pytest.approx(MU_, rel=1e-6)
    f = res.contact_forces()
    sliding = ns["sliding"]
    assert f["normal"][sliding].mean() == pytest.approx(N_, rel=0.01)       # the 20 N load, settled
    e = res.energies
    # the distance slid: the drive's 2 mm (less half the 1 ms velocity ramp) and the plate's
    # vibration under the block (its top fibre moves along x as it bends: about 1 % more), read from
    # the nodes' slip velocities (mean over the nodes, integrated over the samples); mu N times it
    # within 1 %
    drive = ns["V"] * (ns["T_END"] - ns["T_DRAG"] - 0.5e-3)
    slip = np.abs(np.nan_to_num(res.nodes["slip_velocity"])).mean(axis=1)
    slide = float(np.sum(0.5 * (slip[1:] + slip[:-1]) * np.diff(res.t)))
    assert slide == pytest.approx(drive, rel=0.05)
    assert e["friction_dissipation"][-1] == pytest.approx(MU_ * N_ * slide, rel=0.01)
    assert e["strain"][-1] < 1e-2 and e["external_work"][-1] < 0.02          # J, not kJ
    assert abs(res.energy_residual()).max() < 1e-6 * e["external_work"][-1]
    assert len(drawn_figures) == 2
    for fig, _ in drawn_figures:
        style.check_figure(fig)
    again = fesub.load(Path(tmp_path) / "block_on_plate.nc")
    np.testing.assert_array_equal(again.energies["strain"], e["strain"])


def test_contact_forces_friction_and_normal_against_the_global_sums_on_an_inclined_ground():
    """On a ground inclined by theta the friction (sum of lambda_t) and the normal force (sum of
    lambda_n) are the global sums turned by theta: x = F_t cos - F_n sin, y = F_t sin + F_n cos;
    sliding, |F_t| = mu F_n; the interface is found by name or index, a wrong one is named."""
    th = 0.3
    c, s = np.cos(th), np.sin(th)
    mesh = rectangle(0.010, 0.005, 4, 2, angle=th)
    sub = Substructure(mesh, RUBBER, rayleigh=(0.0, 2 * 0.05 / (2 * np.pi * 2e3)), name="block")
    top, bottom = mesh.nodes("top"), mesh.nodes("bottom")
    f = np.zeros(sub.n_dofs)
    f[sub.dofs(top, "x")] = N * s / top.size            # pressed along -n = (sin, -cos)
    f[sub.dofs(top, "y")] = -N * c / top.size
    f[sub.dofs(top, "x")] += 1.5 * MU * N * c / top.size    # and pulled along t past mu N: slides
    f[sub.dofs(top, "y")] += 1.5 * MU * N * s / top.size
    body = Body.from_substructure(sub, name="block", loads=lambda t: f * min(t / 2e-3, 1.0) * 3.0)
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05 * c, -0.05 * s], [0.15 * c, 0.15 * s]],
                  [[-1, -1], [-1, -1]], name="ground")
    model = MultibodyModel([body, ground], [ContactInterface("block", bottom, "ground", [[0, 1]], mu=MU,
                                                             name="incline")])
    res = simulate_multibody(model, duration=6e-3, fs_out=5e3, progress=False)
    F = res.contact_forces("incline")
    np.testing.assert_allclose(F["x"], F["friction"] * c - F["normal"] * s, atol=1e-12 * N)
    np.testing.assert_allclose(F["y"], F["friction"] * s + F["normal"] * c, atol=1e-12 * N)
    late = res.t > 4e-3
    assert np.all(res.nodes["state"][late] != 1)       # every closed node slides (some bounce open)
    # at the friction limit to the kernel's cone tolerance (1e-12 of each force)
    np.testing.assert_allclose(np.abs(F["friction"][late]), MU * F["normal"][late], rtol=1e-9)
    for k in F:
        np.testing.assert_array_equal(F[k], res.contact_forces(0)[k])
    with pytest.raises(ParameterError, match=r"no interface 'nope'; the run's interfaces are \['incline'\]"):
        res.contact_forces("nope")
