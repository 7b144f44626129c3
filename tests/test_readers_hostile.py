"""Readers of other programs' files answer a damaged, partial or hand-edited file with a
FesubError (MeshError for meshes) naming the file, never with a reader's own exception, an exit
of the program or data silently lost; and harmonic-balance parameters are integers in range,
refused before anything is allocated when they are absurd."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fesub.errors import FesubError, MeshError, ParameterError


# ---------------------------------------------------------------------------------- 3D meshes
@pytest.fixture(scope="module")
def box_vtu(tmp_path_factory):
    from fesub.fe import box

    p = tmp_path_factory.mktemp("mesh") / "box.vtu"
    box(1.0, 0.2, 0.2, 3, 1, 1).to_meshio().write(p)
    return p


@pytest.mark.parametrize("keep", [0.0, 0.3, 0.6, 0.95])
def test_empty_or_truncated_vtu_is_a_mesh_error_not_an_exit(tmp_path, box_vtu, keep):
    """meshio's VTU reader calls sys.exit on an empty or cut file: that ended the program."""
    from fesub.fe import read_solid
    from fesub.substructure.volumes import read_volumes

    raw = box_vtu.read_bytes()
    bad = tmp_path / "cut.vtu"
    bad.write_bytes(raw[:int(keep * len(raw))])
    for reader in (read_solid, read_volumes):
        with pytest.raises(MeshError, match="cut.vtu"):
            reader(bad)


def test_a_folder_or_a_missing_file_is_a_mesh_error(tmp_path):
    from fesub.fe import read, read_solid

    for reader in (read, read_solid):
        with pytest.raises(MeshError, match="no such mesh file"):
            reader(tmp_path / "missing.vtu")
        with pytest.raises(MeshError, match="folder"):
            reader(tmp_path)


# ---------------------------------------------------------------------------- matrix readers
def test_abaqus_matrix_whose_triangles_disagree_is_refused(tmp_path):
    """The reader promises a symmetric matrix; it returned one with K12 = 1 and K21 = 2."""
    from fesub.fe import read_abaqus_matrix

    p = tmp_path / "k.mtx"
    p.write_text("1,1,1,1,4.0\n1,1,2,1,1.0\n2,1,1,1,2.0\n2,1,2,1,4.0\n")
    with pytest.raises(FesubError, match=r"k.mtx: the two triangles disagree.*1.0.*2.0"):
        read_abaqus_matrix(p)
    # agreeing triangles (to round-off of printing) give an exactly symmetric matrix
    p.write_text("1,1,1,1,4.0\n1,1,2,1,1.0\n2,1,1,1,1.0000000000000002\n2,1,2,1,4.0\n")
    A, _ = read_abaqus_matrix(p)
    assert (A != A.T).nnz == 0 and abs(A[0, 1] - 1.0) < 1e-15
    p.write_text("1,1,1,1,4.0\n1,1,1,1,4.0\n")  # an entry twice was summed into 8
    with pytest.raises(FesubError, match="more than once"):
        read_abaqus_matrix(p)
    p.write_text("1,1,1,1,nan\n")
    with pytest.raises(FesubError, match="not a finite number"):
        read_abaqus_matrix(p)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from fesub.fe import PlaneStress, export_reduced_model, rectangle
    from fesub.substructure import CraigBampton, Substructure

    sub = Substructure(rectangle(0.2, 0.05, 4, 2), PlaneStress(70e9, 0.3, 2700.0, 0.01),
                       clamped=["left"], name="plate")
    return export_reduced_model(CraigBampton(sub, boundary=sub.dofs("right"), n_modes=2),
                                tmp_path_factory.mktemp("rm") / "plate")


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def _edit_csv(path, column, value=None, drop=False):
    import csv

    rows = list(csv.DictReader(path.open()))
    fields = [f for f in rows[0] if not (drop and f == column)]
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            if not drop:
                r[column] = value
            w.writerow(r)


@pytest.mark.parametrize("edit, where", [
    (lambda d: (d / "model.json").write_text("{not json"), "model.json"),
    (lambda d: (d / "model.json").write_text("[1, 2]"), "model.json"),
    (lambda d: _drop_key(d / "model.json", "rayleigh_alpha_per_s"), "model.json"),
    (lambda d: _drop_key(d / "model.json", "name"), "model.json"),
    (lambda d: _set_key(d / "model.json", "rayleigh_beta_s", "fast"), "model.json"),
    (lambda d: _edit_csv(d / "coordinates.csv", "kind", drop=True), "coordinates.csv"),
    (lambda d: _edit_csv(d / "coordinates.csv", "model_dof", "1.5"), "coordinates.csv"),
    (lambda d: _edit_csv(d / "coordinates.csv", "frequency_hz", "inf"), "coordinates.csv"),
    (lambda d: _edit_csv(d / "coordinates.csv", "kind", "rigid"), "coordinates.csv"),
    (lambda d: (d / "coordinates.csv").write_text("kind\n"), "coordinates.csv"),
    (lambda d: _edit_csv(d / "nodes.csv", "q_x", "999"), "nodes.csv"),
    (lambda d: _edit_csv(d / "nodes.csv", "x_m", "nan"), "nodes.csv"),
    (lambda d: _edit_csv(d / "nodes.csv", "y_m", drop=True), "nodes.csv"),
    (lambda d: (d / "K.mtx").unlink(), "K.mtx"),
], ids=["json-garbled", "json-list", "json-no-alpha", "json-no-name", "json-text-beta",
        "csv-no-kind", "csv-float-dof", "csv-inf-freq", "csv-bad-kind", "csv-empty",
        "nodes-out-of-range", "nodes-nan", "nodes-no-y", "missing-K"])
