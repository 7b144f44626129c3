"""Hostile and careless input to the newer surfaces: the multibody contact model, 3D meshes, the
readers of other programs' files and ``fesub.load`` on damaged files. Each example gives a result
that is right, or a FesubError; never another exception, a hang, a silent wrong answer or a
damaged file read as good.

Bounded and derandomised (the same inputs in every CI run), with a deadline per example so that
a hang fails. With ``FESUB_FUZZ_TALLY=path`` the outcome of every input is counted into that
JSON file (inputs tried, clear errors, results), for the record of a hostile-input campaign.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fesub.contact.engine.stepper  # noqa: F401 - imported once, outside the per-example deadline
import fesub.fe  # noqa: F401
from fesub.errors import FesubError

FUZZ = settings(max_examples=60, deadline=10000, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

anything = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10**12, max_value=10**12),
    st.sampled_from([None, "x", "1", [], [1.0, 2.0], (), {}, True, 1e300, -1e-300, 0, 0.0]),
)
reals = st.floats(allow_nan=True, allow_infinity=True, width=64)

TALLY: dict = {}


def _count(surface: str, outcome: str) -> None:
    TALLY.setdefault(surface, {}).setdefault(outcome, 0)
    TALLY[surface][outcome] += 1


@pytest.fixture(scope="module", autouse=True)
def _write_tally():
    yield
    path = os.environ.get("FESUB_FUZZ_TALLY")
    if path:
        old = json.loads(open(path).read()) if os.path.exists(path) else {}
        for s, d in TALLY.items():
            for k, v in d.items():
                old.setdefault(s, {}).setdefault(k, 0)
                old[s][k] += v
        with open(path, "w") as fh:
            json.dump(old, fh, indent=1)


def _attempt(surface, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or None when it raised a FesubError; any other exception fails
    the test (after being counted as a raw exception)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args, **kwargs)
    except FesubError:
        _count(surface, "clear error")
        return None
    except BaseException:
        _count(surface, "raw exception")
        raise
    _count(surface, "result")
    return out


# ------------------------------------------------------------------------- multibody model
def _matrix(draw, n):
    kind = draw(st.sampled_from(["spd"] * 6 + ["indefinite", "nan", "shape", "text", "zero"]))
    if kind == "spd":
        a = np.array(draw(st.lists(st.floats(-3, 3), min_size=n * n, max_size=n * n))).reshape(n, n)
        return a @ a.T + np.eye(n) * draw(st.floats(1e-3, 1e4))
    if kind == "indefinite":
        return np.diag(draw(st.lists(st.floats(-1e4, 1e4), min_size=n, max_size=n)))
    if kind == "nan":
        m = np.eye(n)
        m[0, 0] = draw(st.sampled_from([np.nan, np.inf]))
        return m
    if kind == "shape":
        return np.eye(n + 1)
    if kind == "text":
        return "K"
    return np.zeros((n, n))


@st.composite
def multibody_inputs(draw):
    n = draw(st.integers(1, 3))
    M, K = _matrix(draw, n), _matrix(draw, n)
    y0 = draw(st.one_of(st.floats(-0.05, 0.05), reals))
    nd = draw(st.sampled_from([[[0, 1 if n > 1 else -1]]] * 3 + [[[-1, 0]]] * 3 +
                              [[[-1, -1]], [[-2, 0]], [[0, 5]], [[0.5, 1]]]))
    load = draw(st.one_of(st.none(), st.lists(reals, min_size=2, max_size=2),
                          st.sampled_from(["nan_later", "raises", "wrong_shape", "huge"])))
    segs = draw(st.sampled_from([[[0, 1]]] * 4 + [[[0, 1], [1, 2]], [[0, 0]], [[0, 7]], [[1, 2]], []]))
    mu = draw(st.one_of(st.floats(0, 2), st.floats(0, 2), anything))
    h = draw(st.one_of(st.none(), st.floats(1e-5, 1e-2), st.floats(1e-5, 1e-2), anything))
    duration = draw(st.one_of(st.floats(1e-4, 2e-2), st.floats(1e-4, 2e-2), anything))
    initial = draw(st.one_of(st.none(), st.sampled_from(["inside", "bad"])))
    return n, M, K, y0, nd, load, segs, mu, h, duration, initial


def _load(kind, n):
    if kind == "nan_later":
        return lambda t: np.full(n, np.nan) if t > 2e-3 else np.ones(n)
    if kind == "raises":
        def f(t):
            raise ZeroDivisionError("user code")
        return f
    if kind == "wrong_shape":
        return lambda t: np.ones(n + 1)
    if kind == "huge":
        return np.full(n, 1e308)
    return None if kind is None else (np.resize(np.asarray(kind, float), n))


@settings(FUZZ, max_examples=120)
@given(multibody_inputs())
def test_multibody_model_and_run(inputs):
    from fesub.contact import ContactInterface
    from fesub.contact import Body, MultibodyModel
    from fesub.contact import simulate_multibody

    n, M, K, y0, nd, load, segs, mu, h, duration, initial = inputs

    def build():
        mass = Body(M, K, [[0.0, y0]], np.array(nd) if not isinstance(nd[0][0], float) else nd,
                    name="mass", loads=_load(load, n))
        ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-1.0, 0.0], [1.0, 0.0], [1.0, 0.0]],
                      [[-1, -1]] * 3, name="ground")
        return MultibodyModel([mass, ground], [ContactInterface("mass", [0], "ground", segs, mu=mu)])

    model = _attempt("multibody model", build)
    if model is None:
        return
    init = None
    if initial == "inside":
        init = {"mass": (np.r_[0.0, -0.02, np.zeros(n - 2)][:n], np.zeros(n))}
    elif initial == "bad":
        init = {"mass": ("u", None)}
    try:
        r = _attempt("multibody run", simulate_multibody, model, duration=duration, h=h, initial=init,
                     progress=False)
    except ZeroDivisionError as exc:  # the user's own exception, kept with a note naming it
        assert any("at t = " in n_ for n_ in exc.__notes__)
        _count("multibody run", "user exception kept with a note")
        return
    if r is not None and r.status == "completed":  # an answer: nothing non-finite in it
        for k in ("kinetic", "strain"):
            assert np.all(np.isfinite(r.energies[k])), k


@pytest.fixture(scope="module")
def slider():
    """A 1 kg mass pressed (10 N) on a fixed ground, on springs (1e4 N/m): a valid model."""
    from fesub.contact import ContactInterface
    from fesub.contact import Body, MultibodyModel

    mass = Body(np.eye(2), np.eye(2) * 1e4, [[0.0, 0.0]], [[0, 1]], name="mass", loads=[1.0, -10.0],
                outputs={"x": 0})
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-1.0, 0.0], [1.0, 0.0]], [[-1, -1]] * 2,
                  name="ground")
    return MultibodyModel([mass, ground], [ContactInterface("mass", [0], "ground", [[0, 1]], mu=0.3)])


@settings(FUZZ, max_examples=120)
@given(name=st.sampled_from(["duration", "h", "fs_out", "on_stick", "initial", "tol", "max_iter",
                             "loop", "series", "progress"]),
       value=st.one_of(anything, st.tuples(anything, anything),
                       st.sampled_from([{"mass": ([0.0, -0.01], [0.0, 0.0])}, {"mass": ([0, 0], [1e300, 0])},
                                        {"nobody": ([0, 0], [0, 0])}, [("mass", 1, [1.0])],
                                        [("mass", 0, np.ones(10))], "stop", "kernel", "python"])))
def test_multibody_run_parameters(slider, name, value):
    from fesub.contact import simulate_multibody

    args = {"duration": 0.01, "h": 1e-3, "progress": False, name: value}
    r = _attempt("multibody run", simulate_multibody, slider, **args)
    if r is not None and r.status == "completed":
        assert np.all(np.isfinite(r.energies["kinetic"])) and np.all(np.isfinite(r.channels["u_x"]))


# ------------------------------------------------------------------------------ 3D meshes
@FUZZ
@given(l=st.tuples(*[st.one_of(st.floats(1e-3, 10.0), st.floats(1e-3, 10.0), anything)] * 3),
       n=st.tuples(*[st.one_of(st.integers(1, 3), st.integers(-2, 4), anything)] * 3),
       element=st.sampled_from(["hexahedron", "tetra", "tetra10", "wedge", "hex27", 3]))
def test_box_mesh(l, n, element):
    from fesub.fe import box

    m = _attempt("3D mesh generator", box, *l, *n, element=element)
    if m is not None:
        assert np.all(np.isfinite(m.points))


@pytest.fixture(scope="module")
def vtu_bytes(tmp_path_factory):
    from fesub.fe import box

    p = tmp_path_factory.mktemp("vtu") / "box.vtu"
    box(1.0, 0.2, 0.2, 2, 1, 1).to_meshio().write(p)
    return p.read_bytes()


@FUZZ
@given(cut=st.floats(0, 1), flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)), max_size=4),
       suffix=st.sampled_from([".vtu", ".msh", ".xdmf", ".inp"]))
def test_solid_mesh_reader_on_damaged_files(tmp_path_factory, vtu_bytes, cut, flips, suffix):
    from fesub.fe import read_solid

    raw = bytearray(vtu_bytes[:int(cut * len(vtu_bytes))] if cut < 0.999 else vtu_bytes)
    for pos, bit in flips:
        if raw:
            raw[int(pos * (len(raw) - 1))] ^= 1 << bit
    p = tmp_path_factory.mktemp("bad") / f"m{suffix}"
    p.write_bytes(bytes(raw))
    m = _attempt("3D mesh reader", read_solid, p, file_format="vtu" if suffix == ".vtu" else None)
    if m is not None:
        assert np.all(np.isfinite(m.points))


# -------------------------------------------------------------------------------- readers
@FUZZ
@given(lines=st.lists(st.one_of(
    st.tuples(st.integers(-2, 4), st.integers(-1, 7), st.integers(-2, 4), st.integers(-1, 7), reals).map(
        lambda e: ",".join(map(str, e))),
    st.text(max_size=30)), max_size=8))
def test_abaqus_matrix_reader(tmp_path_factory, lines):
    from fesub.fe import read_abaqus_matrix

    p = tmp_path_factory.mktemp("abq") / "k.mtx"
    p.write_text("\n".join(lines), encoding="utf-8")
    out = _attempt("Abaqus matrix reader", read_abaqus_matrix, p)
    if out is not None:
        A = out[0]
        assert (A != A.T).nnz == 0 and np.all(np.isfinite(A.data))  # what it promises


@pytest.fixture(scope="module")
def reduced_model_dir(tmp_path_factory):
    from fesub.fe import PlaneStress, export_reduced_model, rectangle
    from fesub.substructure import CraigBampton, Substructure

    sub = Substructure(rectangle(0.2, 0.05, 3, 1), PlaneStress(70e9, 0.3, 2700.0, 0.01),
                       clamped=["left"], name="plate")
    return export_reduced_model(CraigBampton(sub, boundary=sub.dofs("right"), n_modes=2),
                                tmp_path_factory.mktemp("rm") / "plate")


@FUZZ
@given(file=st.sampled_from(["model.json", "coordinates.csv", "nodes.csv", "M.mtx", "K_abaqus.mtx"]),
       cut=st.floats(0, 1), flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)), max_size=3),
       source=st.sampled_from(["mtx", "abaqus"]))
def test_reduced_model_reader_on_damaged_files(tmp_path_factory, reduced_model_dir, file, cut, flips,
                                               source):
    import shutil

    from fesub.fe import read_reduced_model

    d = tmp_path_factory.mktemp("rmd") / "m"
    shutil.copytree(reduced_model_dir, d)
    raw = bytearray((d / file).read_bytes())
    raw = raw[:int(cut * len(raw))] if cut < 0.9 else raw
    for pos, bit in flips:
        if raw:
            raw[int(pos * (len(raw) - 1))] ^= 1 << bit
    (d / file).write_bytes(bytes(raw))
    rm = _attempt("reduced-model reader", read_reduced_model, d, source=source)
    if rm is not None:
        assert np.all(np.isfinite(rm.M)) and np.all(np.isfinite(rm.K))


@pytest.fixture(scope="module")
def uff_bytes(tmp_path_factory):
    pytest.importorskip("pyuff")
    from fesub.fbs import FRFMatrix, write_uff58

    f = np.linspace(1.0, 100.0, 12)
    H = (1.0 + np.arange(12))[:, None, None] * np.array([[[1e-6], [2e-6]]]) + 1e-7j
    p = write_uff58(FRFMatrix(f, H, np.array([[1, 1], [2, 1]]), np.array([[1, 1]]), "receptance"),
                    tmp_path_factory.mktemp("uff") / "y.uff")
    return open(p, "rb").read()


@FUZZ
@given(cut=st.floats(0, 1), flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)), max_size=3))
def test_uff_reader_on_damaged_files(tmp_path_factory, uff_bytes, cut, flips):
    from fesub.fbs import read_uff58

    raw = bytearray(uff_bytes[:int(cut * len(uff_bytes))] if cut < 0.95 else uff_bytes)
    for pos, bit in flips:
        if raw:
            raw[int(pos * (len(raw) - 1))] ^= 1 << bit
    p = tmp_path_factory.mktemp("u") / "y.uff"
    p.write_bytes(bytes(raw))
    Y = _attempt("UFF reader", read_uff58, p)
    if Y is not None:
        assert np.all(np.isfinite(Y.H)) and Y.H.shape[1:] in ((2, 1), (1, 1), (2, 2), (1, 2))
        if not flips and cut >= 0.95:  # intact bytes: the data, whole
            assert Y.H.shape == (12, 2, 1)
        # (a file cut exactly between two data sets is a valid, shorter UFF file: the format
        # records no count of its sets, so that cut cannot be told from a file of fewer FRFs)


# ----------------------------------------------------------------------- fesub.load on damage
@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    from fesub.fbs import FRFMatrix

    f = np.linspace(1.0, 100.0, 40)
    H = (1.0 + np.arange(40))[:, None, None] * np.array([[[1e-6, 3e-6], [2e-6, 4e-6]]]) + 2e-7j
    Y = FRFMatrix(f, H, np.array([[1, 1], [2, 1]]), np.array([[1, 1], [2, 2]]), "receptance")
    p = Y.save(tmp_path_factory.mktemp("res") / "y")
    return Y, p.read_bytes()


@settings(FUZZ, max_examples=150)
@given(edits=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(["flip", "zero", "cut", "dup"]),
                                st.integers(0, 7)), min_size=1, max_size=3))
def test_load_on_damaged_result_files(tmp_path_factory, result_file, edits):
    import fesub

    Y, raw = result_file
    b = bytearray(raw)
    for pos, kind, bit in edits:
        if not b:
            break
        i = int(pos * (len(b) - 1))
        if kind == "flip":
            b[i] ^= 1 << bit
        elif kind == "zero":
            b[i:i + 8] = bytes(len(b[i:i + 8]))
        elif kind == "cut":
            b = b[:i]
        else:
            b = b[:i] + b[i:i + 16] + b[i:]
    p = tmp_path_factory.mktemp("d") / "y.nc"
    p.write_bytes(bytes(b))
    back = _attempt("fesub.load on damaged files", fesub.load, p)
    if back is not None:  # a file read back must be the file written: any change is detected
        assert bytes(b) == raw or (np.array_equal(back.H, Y.H) and np.array_equal(back.frequency, Y.frequency))
        if bytes(b) != raw:
            _count("fesub.load on damaged files", "DAMAGED FILE TRUSTED")
            pytest.fail("a damaged result file was read as good")
