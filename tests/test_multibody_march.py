"""The chunked kernel loop of the multibody contact stepper (kernel ``multibody``, compiled and
its NumPy twin) against the Python step loop (``loop='python'``, the reference).

The two loops are two implementations of one method: the tests hold them to the same node
forces, gaps, states, state changes, output channels and energies on the models of
``test_contact_multinode`` (impacts of two free masses, a mass on a moving belt, the plane-stress
block with 11 contact nodes, the beam-on-beam benchmark with one slave node), in which stick,
slip, separation and impacts all happen. Independent checks of the method itself (closed forms,
event-driven integration, the two-body core) are in ``test_contact_multinode``; here the check of
each model's physics (complementarity and Coulomb's law at every sample) is repeated on the
kernel loop, and two sliders on one belt (two interfaces) must each move as the single one.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.contact.engine import driver as stepper_compiled
from fesub.contact.engine.interfaces import ContactInterface
from fesub.contact.engine.bodies import Body, MultibodyModel
from fesub.contact.engine.stepper import simulate_multibody
from fesub.errors import ParameterError

from test_contact_multinode import (BC, BK, BM, BMU, BN, VB, belt_model, block_model, check_complementarity,
                                    two_masses)


def beam_on_beam_one_node(mu=0.3, vx=0.03):
    """The beam-on-beam benchmark as a multibody model with one slave node (the instance of
    ``test_one_slave_node_reproduces_the_two_body_sliding_core``): (model, initial, h)."""
    from fesub.models import beam_on_beam as bb

    return bb.multibody_model(bb.build(), mu=mu, vx=vx)


def belt_with_callable_motion(motion=lambda t: (VB * t, VB, 0.0)):
    """The belt model with the belt's motion (t -> u, v, a in m, m/s, m/s^2) given as a
    callable (the sampled-drive path)."""
    model = belt_model()
    mass, belt = model.bodies
    belt = Body(belt.M, belt.K, belt.X, belt.node_dofs, name="belt", prescribed={0: motion})
    return MultibodyModel([mass, belt], model.interfaces)


def _beam_case(series=False):
    model, initial, h = beam_on_beam_one_node()
    kw = dict(duration=300 * h, h=h, initial=initial)
    if series:  # a random vertical force on the slave (the roughness of the study): 5 % of the load
        slider = model.bodies[0]
        C = int(model.contacts[0]["slave"].nodes[0])
        kw["series"] = [("slider", int(slider.node_dofs[C, 1]), 0.02 * np.random.default_rng(1).standard_normal(300))]
    return model, kw


def slide_off():
    """A mass (1 kg, load 10 N down, mu = 0.1) sliding at 1 m/s along a fixed ground that ends at
    x = 0.1 m: it decelerates at 1 m/s^2 and leaves the ground at t = 1 - sqrt(0.8) s."""
    mass = Body(np.eye(2), np.zeros((2, 2)), [[0.0, 0.0]], [[0, 1]], name="mass", loads=[0.0, -10.0],
                outputs={"x": 0})
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-1.0, 0.0], [0.1, 0.0]], [[-1, -1], [-1, -1]],
                  name="ground")
    model = MultibodyModel([mass, ground], [ContactInterface("mass", [0], "ground", [[0, 1]], mu=0.1)])
    return model, dict(duration=0.2, h=1e-3, initial={"mass": ([0.0, 0.0], [1.0, 0.0])}, on_stick="stop")


def belt_with_series():
    """The belt model with a force series on the mass along x: a square wave of +-8 N (1 s
    period) and on y a ramp from 0 to -2 N (more load)."""
    n = 1500
    t = np.arange(n) * 1e-3
    fx = np.where((t % 1.0) < 0.5, 8.0, -8.0)
    return belt_model(), dict(duration=1.5, h=1e-3, series=[("mass", 0, fx), (0, 1, -2.0 * t / t[-1])])


def block_driven(calls=None):
    """The block of ``block_model`` pressed by its ramped load, its top edge driven along x by
    one callable motion after 0.06 s (a constant acceleration of 2 m/s^2 from rest: the sampled
    drive whose quasi-static motion is added back to the outputs), output channels on a free
    coordinate (the bottom's middle node, x) and a prescribed one (the top's first node, x),
    one sample every 4 steps. ``calls``: a list that receives each time the motion is called at."""
    from fesub.fe import PlaneStress, rectangle
    from fesub.substructure import Substructure

    model = block_model(rate=0.0)
    block = model.bodies[0]
    mesh = rectangle(0.1, 0.02, 10, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), rayleigh=(200.0, 0.0))
    top, bottom = mesh.nodes("top"), mesh.nodes("bottom")

    def edge(t):
        if calls is not None:
            calls.append(t)
        s = max(t - 0.06, 0.0)
        return s * s, 2.0 * s, 2.0 if t > 0.06 else 0.0

    mid = int(bottom[np.argsort(mesh.points[bottom, 0])][5])
    driven = Body.from_substructure(sub, name="block", loads=block.loads,
                                    prescribed={int(d): edge for d in sub.dofs(top, "x")},
                                    outputs={"bottom_x": int(sub.dofs([mid], "x")[0]),
                                             "top_x": int(sub.dofs(top[:1], "x")[0])})
    return MultibodyModel([driven, model.bodies[1]], model.interfaces)


BUILDERS = {
    "impacts": lambda: (two_masses(), dict(duration=0.2, h=1e-4, initial={"m1": ([0.0], [1.0])})),
    "belt": lambda: (belt_model(), dict(duration=2.0, h=1e-3)),
    "belt_callable": lambda: (belt_with_callable_motion(), dict(duration=1.2, h=1e-3)),
    "block": lambda: (block_model(rate=40.0), dict(duration=0.12, fs_out=1e4)),
    "beam_on_beam": _beam_case,
    "belt_stop": lambda: (belt_model(), dict(duration=2.0, h=1e-3, on_stick="stop", fs_out=100.0)),
    "beam_series": lambda: _beam_case(series=True),
    "belt_series": belt_with_series,
    "slide_off": slide_off,
    "block_driven": lambda: (block_driven(), dict(duration=0.08, h=1e-4, fs_out=2.5e3)),
}
# what must happen in each run (state codes 0 open, 1 stick, 2 slip+, 3 slip-), so that the
# comparison covers every branch: impacts and separation, stick, slip in both senses
HAPPENS = {"impacts": {0, 2}, "belt": {1, 3}, "belt_callable": {1, 3}, "block": {0, 1, 2},
           "beam_on_beam": {2}, "belt_stop": {1, 3}, "beam_series": {2}, "belt_series": {1, 2, 3},
           "slide_off": {2}, "block_driven": {1, 2}}


@pytest.fixture(scope="module")
def cases():
    """(model, run arguments) of every case, built once."""
    return {k: build() for k, build in BUILDERS.items()}


@pytest.fixture(scope="module")
def reference(cases):
    """The Python step loop's run of every case (compiled ``friction_lcp`` when built)."""
    return {k: simulate_multibody(m, loop="python", **kw) for k, (m, kw) in cases.items()}


