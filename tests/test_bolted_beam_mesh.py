"""The bundled bolted-beam mesh (meshes/brake_reuss.msh) against its geometry, and the assembled
beam's free-free bending against an independent Timoshenko beam."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from scipy.linalg import eigh

from fesub.fe import Solid, solid_mesh_matrices
from fesub.fe.solid import solid_volumes
from fesub.substructure.volumes import read_volumes

MESH = Path(__file__).resolve().parents[1] / "meshes" / "brake_reuss.msh"
B, H, L, LAP = 25.4e-3, 12.7e-3, 0.720, 0.120          # section, half thickness, length, lap (m)
E, NU, RHO = 192e9, 0.29, 7800.0


@pytest.fixture(scope="module")
def mesh():
    return read_volumes(MESH)


def test_mesh_geometry_and_named_sets(mesh):
    whole, vols = mesh
    assert sorted(vols) == ["beam1", "beam2"]
    lo, hi = whole.points.min(0), whole.points.max(0)
    np.testing.assert_allclose(hi - lo, [L, B, B], rtol=1e-12)
    # each half: a 420 mm beam whose last 120 mm are half thick (volumes of the hexahedra)
    half = (0.300 * B * B + LAP * B * H)
    for name, v in vols.items():
        vol = solid_volumes("hexahedron", v.points[v.cells["hexahedron"]]).sum()
        np.testing.assert_allclose(vol, half, rtol=1e-12, err_msg=name)
    low, up = vols["beam1"], vols["beam2"]
    np.testing.assert_allclose(low.points[:, 0].min(), 0.0, atol=1e-15)
    np.testing.assert_allclose(up.points[:, 0].max(), L, rtol=1e-15)
    # the lap faces: both halves hold the same nodes at z = 12.7 mm over 300 <= x <= 420 mm
    a, b = low.node_sets["interface"], up.node_sets["interface"]
    assert 200 <= a.size <= 300 and a.size == b.size
    pa = low.points[a][np.lexsort(low.points[a].T[::-1])]
    pb = up.points[b][np.lexsort(up.points[b].T[::-1])]
    np.testing.assert_array_equal(pa, pb)
    np.testing.assert_allclose(pa[:, 2], H, rtol=1e-15)
    assert pa[:, 0].min() == pytest.approx(0.300) and pa[:, 0].max() == pytest.approx(0.420)
    # washer patches: 16 x 16 mm centred on the bolts (x = 330, 360, 390 mm, y = 12.7 mm),
    # heads on the upper half's top, nuts under the lower half
    for k, xb in enumerate((0.330, 0.360, 0.390), start=1):
        for v, name, z in ((up, f"head_{k}", B), (low, f"nut_{k}", 0.0)):
            p = v.points[v.node_sets[name]]
            np.testing.assert_allclose(p[:, 2], z, atol=1e-15)
            np.testing.assert_allclose([np.ptp(p[:, 0]), np.ptp(p[:, 1])], [0.016, 0.016],
                                       rtol=1e-9)
            np.testing.assert_allclose(p[:, :2].min(0) + 0.008, [xb, B / 2], rtol=1e-9)
    assert "end1" in low.node_sets and "end2" in up.node_sets


def _timoshenko_free_free(n_el=400, k=8):
    """Lowest bending frequencies (Hz) of the free-free 720 mm beam by a Timoshenko beam
    (two-node elements, shear integrated at the midpoint, consistent mass with rotary
    inertia; Cowper's shear coefficient of a square section), written here."""
    A, I = B * B, B ** 4 / 12
    G = E / (2 * (1 + NU))
    kappa = 10 * (1 + NU) / (12 + 11 * NU)
    h = L / n_el
    n = 2 * (n_el + 1)
    K, M = np.zeros((n, n)), np.zeros((n, n))
    Bs = np.array([-1 / h, -0.5, 1 / h, -0.5])            # w' - theta at the midpoint
    Kb = E * I / h * np.array([[0, 0, 0, 0], [0, 1, 0, -1], [0, 0, 0, 0], [0, -1, 0, 1.0]])
    Ke = Kb + kappa * G * A * h * np.outer(Bs, Bs)
    Me = np.zeros((4, 4))
    Me[np.ix_([0, 2], [0, 2])] = RHO * A * h / 6 * np.array([[2, 1], [1, 2]])
    Me[np.ix_([1, 3], [1, 3])] = RHO * I * h / 6 * np.array([[2, 1], [1, 2]])
    for e in range(n_el):
        d = np.arange(2 * e, 2 * e + 4)
        K[np.ix_(d, d)] += Ke
        M[np.ix_(d, d)] += Me
    w2 = eigh(K, M, eigvals_only=True, subset_by_index=[0, k - 1])
    return np.sqrt(np.abs(w2[2:])) / (2 * math.pi)          # the two rigid modes left out


def test_whole_beam_bending_against_timoshenko(mesh):
    whole, _ = mesh
    K, M, _ = solid_mesh_matrices(whole, Solid(E, NU, RHO))
    w2, V = spla.eigsh(K, 14, M=M, sigma=-1e3, which="LM")
    o = np.argsort(w2)
    w2, V = w2[o], V[:, o]
    f = np.sqrt(np.abs(w2)) / (2 * math.pi)
    assert np.all(f[:6] < 1e-2 * f[6])                     # six rigid-body modes
    # vertical (z) bending modes: the end nodes move along z more than along y
    end = whole.node_sets["end1"]
    uz = np.abs(V[3 * end + 2]).max(0)
    uy = np.abs(V[3 * end + 1]).max(0)
    fz = f[6:][(uz > 3 * uy)[6:]][:2]
    ref = _timoshenko_free_free()[:2]
    # the 1D references: Euler-Bernoulli (22.373 and 61.673 (beta L)^2) is stiffer by the
    # shear and rotary inertia the solid has (0.45 % and 1.26 % here), so it bounds from above
    eb = np.array([4.730041, 7.853205]) ** 2 / L ** 2 * math.sqrt(E * B ** 4 / 12 / (RHO * B * B))
    eb /= 2 * math.pi
    assert np.all(fz < eb)
    # Timoshenko vs the solid: the solid's section warps and its shear coefficient is only
    # Cowper's approximation (~0.1-0.2 %), the hexahedra (12 mm along x, 3 and 6 across)
    # are stiff by their discretisation (~0.1 %): 0.5 %
    np.testing.assert_allclose(fz, ref, rtol=5e-3)
    # the reference itself: below Euler-Bernoulli by the shear and rotary inertia correction
    # (0.45 % and 1.26 %), converged (800 elements change it by 7e-6)
    assert np.all((ref < eb) & (ref > 0.98 * eb))


def test_bundled_files_found_installed_or_in_a_checkout():
    """Every bundled model finds its file whether fesub is installed (package data) or run from a
    checkout (``meshes/`` beside the package): the same bytes as the repository's copy where
    there is one; an unknown name is refused with its name."""
    from fesub.errors import MeshError
    from fesub.models.beam_on_beam import bundled_mesh_dir
    from fesub.models.bolted_beam import bundled_mesh
    from fesub.models.brake import mesh_path
    from fesub.models.common import bundled_file

    found = [bundled_file("bracket.msh"), bundled_mesh(), bundled_mesh(coarse=True), mesh_path(),
             bundled_mesh_dir() / "beam_on_beam_beam1.msh"]
    repo = Path(__file__).resolve().parents[1] / "meshes"
    for p in found:
        assert p.is_file(), p
        if (repo / p.name).is_file():
            assert p.read_bytes() == (repo / p.name).read_bytes()
    with pytest.raises(MeshError, match="no_such.msh"):
        bundled_file("no_such.msh")
