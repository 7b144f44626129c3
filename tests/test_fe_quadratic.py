"""Quadratic plane elements (Q8, Q9, T6), plane strain, mixed meshes and edge loads.

Independent references: polynomial displacement fields that are exact elasticity solutions (with a
constant body force for a general quadratic field) and lie in the element's space, so that the
Galerkin solution must equal them; the plane-strain / plane-stress equivalence E* = E / (1 - nu^2),
nu* = nu / (1 - nu); Timoshenko and Goodier's elasticity solution of the end-loaded cantilever; Lame's
thick cylinder; the resultant of a uniform pressure; element matrices of scikit-fem.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub.errors import MeshError, ModelError
from fesub.fe import Mesh, PlaneStrain, PlaneStress, mesh_matrices, rectangle, solve_static
from fesub.fe.loads import boundary_faces, edge_load
from fesub.fe.materials import plane_strain_D
from fesub.fe.quadratic import (gauss_rule, q8_matrices, q9_matrices, quadratic_mesh, shape_functions,
                                t6_matrices)

E, NU, RHO, T = 210e9, 0.3, 7800.0, 0.05
STRESS = PlaneStress(E, NU, RHO, T)
STRAIN = PlaneStrain(E, NU, RHO, T)
KINDS = ("quad8", "quad9", "triangle6")
SIDES = ("left", "right", "top", "bottom")


# ---------------------------------------------------------------------------- meshes
def build(kind: str, nx: int, ny: int, *, length=2.0, height=1.0, origin=(0.0, 0.0)) -> Mesh:
    """Structured mesh of ``kind`` (quad, triangle, quad8, quad9, triangle6)."""
    base = rectangle(length, height, nx, ny, origin=origin, element="triangle" if "tri" in kind else "quad")
    if kind in ("quad", "triangle"):
        return base
    return quadratic_mesh(base, quad=kind if kind.startswith("quad") else "quad8")


def distorted(kind: str, *, curved: bool, seed: int = 3) -> Mesh:
    """A 2 m x 1 m patch: interior corner nodes moved by up to 25 % of the spacing (straight-sided
    cells, mid-nodes at mid-edge), and with ``curved`` the interior mid-edge nodes moved too."""
    nx, ny = 4, 3
    lin = rectangle(2.0, 1.0, nx, ny, element="triangle" if "tri" in kind else "quad")
    rng = np.random.default_rng(seed)
    bnd = np.unique(np.concatenate([lin.nodes(s) for s in SIDES]))
    inner = np.setdiff1d(np.arange(lin.n_points), bnd)
    pts = lin.points.copy()
    pts[inner] += rng.uniform(-0.25, 0.25, (inner.size, 2)) * [2.0 / nx, 1.0 / ny]
    lin = Mesh(pts, lin.cells, lin.node_sets, lin.edge_sets)
    if kind in ("quad", "triangle"):
        return lin.check()
    m = quadratic_mesh(lin, quad=kind if kind.startswith("quad") else "quad8")
    if curved:
        qb = np.unique(np.concatenate([m.nodes(s) for s in SIDES]))
        mids = np.setdiff1d(np.arange(lin.n_points, m.n_points), qb)
        m.points[mids] += rng.uniform(-0.06, 0.06, (mids.size, 2)) * [2.0 / nx, 1.0 / ny]
    return m.check()


def boundary(mesh):
    return np.unique(np.concatenate([mesh.nodes(s) for s in SIDES]))


# ---------------------------------------------------------------------------- polynomial fields
def field(c, pts):
    """u = a . [1, x, y, x^2, xy, y^2], v = b . [...] for c = (a, b), (6,) each (m)."""
    x, y = pts[:, 0], pts[:, 1]
    mono = np.column_stack([np.ones_like(x), x, y, x * x, x * y, y * y])
    return np.column_stack([mono @ c[0], mono @ c[1]])


def body_force(c, D):
    """Constant body force (N/m^3) that balances the (linear) stress of the quadratic field c."""
    a, b = c
    dsdx = D @ [2 * a[3], b[4], a[4] + 2 * b[3]]  # d(sxx, syy, sxy)/dx
    dsdy = D @ [a[4], 2 * b[5], 2 * a[5] + b[4]]
    return -np.array([dsdx[0] + dsdy[2], dsdx[2] + dsdy[1]])


def dirichlet_patch(mesh, mat, c):
    """Solve with the field c prescribed on the boundary and its body force inside; return the
    largest nodal error relative to the largest displacement."""
    K, M, dm = mesh_matrices(mesh, mat)
    exact = field(c, mesh.points)
    bnd = boundary(mesh)
    dofs = dm.dofs(bnd)
    pre = dict(zip(dofs.tolist(), exact[bnd].ravel().tolist()))
    # consistent body force: the constant field lies in every element's space, so (M / rho) b
    # integrates int N b t dA exactly
    f = (M / mat.rho) @ np.tile(body_force(c, mat.D), mesh.n_points)
    u = solve_static(K, f, pre).reshape(-1, 2)
    return np.abs(u - exact).max() / np.abs(exact).max()


LINEAR = (np.array([1e-3, 2e-3, -1.5e-3, 0, 0, 0]), np.array([-5e-4, 7e-4, 1.2e-3, 0, 0, 0]))
QUADRATIC = (np.array([1e-3, 2e-3, -1.5e-3, 8e-4, -6e-4, 5e-4]),
             np.array([-5e-4, 7e-4, 1.2e-3, -4e-4, 9e-4, 3e-4]))


@pytest.mark.parametrize("kind", ["quad", "triangle", "quad8", "quad9", "triangle6"])
@pytest.mark.parametrize("mat", [STRESS, STRAIN], ids=["stress", "strain"])
def test_linear_patch(kind, mat):
    # a linear field is exact (no body force) and in every isoparametric space, curved or not:
    # the error is round-off of a solve with condition ~1e4 (1e-10 leaves a 1e2 margin over eps K)
    mesh = distorted(kind, curved=kind not in ("quad", "triangle"))
    assert dirichlet_patch(mesh, mat, LINEAR) < 1e-10


def test_linear_patch_plain_q4_plane_strain():
    mesh = distorted("quad", curved=False)
    K, M, dm = mesh_matrices(mesh, STRAIN, incompatible=False)
    exact = field(LINEAR, mesh.points)
    bnd = boundary(mesh)
    u = solve_static(K, np.zeros(dm.n_dofs), dict(zip(dm.dofs(bnd).tolist(), exact[bnd].ravel().tolist())))
    assert np.abs(u.reshape(-1, 2) - exact).max() < 1e-10 * np.abs(exact).max()


@pytest.mark.parametrize("kind", ["quad9", "triangle6"])
def test_complete_quadratic_on_straight_sided_cells(kind):
    # Q9 holds every polynomial of degree <= 2 in (xi, eta) separately, so on a bilinear map
    # (straight edges, mid-nodes mid-edge) all quadratics in (x, y); T6 on an affine map holds
    # them too. The field with its body force is then reproduced to round-off.
    assert dirichlet_patch(distorted(kind, curved=False), STRESS, QUADRATIC) < 1e-10
    assert dirichlet_patch(distorted(kind, curved=False), STRAIN, QUADRATIC) < 1e-10


def test_q8_quadratics_only_on_parallelograms():
    # serendipity Q8 holds x^2, xy, y^2 on affine (parallelogram) maps only (its space lacks
    # xi^2 eta^2); on a sheared parallelogram mesh the field is exact, on a distorted one it is not
    shear = rectangle(2.0, 1.0, 4, 3)
    shear.points[:, 0] += 0.3 * shear.points[:, 1]
    assert dirichlet_patch(quadratic_mesh(shear), STRESS, QUADRATIC) < 1e-10
    err = dirichlet_patch(distorted("quad8", curved=False), STRESS, QUADRATIC)
    assert err > 1e-5  # a real interpolation error, five orders above round-off


def test_neumann_patch_with_edge_loads():
    # constant stress: the edge loads of sigma . n on the four sides and three supports against
    # rigid motion give the linear field of that stress (curved interior cells)
    eps = np.array([LINEAR[0][1], LINEAR[1][2], LINEAR[0][2] + LINEAR[1][1]])
    for kind in KINDS:
        mesh = distorted(kind, curved=True)
        K, M, dm = mesh_matrices(mesh, STRAIN)
        sxx, syy, sxy = STRAIN.D @ eps
        f = sum(edge_load(mesh, s, force_per_length=np.array(q) * T)
                for s, q in (("left", (-sxx, -sxy)), ("right", (sxx, sxy)),
                             ("bottom", (-sxy, -syy)), ("top", (sxy, syy))))
        exact = field(LINEAR, mesh.points)
        a, b = mesh.node("bottom_left"), mesh.node("bottom_right")
        pre = {2 * a: exact[a, 0], 2 * a + 1: exact[a, 1], 2 * b + 1: exact[b, 1]}
        u = solve_static(K, f, pre).reshape(-1, 2)
        assert np.abs(u - exact).max() < 1e-9 * np.abs(exact).max()


# ---------------------------------------------------------------------------- plane strain
def test_plane_strain_matrix_is_lame():
    lam = E * NU / ((1 + NU) * (1 - 2 * NU))
    mu = E / (2 * (1 + NU))
    ref = np.array([[lam + 2 * mu, lam, 0], [lam, lam + 2 * mu, 0], [0, 0, mu]])
    np.testing.assert_allclose(plane_strain_D(E, NU), ref, rtol=1e-14)  # two algebraic forms


@pytest.mark.parametrize("kind", ["quad", "triangle", "quad8", "quad9", "triangle6"])
def test_plane_strain_equals_plane_stress_of_modified_constants(kind):
    mesh = build(kind, 8, 2, length=4.0, height=1.0)
    star = PlaneStress(E / (1 - NU**2), NU / (1 - NU), RHO, T)
    us = []
    for mat in (STRAIN, star):
        K, M, dm = mesh_matrices(mesh, mat)
        f = edge_load(mesh, "right", force_per_length=[0.0, -1e4])
        pre = {d: 0.0 for d in dm.dofs(mesh.nodes("left"))}
        us.append(solve_static(K, f, pre))
    # the two D matrices agree to a few ulps; the solves (condition ~1e5) to ~1e-12
    np.testing.assert_allclose(us[0], us[1], rtol=0, atol=1e-11 * np.abs(us[1]).max())