def _same(a, b, model, accounts=True):
    """The two runs agree to round-off.

    Both loops do the same operations on the same numbers in an other order (the compiled
    kernel's reassociated sums, BLAS products in the Python loop): the differences start at
    1e-16 relative and the sweeps of the contact problem damp them (each sweep is a contraction
    to the tolerance). Forces: 1e-9 of the largest force (measured at most 3e-14 relative);
    gaps: the kernel tolerance tol (the sweeps stop once a gap moves by less than tol, and a
    sweep more or less changes it by at most that; measured below 1e-18 m); slip velocities,
    channels and energies: 1e-9 relative to their largest value (measured at most 1e-13), the
    displacements and velocities plus the tol (m) and tol / h (m/s) of that last sweep. Without
    ``accounts``, b kept none: its works are NaN, its kinetic and strain energies compared."""
    assert (a.status, a.steps, a.t.size) == (b.status, b.steps, b.t.size)
    np.testing.assert_array_equal(a.t, b.t)
    scale = np.abs(a.nodes["lambda_n"]).max(initial=0.0)
    # a node held closed with no load (after the impacts) carries round-off forces that come and
    # go with the round-off of its predicted gap: its state is round-off too. The states must
    # agree wherever the normal force is zero in both runs or above round-off (1e-9 of the
    # largest, the bound of the forces below) in both
    # largest, the bound of the forces below) in both. Likewise the sense of a slip (slip+ or
    # slip-) whose size is below the kernel tolerance in both runs is round-off: it is compared
    # as 'slip' only
    ln_a, ln_b = a.nodes["lambda_n"], b.nodes["lambda_n"]
    firm = (np.minimum(ln_a, ln_b) > 1e-9 * scale) | (np.maximum(ln_a, ln_b) == 0)
    still = np.maximum(np.abs(a.nodes["slip_velocity"]), np.abs(b.nodes["slip_velocity"])) * a.h <= a.tol
    sa, sb = (np.where(still & (r.nodes["state"] == 3), 2, r.nodes["state"]) for r in (a, b))
    np.testing.assert_array_equal(sa[firm], sb[firm])
    if np.array_equal(a.nodes["state"], b.nodes["state"]):
        np.testing.assert_array_equal(a.state_changes, b.state_changes)
    for k in ("lambda_n", "lambda_t"):
        np.testing.assert_allclose(b.nodes[k], a.nodes[k], rtol=0, atol=1e-9 * scale)
    np.testing.assert_array_equal(a.nodes["segment"], b.nodes["segment"])
    for k in ("force_x", "force_y"):
        np.testing.assert_allclose(b.nodes[k], a.nodes[k], rtol=0, atol=1e-9 * scale)
    # the contact point: where the slave projects on the predicted master (round-off of the
    # positions, plus the tol of a sweep more or less)
    for k in ("contact_x", "contact_y"):
        np.testing.assert_array_equal(np.isnan(a.nodes[k]), np.isnan(b.nodes[k]))
        np.testing.assert_allclose(b.nodes[k], a.nodes[k], rtol=0, atol=1e-12 * np.nanmax(np.abs(a.nodes[k]),
                                                                                           initial=1.0) + a.tol)
    np.testing.assert_array_equal(np.isnan(a.nodes["gap"]), np.isnan(b.nodes["gap"]))
    np.testing.assert_allclose(b.nodes["gap"], a.nodes["gap"], rtol=0, atol=a.tol)
    # displacements and velocities: round-off, plus what a sweep more or less leaves (a node
    # moves by less than tol in the last sweep: tol in m, tol / h in m/s)
    np.testing.assert_allclose(b.nodes["slip_velocity"], a.nodes["slip_velocity"], rtol=0,
                               atol=1e-9 * np.abs(a.nodes["slip_velocity"]).max(initial=0.0) + a.tol / a.h)
    for k, v in a.channels.items():
        slack = {"u": a.tol, "v": a.tol / a.h, "a": a.tol / a.h ** 2}[k[0]]
        np.testing.assert_allclose(b.channels[k], v, rtol=0, atol=1e-9 * np.abs(v).max(initial=0.0) + slack)
    # the energy accounts balance one another: their round-off is that of the largest of them
    kept = list(a.energies) if accounts else ["kinetic", "strain"]
    e_scale = max(np.abs(a.energies[k]).max(initial=0.0) for k in kept)
    for k in kept:
        np.testing.assert_allclose(b.energies[k], a.energies[k], rtol=0, atol=1e-9 * e_scale)
    for k in set(a.energies) - set(kept):
        assert np.isnan(b.energies[k]).all()
    check_complementarity(b, model)


