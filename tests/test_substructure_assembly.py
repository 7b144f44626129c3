"""Assembly of substructures through tied interfaces (fesub.substructure.assembly).

Independent references:
- the monolithic mesh of the same plate (the same nodes and elements in one Substructure): its
  matrices, permuted onto the primal coordinates, and its frequencies (fesub.fe.modes);
- Rayleigh-Ritz: a Craig-Bampton assembly is a Ritz approximation of the monolithic model, so
  its frequencies lie above the monolithic ones and fall as modes are added;
- the dual form (Lagrange multipliers, shift-invert of the saddle-point matrix) against the
  primal form (null space of the tie rows): two solution paths of one eigenproblem;
- MultibodyModel's own tie assembly (fesub.contact) for the exported Body;
- Richardson extrapolation of conforming monolithic meshes (observed order 2) as the limit of
  the non-matching (node-to-surface) ties.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse as sp

from fesub.errors import ModelError
from fesub.fe import PlaneStress, rectangle
from fesub.fe import modes as fesub_modes
from fesub.fe.quadratic import quadratic_mesh
from fesub.substructure import CoupledModes, CraigBampton, Interface, Substructure, SubstructureAssembly
from fesub.substructure.ties import constraint_null_space, match_nodes

MAT = PlaneStress(210e9, 0.3, 7800.0, 0.01)


def row_of_plates(nsub, length, height, nx, ny, *, clamp=True, quadratic=False):
    """``nsub`` plates in a row (each nx x ny Q4), the first clamped on its left edge, and the
    monolithic plate of the same nodes; the cuts are matching node sets right/left."""
    w = length / nsub

    def mesh(n, origin):
        m = rectangle(w * n if n != nsub else length, height, nx * n, ny, origin=origin)
        return quadratic_mesh(m) if quadratic else m

    subs = [Substructure(mesh(1, (i * w, 0.0)), MAT, clamped=["left"] if clamp and i == 0 else (), name=f"S{i}")
            for i in range(nsub)]
    mono = Substructure(mesh(nsub, (0.0, 0.0)), MAT, clamped=["left"] if clamp else (), name="mono")
    ties = [Interface(f"S{i}", "right", f"S{i + 1}", "left") for i in range(nsub - 1)]
    return subs, ties, mono


def cb_models(subs, k):
    """Fixed-interface Craig-Bampton model of each plate of a row, every cut DOF kept physical."""
    out = []
    for i, s in enumerate(subs):
        sides = [n for n, keep in (("left", i > 0), ("right", i < len(subs) - 1)) if keep]
        out.append(CraigBampton(s, boundary=s.dofs(np.concatenate([s.mesh.nodes(n) for n in sides])), n_modes=k))
    return out


def primal_to_mono(asm, subs, mono):
    """Monolithic DOF of every primal coordinate (found through the node positions)."""
    perm = np.full(asm.L.shape[1], -1)
    for s, sub in enumerate(subs):
        for node in range(sub.mesh.n_points):
            mnode = mono.mesh.nearest_node(sub.mesh.points[node])
            for comp in ("x", "y"):
                j = asm.coordinate(s, node, comp)
                if j >= 0:
                    perm[j] = mono.dofs([mnode], comp)[0]
    assert np.all(perm >= 0) and np.unique(perm).size == perm.size
    return perm


# ------------------------------------------------------------------ full substructures = monolithic
@pytest.mark.parametrize("quadratic", [False, True])
def test_full_substructures_tied_are_the_monolithic_mesh(quadratic):
    subs, ties, mono = row_of_plates(3, 1.2, 0.2, 6, 3, quadratic=quadratic)
    asm = SubstructureAssembly(subs, ties)
    L, Mp, Kp, _ = asm.primal()
    # matching ties give a Boolean localisation: one 1 per row (free DOFs), 0/1 entries
    assert set(np.unique(L.data)) == {1.0} and np.all(np.diff(L.indptr) == 1)
    assert Kp.shape == mono.K.shape
    perm = primal_to_mono(asm, subs, mono)
    Km, Mm = mono.K[perm][:, perm], mono.M[perm][:, perm]
    # the same element matrices summed in another order: round-off of the largest entry
    assert abs(Kp - Km).max() <= 1e-13 * abs(Km).max()
    assert abs(Mp - Mm).max() <= 1e-13 * abs(Mm).max()
    f = asm.frequencies(6)
    fm = mono.modes(6)[0]
    # equal matrices: eigenvalues equal to the solver's round-off (condition of K ~ 1e8)
    np.testing.assert_allclose(f, fm, rtol=1e-9)


def test_two_by_two_grid_with_a_cross_point():
    # four plates around one node: the four ties through it hold three independent equations
    w, h = 0.5, 0.25
    subs = {f"S{i}{j}": Substructure(rectangle(w, h, 5, 3, origin=(i * w, j * h)), MAT,
                                     clamped=["left"] if i == 0 else ()) for i in (0, 1) for j in (0, 1)}
    ties = [Interface("S00", "right", "S10", "left"), Interface("S01", "right", "S11", "left"),
            Interface("S00", "top", "S01", "bottom"), Interface("S10", "top", "S11", "bottom")]
    with pytest.raises(ModelError, match="rank-deficient.*S10:top-S11"):
        SubstructureAssembly(subs, ties)
    asm = SubstructureAssembly(subs, ties, redundant="drop")
    # 4 + 4 + 6 + 6 tied nodes, x and y; minus the clamped corner at x = 0 (both sides fixed: no
    # row) and the row per component left out at the cross-point
    assert asm.B.shape[0] == 2 * (4 + 4 + 6 + 6) - 2 - 2
    mono = Substructure(rectangle(2 * w, 2 * h, 10, 6), MAT, clamped=["left"])
    fm = mono.modes(6)[0]
    # the same matrices (round-off); both forms
    np.testing.assert_allclose(asm.frequencies(6), fm, rtol=1e-9)
    np.testing.assert_allclose(asm.frequencies(6, method="dual"), fm, rtol=1e-9)


def test_primal_and_dual_give_the_same_modes():
    subs, ties, mono = row_of_plates(3, 1.2, 0.2, 8, 4)
    asm = SubstructureAssembly(subs, ties)
    p, d = asm.modes(8), asm.modes(8, method="dual")
    # two solution paths of one eigenproblem: round-off (measured 5e-13)
    np.testing.assert_allclose(d.freq_hz, p.freq_hz, rtol=1e-9)
    for s in range(3):  # shapes up to sign, mass-normalised on the same mass (measured 1e-11)
        a, b = p.shapes[s].reshape(8, -1), d.shapes[s].reshape(8, -1)
        sign = np.sign(np.sum(a * b, axis=1))[:, None]
        assert np.abs(a - sign * b).max() <= 1e-8 * np.abs(a).max()
    # the shapes are continuous across each cut: same displacement on both sides of a tie
    for i in range(2):
        r, l = subs[i].mesh.nodes("right"), subs[i + 1].mesh.nodes("left")
        np.testing.assert_allclose(p.shapes[i][:, r], p.shapes[i + 1][:, l], atol=1e-12 * np.abs(p.shapes[i]).max())


def test_dual_on_the_sparse_path_matches_primal():
    # 2 x 1030 coordinates: the Lanczos branch of the dual solve (dense below 400)
    subs, ties, _ = row_of_plates(2, 1.0, 0.25, 40, 12, clamp=False)
    asm = SubstructureAssembly(subs, ties)
    f_p, f_d = asm.frequencies(6), asm.frequencies(6, method="dual")
    # three rigid-body modes: zero up to the square root of round-off in the eigenvalue (measured
    # 4e-4 Hz, 4e-7 of the first elastic frequency, for the dual path)
    assert np.all(f_p[:3] < 1e-5 * f_p[3]) and np.all(f_d[:3] < 1e-5 * f_p[3])
    np.testing.assert_allclose(f_d[3:], f_p[3:], rtol=1e-9)  # measured 7e-14


def test_frame_halves_tied_with_rotations_are_the_cantilever():
    from fesub.fe import BeamSection, beam_line

    sec = BeamSection(210e9, 7800.0, 1e-4, 1e-8)
    a = Substructure(beam_line((0, 0), (0.5, 0), 10), sec, clamped=["start"], name="a")
    b = Substructure(beam_line((0.5, 0), (1.0, 0), 10), sec, name="b")
    asm = SubstructureAssembly([a, b], [Interface("a", "end", "b", "start")])  # x, y and rz tied
    mono = Substructure(beam_line((0, 0), (1.0, 0), 20), sec, clamped=["start"])
    # a's end node is eliminated into b's start node: the primal coordinates run along the beam
    # as the monolithic DOFs do, and the matrices are the same to round-off
    _, Mp, Kp, _ = asm.primal()
    assert abs(Kp - mono.K).max() <= 1e-14 * abs(mono.K).max() and abs(Mp - mono.M).max() <= 1e-14 * abs(mono.M).max()
    f = asm.frequencies(4)
    # eigenvalues of equal matrices from two solves: the lowest carries the round-off of a stiffness
    # whose axial and bending terms are 1e8 apart (measured 2e-9)
    np.testing.assert_allclose(f, mono.modes(4)[0], rtol=1e-8)
    # and Euler-Bernoulli's first cantilever frequency, (1.8751^2 / 2 pi) sqrt(E I / rho A L^4):
    # 20 Hermite elements are exact to ~1e-7 on the first mode
    f1 = 1.8751040687**2 / (2 * np.pi) * np.sqrt(210e9 * 1e-8 / (7800.0 * 1e-4))
    assert abs(f[0] / f1 - 1) < 1e-6
    # without the rotation tie the cut is a hinge: lower frequencies
    hinge = SubstructureAssembly([a, b], [Interface("a", "end", "b", "start", comps=("x", "y"))])
    assert np.all(hinge.frequencies(2) < f[:2] * (1 - 1e-3))


# ------------------------------------------------------------------ Craig-Bampton substructures
@pytest.mark.parametrize("nsub", [2, 3])
def test_craig_bampton_row_reproduces_the_monolithic_frequencies(nsub):
    subs, ties, mono = row_of_plates(nsub, 1.2, 0.1, 48 // nsub, 4)
    fm = mono.modes(6)[0]
    errs = []
    for k in (10, 40, 80):
        f = SubstructureAssembly(cb_models(subs, k), ties).frequencies(6)
        # Ritz: the reduced assembly is stiffer. 1e-9: the round-off of the lowest eigenvalue of
        # this model (K condition ~1e9; measured -8e-11 with 80 modes, where the Ritz gap is smaller)
        assert np.all(f >= fm * (1 - 1e-9))
        errs.append(np.max(f / fm - 1))
    # more modes, closer (measured 2 subs: 1.2e-4, 6.6e-6, 5.7e-7; 3 subs: 1.9e-4, 4.3e-6, 3.8e-7)
    assert errs[0] > errs[1] > errs[2]
    # 80 fixed-interface modes per substructure and every cut DOF: the six lowest modes to 1e-6
    assert errs[2] < 1e-6


def test_craig_bampton_with_every_interior_mode_is_exact():
    subs, ties, mono = row_of_plates(2, 1.0, 0.1, 6, 2)
    cbs = [CraigBampton(s, boundary=s.dofs("right" if i == 0 else "left"), n_modes=0) for i, s in enumerate(subs)]
    cbs = [CraigBampton(s, boundary=c.boundary, n_modes=c.interior.size) for s, c in zip(subs, cbs)]
    f = SubstructureAssembly(cbs, ties).frequencies(8)
    # a complete basis: the reduction is a change of coordinates (round-off, measured 1e-11)
    np.testing.assert_allclose(f, mono.modes(8)[0], rtol=1e-9)


def test_mixed_full_reduced_and_matrix_substructures():
    from fesub.contact import Body

    subs, ties, mono = row_of_plates(3, 1.2, 0.2, 6, 3)
    middle = Body.from_substructure(subs[1])  # plain matrices with node positions and DOF map
    middle.node_sets = {"left": subs[1].mesh.nodes("left"), "right": subs[1].mesh.nodes("right")}
    last = CraigBampton(subs[2], boundary=subs[2].dofs("left"), n_modes=subs[2].n_dofs - 8)
    asm = SubstructureAssembly({"S0": subs[0], "S1": middle, "S2": last}, ties)
    assert [p.kind for p in asm.parts] == ["full", "matrices", "craig-bampton"]
    res = asm.modes(6)
    fm, phi = mono.modes(6)
    np.testing.assert_allclose(res.freq_hz, fm, rtol=1e-9)
    # shapes given back on each substructure's nodes = the monolithic shapes at the same places
    # (every interior mode of the reduced one is kept: an exact basis; round-off, measured 2e-13)
    for s, sub in enumerate(subs):
        at = [mono.mesh.nearest_node(x) for x in sub.mesh.points]
        ref = mono.expand(phi)[at]
        for k in range(6):
            a, b = res.shape(s, k), ref[:, :, k]
            np.testing.assert_allclose(a, np.sign(np.sum(a * b)) * b, atol=1e-10 * np.abs(b).max())


def test_point_mass_given_as_matrices():
    import types

    subs, _, mono = row_of_plates(1, 1.0, 0.2, 8, 2)
    tip = subs[0].mesh.node("top_right")
    mass = types.SimpleNamespace(name="mass", M=2.0 * np.eye(2), K=np.zeros((2, 2)), X=[subs[0].mesh.points[tip]],
                                 node_dofs=[[0, 1]], node_sets={"point": [0]})
    asm = SubstructureAssembly([subs[0], mass], [Interface("mass", "point", "S0", "top_right")])
    # reference: the plate with 2 kg added to the tip node's x and y diagonal
    M = mono.M.tolil()
    for d in mono.dofs([mono.mesh.node("top_right")]):
        M[d, d] += 2.0
    ref = fesub_modes(mono.K, M.tocsr(), 4)[0]
    np.testing.assert_allclose(asm.frequencies(4), ref, rtol=1e-10)  # the same matrices (round-off)
    np.testing.assert_allclose(asm.frequencies(4, method="dual"), ref, rtol=1e-10)


# ------------------------------------------------------------------ non-matching interfaces
@pytest.mark.parametrize("method", ["surface", "mortar"])
def test_non_matching_ties_on_matching_meshes_are_the_matching_tie(method):
    for quadratic in (False, True):
        subs, ties, _ = row_of_plates(2, 1.0, 0.2, 5, 3, quadratic=quadratic)
        f1 = SubstructureAssembly(subs, ties).frequencies(6)
        f2 = SubstructureAssembly(subs, [Interface("S1", "left", "S0", "right", method=method)]).frequencies(6)
        # coincident nodes: surface weights are 1 at one master node, mortar D = M (same space);
        # round-off of the eigensolver (measured 2e-12 linear, 1.5e-11 quadratic)
        np.testing.assert_allclose(f2, f1, rtol=1e-9)


@functools.lru_cache(maxsize=2)
def plate_limit(quadratic):
    """Free-free plate 1 m x 0.25 m: conforming monolithic elastic frequencies (modes 4-6) at
    three mesh levels, their observed order and their Richardson limit."""
    n = 8 if quadratic else 20
    f = [Substructure(plate_mesh(1.0, n * r, n // 4 * r, quadratic), MAT).modes(6)[0][3:] for r in (2, 4, 8)]
    p = np.log2((f[0] - f[1]) / (f[1] - f[2]))
    return f[2] + (f[2] - f[1]) / (2.0**p - 1.0), p


def plate_mesh(length, nx, ny, quadratic, origin=(0.0, 0.0)):
    m = rectangle(length, 0.25, nx, ny, origin=origin)
    return quadratic_mesh(m) if quadratic else m


# (elements, tie, order the errors must reach). Q4 + mortar: every elastic mode at order 2
# (measured 2.0; worst mode 1.6e-2, 4.2e-3, 1.0e-3). Q4 + node-to-surface: the largest error at
# order 2 (measured 2.0, the plate's own error dominates), but the axial mode, cut at its stress
# maximum, is not monotone (5.7e-4, 2.2e-5, 8.8e-5): the rows hold linear fields at the slave nodes
# only, the traction they pass is not consistent, and their own error (~6e-5) stalls at first
# order. Q8 + mortar: order 4 kept (measured 3.9: 1.1e-3, 7.6e-5, 5.0e-6 on the worst mode).
@pytest.mark.parametrize("quadratic, method, order", [(False, "surface", 1.8), (False, "mortar", 1.9),
                                                      (True, "mortar", 3.5)])
def test_non_matching_ties_converge_to_the_monolithic_frequency(quadratic, method, order):
    limit, p_mono = plate_limit(quadratic)
    # the conforming meshes converge at the element's order (2 for Q4 with incompatible modes,
    # 4 for Q8), on a smooth free plate
    assert np.all(np.abs(p_mono - (4.0 if quadratic else 2.0)) < 0.15)
    errs = []
    for r in (1, 2, 4):
        nx = 4 * r if quadratic else 8 * r
        a = Substructure(plate_mesh(0.5, nx, 4 * r, quadratic), MAT, name="A")  # 4r elements on the cut
        b = Substructure(plate_mesh(0.5, nx * 3 // 2, 6 * r, quadratic, (0.5, 0.0)), MAT, name="B")  # 6r
        f = SubstructureAssembly([a, b], [Interface("B", "left", "A", "right", method=method)]).frequencies(6)
        # rigid-body motions pass the tie exactly: three zero frequencies
        assert np.all(f[:3] < 1e-5 * f[3])
        errs.append(np.abs(f[3:] / limit - 1))
    errs = np.array(errs)
    if method == "surface":
        errs = errs.max(axis=1)
    rate = np.log2(errs[:-1] / errs[1:])
    assert np.all(rate > order), (errs, rate)


@pytest.mark.parametrize("method", ["surface", "mortar"])
def test_non_matching_tie_of_reduced_substructures(method):
    a = Substructure(plate_mesh(0.5, 8, 4, False), MAT, clamped=["left"], name="A")
    b = Substructure(plate_mesh(0.5, 12, 6, False, (0.5, 0.0)), MAT, name="B")
    tie = [Interface("B", "left", "A", "right", method=method)]
    full = SubstructureAssembly([a, b], tie)
    f_full = full.frequencies(6)
    # interpolated rows: the dual form (multipliers) and the primal one (eliminated slave DOFs)
    # agree to round-off (measured 4e-13 surface, 3.5e-12 mortar)
    np.testing.assert_allclose(full.frequencies(6, method="dual"), f_full, rtol=1e-9)
    errs = []
    for k in (10, 30, None):
        cbs = []
        for s, side in ((a, "right"), (b, "left")):
            bnd = s.dofs(side)
            cbs.append(CraigBampton(s, boundary=bnd, n_modes=s.n_dofs - bnd.size if k is None else k))
        f = SubstructureAssembly(cbs, tie).frequencies(6)
        assert np.all(f >= f_full * (1 - 1e-9))  # Ritz bound of the same tied model (round-off)
        errs.append(np.max(f / f_full - 1))
    # more modes, closer; every interior mode: the same model (measured 1.6e-3, 1.4e-4, 9e-12)
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-9


def test_node_to_surface_tie_is_first_order_on_quadratic_elements():
    limit, _ = plate_limit(True)
    errs = []
    for r in (2, 4):
        a = Substructure(plate_mesh(0.5, 4 * r, 4 * r, True), MAT, name="A")
        b = Substructure(plate_mesh(0.5, 6 * r, 6 * r, True, (0.5, 0.0)), MAT, name="B")
        f = SubstructureAssembly([a, b], [Interface("B", "left", "A", "right", method="surface")]).frequencies(6)
        errs.append(np.abs(f[3:] / limit - 1).max())
    # measured 9.4e-5 then 5.0e-5: order ~1, against 4 for the mortar tie on the same meshes
    assert 0.5 < np.log2(errs[0] / errs[1]) < 1.5 and errs[1] > 1e-5


# ------------------------------------------------------------------ export to the contact stepper
def test_exported_body_has_the_assembly_modes_and_matches_multibody_ties():
    from fesub.contact import Body, MultibodyModel, TiedInterface

    subs, ties, mono = row_of_plates(2, 1.0, 0.2, 8, 3)
    cbs = cb_models(subs, 12)
    asm = SubstructureAssembly(cbs, ties)
    body = Body.from_assembly(asm, name="plate")
    f_asm = asm.frequencies(10)
    one = MultibodyModel([body])
    np.testing.assert_allclose(np.sqrt(one.omega2[:10]) / (2 * np.pi), f_asm, rtol=1e-10)
    # the same two reduced bodies tied by the contact package's own primal assembly
    b0, b1 = Body.from_craig_bampton(cbs[0]), Body.from_craig_bampton(cbs[1])
    r, l = subs[0].mesh.nodes("right"), subs[1].mesh.nodes("left")
    l = l[match_nodes(subs[0].mesh.points[r], subs[1].mesh.points[l], tol=1e-9)]
    two = MultibodyModel([b0, b1], ties=[TiedInterface(0, r, 1, l)])
    np.testing.assert_allclose(np.sqrt(two.omega2[:10]) / (2 * np.pi), f_asm, rtol=1e-9)
    # tied nodes of the two plates share their coordinates in the body
    off = asm.node_offsets()
    np.testing.assert_array_equal(body.node_dofs[off[0] + r], body.node_dofs[off[1] + l])
    assert body.node_dofs[off[0] + subs[0].mesh.nodes("left")].max() == -1  # clamped
    assert asm.coordinate("S1", int(l[0]), "x") == body.node_dofs[off[1] + l[0], 0]


# ------------------------------------------------------------------ the result protocol
def test_coupled_modes_round_trip(tmp_path):
    import fesub

    subs, ties, _ = row_of_plates(2, 1.0, 0.2, 4, 2)
    cbs = cb_models(subs, 5)
    res = SubstructureAssembly([subs[0], cbs[1]], ties).modes(4)
    ds = res.to_xarray()
    assert all("units" in ds[v].attrs for v in ds.data_vars) and ds["freq_hz"].attrs["units"] == "Hz"
    back = fesub.load(res.save(tmp_path / "modes"))
    assert isinstance(back, CoupledModes) and back.names == res.names and back.kinds == res.kinds
    np.testing.assert_array_equal(back.freq_hz, res.freq_hz)
    for a, b in zip(back.shapes, res.shapes):
        np.testing.assert_array_equal(a, b)
    s = res.summary()
    assert s["results"]["freq_hz"]["unit"] == "Hz" and s["parameters"]["substructures"]["value"] == 2
    assert res.shape("S1", 0).shape == (subs[1].mesh.n_points, 2)


def test_mode_figure(tmp_path, drawn_figures):
    from fesub.plots import style

    subs, ties, _ = row_of_plates(3, 1.2, 0.2, 4, 2)
    asm = SubstructureAssembly(subs[:2] + [CraigBampton(subs[2], boundary=subs[2].dofs("left"), n_modes=4)], ties)
    res = asm.modes(3)
    asm.plot_mode(res, 1, tmp_path / "mode2.png")
    (fig, path), = drawn_figures
    assert style.check_figure(fig) == [] and "coupled mode 2" in fig.axes[0].get_title()
    other = SubstructureAssembly(subs[:2], ties[:1]).modes(2)
    with pytest.raises(ModelError, match="do not belong"):
        asm.plot_mode(other, 0, tmp_path / "x.png")


# ------------------------------------------------------------------ errors
def test_unmatched_nodes_are_listed():
    a = Substructure(rectangle(0.5, 0.2, 4, 2), MAT, clamped=["left"], name="A")
    b = Substructure(rectangle(0.5, 0.2, 4, 3, origin=(0.5, 0.0)), MAT, name="B")  # 4 nodes on the cut, not 3
    with pytest.raises(ModelError, match=r"unmatched nodes of 'A' \[9\], of 'B' \[5, 10\]"):
        SubstructureAssembly([a, b], [Interface("A", "right", "B", "left")])
    c = Substructure(rectangle(0.5, 0.2, 4, 2, origin=(0.501, 0.0)), MAT, name="C")  # a 1 mm gap
    with pytest.raises(ModelError, match="do not match"):
        SubstructureAssembly([a, c], [Interface("A", "right", "C", "left")])
    with pytest.raises(ModelError, match="farther than"):
        SubstructureAssembly([a, c], [Interface("C", "left", "A", "right", method="surface")])


def test_missing_node_set_and_substructure():
    subs, _, _ = row_of_plates(2, 1.0, 0.2, 4, 2)
    with pytest.raises(ModelError, match="'S1' has no node set 'cut'.*'left'"):
        SubstructureAssembly(subs, [Interface("S0", "right", "S1", "cut")])
    with pytest.raises(ModelError, match="no substructure 'S7'"):
        SubstructureAssembly(subs, [Interface("S0", "right", "S7", "left")])
    cut_inside = CraigBampton(subs[1], boundary=subs[1].dofs("right"), n_modes=3)  # the cut is interior
    with pytest.raises(ModelError, match="interior nodes of a reduced model"):
        SubstructureAssembly([subs[0], cut_inside], [Interface("S0", "right", "S1", "left")])


def test_redundant_ties_are_refused():
    subs, ties, _ = row_of_plates(3, 1.2, 0.2, 4, 2)
    with pytest.raises(ModelError, match="rank-deficient.*interface 'S0:right-S1'"):
        SubstructureAssembly(subs, ties + [ties[0]])
    # a loop of ties on one node: the third tie is implied by the first two
    loop = [Interface("S0", [subs[0].mesh.node("top_right")], "S1", [subs[1].mesh.node("top_left")]),
            Interface("S1", [subs[1].mesh.node("top_left")], "S2", [subs[2].mesh.node("top_left")], tol=1.0),
            Interface("S0", [subs[0].mesh.node("top_right")], "S2", [subs[2].mesh.node("top_left")], tol=1.0)]
    with pytest.raises(ModelError, match="redundant"):
        SubstructureAssembly(subs, loop)


def test_null_space_of_general_rows():
    rng = np.random.default_rng(3)
    B = sp.random(6, 20, density=0.3, random_state=4) + sp.eye(6, 20)
    L, ind, rows = constraint_null_space(B)
    assert rows.tolist() == list(range(6))
    assert L.shape == (20, 14) and np.abs(B @ L).max() < 1e-12
    assert np.linalg.matrix_rank(L.toarray()) == 14
    x = rng.standard_normal(14)
    np.testing.assert_allclose((L @ x)[ind], x)  # independent coordinates carried unchanged
    with pytest.raises(ModelError, match="rank-deficient"):
        constraint_null_space(sp.vstack([B, B[2] - 2 * B[4]]))
    L2, _, rows = constraint_null_space(sp.vstack([B[:3], B[2] - 2 * B[1], B[3:]]), redundant="drop")
    assert rows.tolist() == [0, 1, 2, 4, 5, 6] and np.abs(B @ L2).max() < 1e-12 and L2.shape == (20, 14)
