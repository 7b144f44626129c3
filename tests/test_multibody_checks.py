"""A multibody contact model refuses what is wrong where it is built or started: an indefinite
stiffness, loads and motions that return non-finite values, contact rows that cannot mean
anything, a slave node that starts inside its master, a run of absurd length; a user's callable
that raises keeps its exception, with a note naming it and the time."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact import ContactInterface
from fesub.contact import Body, MultibodyModel
from fesub.contact import simulate_multibody
from fesub.errors import ModelError, ParameterError

LOOPS = ["kernel", "python"]


def _ground(x0=-1.0, x1=1.0, y=0.0):
    return Body(np.zeros((0, 0)), np.zeros((0, 0)), [[x0, y], [x1, y]], [[-1, -1], [-1, -1]],
                name="ground")


def _mass(K=None, y=0.0, **kw):
    """A 1 kg point mass at (0, y) (m), on springs K (N/m), over coordinates (x, y)."""
    return Body(np.eye(2), np.zeros((2, 2)) if K is None else K, [[0.0, y]], [[0, 1]], name="mass",
                **kw)


def _model(mass, ground=None, mu=0.2):
    ground = ground or _ground()
    return MultibodyModel([mass, ground], [ContactInterface("mass", [0], "ground", [[0, 1]], mu=mu)])


def test_an_indefinite_stiffness_is_refused_not_marched_as_a_rigid_mode():
    """K = [[-100]] was marched as a free rigid mode (its eigenvalue set to 0) and 'completed';
    the exact motion grows like cosh(10 t)."""
    body = Body([[1.0]], [[-100.0]], [[0.0, 0.0]], [[0, -1]], name="b")
    with pytest.raises(ModelError, match=r"stiffness of bodies \['b'\] is indefinite.*-100"):
        MultibodyModel([body])
    with pytest.raises(ModelError, match="indefinite"):
        _model(_mass(K=np.diag([1e4, -1e4]), y=0.1))
    # a semi-definite K (a rigid mode, its eigenvalue at round-off) is accepted as before
    m = MultibodyModel([Body(np.eye(2), [[1.0, -1.0], [-1.0, 1.0]], [[0.0, 0.0]], [[0, 1]])])
    assert m.omega2[0] == 0.0 and abs(m.omega2[1] - 2.0) < 1e-12
    with pytest.raises(ModelError, match="mass matrix .* not positive definite"):
        MultibodyModel([Body([[-1.0]], [[1.0]], [[0.0, 0.0]], [[0, -1]])])


def _nan_after(t_bad, value, n=2):
    def load(t):
        return np.full(n, np.nan) if t >= t_bad else value
    return load


@pytest.mark.parametrize("loop", LOOPS)
def test_loads_that_turn_nan_partway_are_refused_naming_the_time(loop):
    """A loads callable returning NaN at t >= 0.05 s gave a 'completed' run full of NaN."""
    model = _model(_mass(y=0.0, loads=_nan_after(0.05, np.array([1.0, -10.0]))))
    with pytest.raises(ParameterError, match=r"loads of body 'mass'.*_nan_after.<locals>.load.*"
                                             r"non-finite value at t = 0.05"):
        simulate_multibody(model, duration=0.1, h=1e-3, loop=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_prescribed_motion_that_turns_nan_is_refused_naming_the_time(loop):
    def motion(t):
        return (np.nan, 1.0, 0.0) if t > 0.02 else (t, 1.0, 0.0)

    belt = Body(np.eye(1), np.zeros((1, 1)), [[-1.0, 0.0], [1.0, 0.0]], [[0, -1], [0, -1]],
                name="belt", prescribed={0: motion})
    mass = _mass(loads=[0.0, -10.0])
    model = MultibodyModel([mass, belt], [ContactInterface("mass", [0], "belt", [[0, 1]], mu=0.3)])
    with pytest.raises(ParameterError, match=r"prescribed motion .* body 'belt' \(.*motion\) "
                                             r"returned a non-finite value at t = 0.02"):
        simulate_multibody(model, duration=0.05, h=1e-3, loop=loop)


@pytest.mark.parametrize("bad", [lambda t: [1.0], lambda t: "x", lambda t: None,
                                 lambda t: [1.0, float("inf")]])
def test_loads_of_the_wrong_shape_or_type_are_refused_at_the_first_call(bad):
    model = _model(_mass(loads=bad))
    with pytest.raises(ParameterError, match=r"loads of body 'mass'.* at t = 0 s"):
        simulate_multibody(model, duration=0.01, h=1e-3)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_users_callable_that_raises_keeps_its_exception_with_a_note(loop):
    class Boom(RuntimeError):
        pass

    def load(t):
        if t > 0.01:
            raise Boom("sensor file ended")
        return np.array([0.0, -10.0])

    model = _model(_mass(loads=load))
    with pytest.raises(Boom, match="sensor file ended") as exc:
        simulate_multibody(model, duration=0.05, h=1e-3, loop=loop)
    notes = " ".join(getattr(exc.value, "__notes__", []))
    assert "load" in notes and "loads of body 'mass'" in notes and "t = 0.01" in notes


@pytest.mark.parametrize("loop", LOOPS)
def test_a_slave_node_starting_inside_its_master_is_refused_with_its_depth(loop):
    """A node 1 cm inside its master, at rest, was launched at 10 m/s (50 J from nothing,
    booked as a negative impact loss) without a word."""
    model = _model(Body(np.eye(2) * 1000.0, np.zeros((2, 2)), [[0.0, -0.01]], [[0, 1]],
                        name="mass"))
    with pytest.raises(ModelError, match=r"1 slave node\(s\) start inside.*node 0: 0.01 m"):
        simulate_multibody(model, duration=0.01, h=1e-3, loop=loop)
    # the same through an initial displacement of a body that starts outside
    model = _model(_mass(y=0.005))
    with pytest.raises(ModelError, match=r"node 0: 0.005 m"):
        simulate_multibody(model, duration=0.01, h=1e-3, initial={"mass": ([0.0, -0.01], [0.0, 0.0])})
    # touching (gap 0) or apart is fine, and nothing gains energy
    r = simulate_multibody(_model(_mass(y=0.0, loads=[0.0, -10.0])), duration=0.01, h=1e-3, loop=loop)
    assert r.status == "completed" and np.all(r.energies["kinetic"] < 1e-12)


def test_a_slave_node_on_its_own_master_surface_is_refused():
    """Accepted before, and then never in contact."""
    b = Body(np.eye(6), np.eye(6) * 1e3, [[0.0, 0.0], [1.0, 0.0], [0.5, 0.1]], [[0, 1], [2, 3], [4, 5]],
             name="strip")
    with pytest.raises(ModelError, match=r"slave nodes \[0\] are nodes of their own master"):
        MultibodyModel([b], [ContactInterface("strip", [0], "strip", [[0, 1]])])
    MultibodyModel([b], [ContactInterface("strip", [2], "strip", [[0, 1]])])  # another node: fine


def test_a_master_segment_of_zero_length_is_refused():
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-1.0, 0.0], [1.0, 0.0], [1.0, 0.0]],
                  [[-1, -1]] * 3, name="ground")
    with pytest.raises(ModelError, match=r"master segment 1 \(nodes 1, 2\) has zero length"):
        MultibodyModel([_mass(), ground],
                       [ContactInterface("mass", [0], "ground", [[0, 1], [1, 2]])])


def test_a_contact_no_free_coordinate_can_enforce_is_refused():
    """A slave node fixed in y over a fixed ground: its contact can never push it out."""
    mass = Body(np.eye(1), np.zeros((1, 1)), [[0.0, 0.0]], [[0, -1]], name="mass")
    with pytest.raises(ModelError, match="slave node 0 on master segment 0 cannot be enforced"):
        _model(mass)
    mass = Body(np.eye(1), np.zeros((1, 1)), [[0.0, 0.0]], [[-1, 0]], name="mass")  # free in y
    _model(mass)


def test_a_run_of_absurd_length_is_refused_before_it_starts():
    """A step that needs 1e10 steps was marched (or allocated 75 GiB) instead of refused."""
    import time

    from fesub import limits

    model = _model(_mass(loads=[0.0, -10.0]))
    t0 = time.perf_counter()
    with pytest.raises(ParameterError, match=r"needs 1e\+10 time steps, about 33.3 min .* GiB of arrays.*max_steps"):
        simulate_multibody(model, duration=10.0, h=1e-9)
    assert time.perf_counter() - t0 < 5.0  # refused, not attempted (generous for a loaded CI)
    with limits.raised(max_steps=1e11):  # the count alone passes; the output would not fit
        with pytest.raises(ParameterError, match=r"GiB of arrays.*max_memory_gib"):
            simulate_multibody(model, duration=10.0, h=1e-9)
    with pytest.raises(ParameterError, match="non-finite number of time steps"):
        simulate_multibody(model, duration=1e300, h=1e-300)