@pytest.mark.parametrize("case", list(BUILDERS))
def test_kernel_loop_gives_the_python_loop_results(case, backend, cases, reference):
    model, kw = cases[case]
    res = simulate_multibody(model, **kw)
    assert res.info["loop"] == "kernel" and res.backend == backend
    a = reference[case]
    assert a.info["loop"] == "python"
    _same(a, res, model)
    assert HAPPENS[case] <= set(np.unique(res.nodes["state"]).tolist())
    assert res.info["total_sweeps"] == a.info["total_sweeps"]
    if case == "impacts":
        assert res.energies["impact_loss"][-1] > 0  # the inelastic impacts lost energy
    if case == "belt_stop":
        assert res.status == "stick"
    if case == "slide_off":
        # the step whose predicted position passes the end x = 0.1 m is not taken: x(t) =
        # t - t^2 / 2 reaches it at 1 - sqrt(0.8) = 0.10557 s, inside step 105 (t_105 -> t_106)
        assert res.status == "off_surface" and res.steps == 105 and res.t[-1] == pytest.approx(0.104)
        # the central difference is exact for a constant deceleration but for its start
        # (x_-1 = x_0 - h v_0): a velocity offset h a / 2, i.e. at most 0.5 1e-3 0.105 m = 5.3e-5 m
        np.testing.assert_allclose(res.channels["u_x"], res.t - res.t ** 2 / 2, rtol=0, atol=6e-5)