def test_hand_edited_reduced_model_is_a_clear_error(tmp_path, model_dir, edit, where):
    from fesub.fe import read_reduced_model

    d = _copy(model_dir, tmp_path / "m")
    edit(d)
    with pytest.raises(FesubError, match=where):
        read_reduced_model(d)


def _drop_key(path, key):
    meta = json.loads(path.read_text())
    del meta[key]
    path.write_text(json.dumps(meta))


def _set_key(path, key, value):
    meta = json.loads(path.read_text())
    meta[key] = value
    path.write_text(json.dumps(meta))


def test_abaqus_source_with_edited_labels_is_a_clear_error(tmp_path, model_dir):
    from fesub.fe import read_reduced_model

    d = _copy(model_dir, tmp_path / "m")
    _edit_csv(d / "coordinates.csv", "abaqus_dof", "x")
    with pytest.raises(FesubError, match="coordinates.csv"):
        read_reduced_model(d, source="abaqus")


# ------------------------------------------------------------------------------------- UFF 58
def test_truncated_uff_file_is_an_error_not_a_smaller_matrix(tmp_path):
    """Cut inside its last data set, a file of FRFs at two outputs was read as one output."""
    pytest.importorskip("pyuff")
    from fesub.fbs import FRFMatrix, read_uff58, write_uff58

    f = np.linspace(1.0, 100.0, 30)
    H = (1.0 + np.arange(30))[:, None, None] * np.array([[[1e-6], [2e-6]]]) + 0j
    Y = FRFMatrix(f, H, np.array([[1, 1], [2, 1]]), np.array([[1, 1]]), "receptance")
    p = write_uff58(Y, tmp_path / "y.uff")
    raw = open(p, "rb").read()
    assert read_uff58(p).H.shape == (30, 2, 1)
    cuts = list(range(len(raw) // 2 + 40, len(raw) - 1, 97)) + [len(raw) - 8]
    for cut in cuts:
        (tmp_path / "cut.uff").write_bytes(raw[:cut])
        with pytest.raises(FesubError, match="cut.uff"):
            read_uff58(tmp_path / "cut.uff")


# ------------------------------------------------------------------------ harmonic balance
@pytest.fixture(scope="module")
def two_dof():
    M = np.eye(2)
    K = np.array([[2.0, -1.0], [-1.0, 2.0]]) * 1e4
    return M, 1e-3 * K, K


@pytest.mark.parametrize("kw, msg", [
    ({"dof": 1.9}, "dof .* must be an integer"),
    ({"fex": 1.7}, "fex .* must be an integer"),
    ({"dof": 2}, "dof .* in 0..1"),
    ({"dof": float("nan")}, "dof"),
    ({"fex": "1"}, "fex"),
    ({"nh": 2.0}, "nh .* must be an integer"),
    ({"nh": float("inf")}, "nh"),
])
def test_hbm_indices_and_counts_are_integers_in_range(two_dof, kw, msg):
    from fesub.hbm import HBSystem

    M, C, K = two_dof
    args = {"nh": 3, "fex": 0, "dof": 0} | kw
    with pytest.raises(ParameterError, match=msg):
        HBSystem(M, C, K, args.pop("nh"), **args)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "10", 2.5, 0, True])
def test_hbm_step_counts_are_refused_clearly(two_dof, value):
    from fesub.hbm import HBSystem, forced_response

    M, C, K = two_dof
    sys = HBSystem(M, C, K, 2)
    with pytest.raises(ParameterError, match="max_steps"):
        forced_response(sys, 1.0, (10.0, 20.0), max_steps=value)


def test_a_million_harmonics_are_refused_before_allocation(two_dof):
    """nh = 1e6 tried to allocate tens of TiB; now refused at once with the estimate."""
    import time

    from fesub import limits
    from fesub.hbm import HBSystem

    M, C, K = two_dof
    t0 = time.perf_counter()
    with pytest.raises(ParameterError, match=r"nh = 1000000 .* needs .* GiB.*max_memory_gib"):
        HBSystem(M, C, K, 10**6)
    assert time.perf_counter() - t0 < 5.0  # refused, not attempted (a generous bound for CI)
    # the limit can be raised: a system a tight limit refuses is built once it is raised
    with limits.raised(max_memory_gib=1e-6):
        with pytest.raises(ParameterError, match="max_memory_gib"):
            HBSystem(M, C, K, 8)
    assert HBSystem(M, C, K, 8).nh == 8