@pytest.mark.parametrize("case", list(BUILDERS))
def test_a_run_without_work_accounts_moves_the_same(case, backend, cases, reference, tmp_path):
    """accounts=False leaves the works out of the kernel's passes and the Python loop's steps:
    the motion, the forces and the kinetic and strain energies are those of the reference run
    (which keeps them) to the round-off of ``_same``; the four works are NaN and the energy
    balance is refused."""
    model, kw = cases[case]
    a = reference[case]
    res = simulate_multibody(model, accounts=False, **kw)
    assert res.info["loop"] == "kernel" and res.backend == backend and res.info["accounts"] is False
    _same(a, res, model, accounts=False)
    assert res.info["total_sweeps"] == a.info["total_sweeps"]
    with pytest.raises(ParameterError, match="no work accounts"):
        res.energy_residual()
    if case == "belt":  # saved and reopened, it still knows
        import fesub

        res.save(tmp_path / "run.nc")
        back = fesub.load(tmp_path / "run.nc")
        assert not back.info["accounts"] and np.isnan(back.energies["external_work"]).all()
        with pytest.raises(ParameterError, match="no work accounts"):
            back.energy_residual()
    if backend == "compiled":  # the Python loop without them: the same steps, so the same numbers
        py = simulate_multibody(model, accounts=False, loop="python", **kw)
        for k, v in a.nodes.items():
            np.testing.assert_array_equal(py.nodes[k], v)
        for k, v in a.channels.items():
            np.testing.assert_array_equal(py.channels[k], v)
        for k in ("kinetic", "strain"):
            np.testing.assert_array_equal(py.energies[k], a.energies[k])
        assert all(np.isnan(py.energies[k]).all() for k in ("damping_loss", "external_work",
                                                             "friction_dissipation", "impact_loss"))


def test_two_interfaces_move_as_two_single_ones(backend):
    """Two sliders (one with mu = 0.5, one with mu = 0.3) on one belt, each its own interface:
    each must move exactly as the single slider of its friction on that belt (the sliders do
    not interact; the kernel stacks the interfaces)."""
    bodies, itfs = [], []
    for i, mu in enumerate((BMU, 0.3)):
        bodies.append(Body(np.eye(2) * BM, np.diag([BK, 0.0]), [[0.0, 0.0]], [[0, 1]], C=np.diag([BC, 0.0]),
                           name=f"mass{i}", loads=[0.0, -BN], outputs={f"x{i}": 0}))
        itfs.append(ContactInterface(f"mass{i}", [0], "belt", [[0, 1]], mu=mu))
    belt = belt_model().bodies[1]
    both = simulate_multibody(MultibodyModel(bodies + [belt], itfs), duration=1.5, h=1e-3)
    assert both.info["loop"] == "kernel"
    for i in range(2):
        single = simulate_multibody(MultibodyModel([bodies[i], belt], [itfs[i]]), duration=1.5, h=1e-3)
        np.testing.assert_array_equal(both.nodes["state"][:, i], single.nodes["state"][:, 0])
        # same arithmetic on the same numbers, except the modal coordinates of the other slider
        # in the sums over the modes (zero rows): equal to round-off, 1e-12 relative
        for k in ("lambda_n", "lambda_t", "slip_velocity"):
            v = single.nodes[k][:, 0]
            np.testing.assert_allclose(both.nodes[k][:, i], v, rtol=0, atol=1e-12 * np.abs(v).max())
        np.testing.assert_allclose(both.channels[f"u_x{i}"], single.channels[f"u_x{i}"], rtol=0,
                                   atol=1e-12 * np.abs(single.channels[f"u_x{i}"]).max())


def test_interrupt_while_sampling_returns_the_steps_done(backend):
    """Ctrl-C raised by a prescribed motion when asked for t > 0.05 s (sampled per chunk): the
    steps sampled before it are marched and returned, the same as the Python loop returns."""

    def belt_motion(t):
        if t > 0.05:
            raise KeyboardInterrupt
        return VB * t, VB, 0.0

    model = belt_with_callable_motion(belt_motion)
    res = simulate_multibody(model, duration=1.0, h=1e-3)
    ref = simulate_multibody(model, duration=1.0, h=1e-3, loop="python")
    assert res.status == ref.status == "interrupted"
    # step n asks for the motion at t_n + h: the step that asks for 0.051 s is step 50
    assert res.t.size == res.steps == ref.steps == 50
    _same(ref, res, model)


def test_chunks_of_a_run_with_nothing_sampled(backend, monkeypatch):
    """A model with constant loads and drive velocities samples nothing per step (no per-step
    loop in Python between its chunks), and its chunks grow to about _CHUNK_SECONDS of marching.
    The belt's stick-slip run in one chunk and cut into chunks of 97 steps gives the same run to
    round-off (each chunk forms its first predictor afresh, in another order of the same
    operations)."""
    model = belt_model()
    whole = simulate_multibody(model, duration=1.0, h=1e-3)  # (1000 steps < the first chunk)
    monkeypatch.setattr(stepper_compiled, "_CHUNK", 97)
    monkeypatch.setattr(stepper_compiled, "_CHUNK_MAX", 97)
    cut = simulate_multibody(model, duration=1.0, h=1e-3)
    assert whole.steps == 1000 and set(np.unique(whole.nodes["state"])) >= {1, 3}  # stick and slip
    _same(whole, cut, model)


def test_chunks_grow_to_a_tenth_of_a_second(monkeypatch):
    """After its first chunk of _CHUNK steps the loop sizes each chunk to about _CHUNK_SECONDS
    of marching from the pace of the last one: a 200 000-step belt run (about a microsecond a
    step in the compiled kernel) returns to Python a handful of times, not once per 4096 steps
    (49 chunks), and every step is still marched once."""
    K = _backend.kernels("multibody")
    if K.__name__.endswith("_ref"):
        pytest.skip("the compiled kernel sets the pace (the twin is a thousand times slower)")
    counts = []

    class Counting:
        work_sizes = staticmethod(K.work_sizes)
        __name__ = K.__name__

        @staticmethod
        def march(h, n, *args):
            counts.append(n)
            K.march(h, n, *args)

    monkeypatch.setattr(stepper_compiled, "kernels", lambda name: Counting)
    res = simulate_multibody(belt_model(), duration=200.0, h=1e-3, fs_out=10.0)
    assert res.steps == sum(counts) == 200_000
    # (0.2-0.4 s of marching here: 3-5 chunks; 20 leaves a loaded machine five times slower)
    assert counts[0] == stepper_compiled._CHUNK and len(counts) <= 20, counts


def test_interrupt_between_chunks_keeps_the_finished_chunks(backend, monkeypatch):
    """Ctrl-C arriving while the second chunk marches: the first chunk is kept, the chunk in
    flight is dropped (a compiled chunk is not interrupted: the signal is seen when it returns,
    before its counters are taken), and what is kept equals the uninterrupted run's."""
    monkeypatch.setattr(stepper_compiled, "_CHUNK", 100)
    K = _backend.kernels("multibody")
    calls = []

    class Interrupting:
        work_sizes = staticmethod(K.work_sizes)
        __name__ = K.__name__

        @staticmethod
        def march(*args):
            K.march(*args)
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt

    monkeypatch.setattr(stepper_compiled, "kernels", lambda name: Interrupting)
    model = belt_model()
    res = simulate_multibody(model, duration=1.0, h=1e-3)
    assert res.status == "interrupted" and res.steps == res.t.size == 100 and len(calls) == 2
    monkeypatch.undo()
    full = simulate_multibody(model, duration=0.1, h=1e-3)
    assert full.steps == 100 and full.status == "completed"
    for k in ("lambda_n", "lambda_t", "gap", "state"):
        np.testing.assert_array_equal(res.nodes[k], full.nodes[k])
    for k in res.energies:
        np.testing.assert_array_equal(res.energies[k], full.energies[k])


def test_full_modal_damping_falls_back_to_the_python_loop():
    """A damping matrix that is not diagonal in the modes leaves the kernel loop out: 'auto' runs
    the Python loop and says why, 'kernel' is refused."""
    mass = Body(np.eye(2), np.diag([BK, 4 * BK]), [[0.0, 0.0]], [[0, 1]], C=[[0.3, 0.1], [0.1, 0.3]], name="mass",
                loads=[0.0, -BN])
    model = MultibodyModel([mass, belt_model().bodies[1]], [ContactInterface("mass", [0], "belt", [[0, 1]], mu=BMU)])
    assert stepper_compiled.unsupported(model) is not None
    res = simulate_multibody(model, duration=0.05, h=1e-3)
    assert res.info["loop"] == "python" and "diagonal" in res.info["python_loop_reason"]
    with pytest.raises(ParameterError, match="loop='kernel'"):
        simulate_multibody(model, duration=0.05, h=1e-3, loop="kernel")
    with pytest.raises(ParameterError, match="loop"):
        simulate_multibody(model, duration=0.05, h=1e-3, loop="fast")


def test_a_sampled_motion_is_called_once_per_time_and_kept_for_the_outputs(backend):
    """The kernel loop calls a prescribed motion once per time index (two more at each chunk's
    start: the drive of its first step looks one step back and ahead) and takes the outputs'
    prescribed channels and quasi-static motion from what it sampled; the channel of the driven
    coordinate is then the callable's value at each sample time, exactly."""
    calls = []
    model = block_driven(calls)
    res = simulate_multibody(model, duration=0.08, h=1e-4, fs_out=2.5e3)
    assert res.info["loop"] == "kernel" and res.backend == backend
    steps = res.steps
    k = np.rint(np.array(calls) / 1e-4).astype(int)
    assert set(k.tolist()) == set(range(-1, steps + 1))
    chunks = np.count_nonzero(np.diff(k) < 0) + 1   # each chunk starts one step back
    assert k.size <= steps + 2 + 2 * chunks, (k.size, steps, chunks)
    s = np.maximum(res.t - 0.06, 0.0)
    np.testing.assert_array_equal(res.channels["u_top_x"], s * s)
    np.testing.assert_array_equal(res.channels["v_top_x"], 2.0 * s)



@pytest.mark.parametrize("loop", ["python", "kernel"])
def test_the_progress_bar_counts_every_step(loop, monkeypatch):
    """The bar shown with ``progress=True`` ends at the number of steps marched, in both loops (a
    run shorter than a thousand steps once ended at zero in the Python loop)."""
    from fesub.contact.engine import stepper

    counts = []

    class Bar:
        def __init__(self, total=None, disable=False, **kw):
            self.n, self.total = 0, total
            counts.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            pass

    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    res = stepper.simulate_multibody(belt_model(), duration=0.0351, h=1e-4, loop=loop, progress=True)
    assert res.info["loop"] == loop and res.steps == 351
    assert [b.n for b in counts] == [b.total for b in counts] == [351]
