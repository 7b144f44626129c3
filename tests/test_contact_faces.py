"""3D master faces (:class:`fesub.contact.geometry.FaceSet`) against independent references.

References: the shape functions of :func:`fesub.fe.face_shapes` (a separate implementation) and
finite differences of them; a brute-force closest point written here (each face sampled densely
with those shape functions, the best samples refined by SciPy's bounded L-BFGS-B); closed-form
distances to planes, spheres and cylinders; a fresh build for a refitted set. Both backends.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.optimize import minimize

from fesub import _backend
from fesub.contact.geometry import FaceSet
from fesub.contact.geometry.faces import _LEBESGUE, FACE_TYPES
from fesub.errors import MeshError, ModelError, ParameterError
from fesub.fe import box, solid_boundary_faces
from fesub.fe.face_loads import face_shapes


def _backends():
    return ["python", "compiled"] if _backend.compiled_available("search3d") else ["python"]


def _height(x, y):
    return 0.1 * np.sin(3 * x) * np.cos(2 * y)


def _lattice(n, height=_height):
    """(2n+1)^2 nodes on z = height(x, y) over [0, 1]^2 (node (i, j) at x = i/2n, y = j/2n)."""
    g = np.linspace(0.0, 1.0, 2 * n + 1)
    X, Y = np.meshgrid(g, g, indexing="ij")
    return np.c_[X.ravel(), Y.ravel(), height(X, Y).ravel()]


def _wavy_faces(n, ftype):
    """Faces of type ``ftype`` on the lattice of :func:`_lattice`, normals towards +z."""
    m = 2 * n + 1

    def k(i, j):
        return i * m + j

    out = []
    for I in range(n):
        for J in range(n):
            i, j = 2 * I, 2 * J
            c = [k(i, j), k(i + 2, j), k(i + 2, j + 2), k(i, j + 2)]
            mid = [k(i + 1, j), k(i + 2, j + 1), k(i + 1, j + 2), k(i, j + 1)]
            ctr = k(i + 1, j + 1)
            if ftype == "quad":
                out.append(c)
            elif ftype == "quad8":
                out.append(c + mid)
            elif ftype == "quad9":
                out.append(c + mid + [ctr])
            elif ftype == "triangle":
                out += [[c[0], c[1], c[2]], [c[0], c[2], c[3]]]
            else:
                out += [[c[0], c[1], c[2], mid[0], mid[1], ctr], [c[0], c[2], c[3], ctr, mid[2], mid[3]]]
    return np.array(out)


def _brute_distance(points, faces, ftype, P, n_sample=31):
    """Distance from each P to the surface: every face sampled on a lattice of its parameters
    with fesub.fe.face_shapes, the 4 best faces refined by L-BFGS-B (triangles through the
    collapsed square r = u, s = v (1 - u))."""
    u = np.linspace(0.0, 1.0, n_sample)
    U, V = (a.ravel() for a in np.meshgrid(u, u, indexing="ij"))
    tri = ftype.startswith("triangle")

    def params(uv):
        uv = np.atleast_2d(uv)
        if tri:
            return np.c_[uv[:, 0], uv[:, 1] * (1 - uv[:, 0])]
        return 2 * uv - 1

    N = face_shapes(ftype, params(np.c_[U, V]))[0]
    S = np.einsum("gk,mkc->mgc", N, points[faces])  # samples (m, g, 3)
    out = np.empty(len(P))
    for s, p in enumerate(P):
        d2 = ((S - p) ** 2).sum(axis=2)
        best = np.inf
        for f in np.argsort(d2.min(axis=1))[:4]:
            g = int(np.argmin(d2[f]))

            def fun(uv, f=f):  # squared distance and its gradient in (u, v)
                ab = params(uv)
                N, dN = face_shapes(ftype, ab)
                r = N[0] @ points[faces[f]] - p
                g_ab = 2 * (dN[0].T @ points[faces[f]]) @ r
                dab = np.array([[1.0, 0.0], [-uv[1], 1.0 - uv[0]]]) if tri else 2 * np.eye(2)
                return float(r @ r), dab.T @ g_ab

            r = minimize(fun, [U[g], V[g]], jac=True, method="L-BFGS-B", bounds=[(0, 1), (0, 1)],
                         options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 60})
            best = min(best, r.fun, d2[f, g])
        out[s] = np.sqrt(best)
    return out


# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("ftype", sorted(FACE_TYPES))
def test_shape_functions_against_fe_and_finite_differences(backend, ftype):
    """Point and first derivatives of the kernel against fesub.fe.face_shapes (a separate
    implementation); second derivatives against central differences of the first (step 1e-5:
    error O(h^2) ~ 1e-10 on O(1) values, tolerance 1e-7)."""
    rng = np.random.default_rng(1)
    k = FACE_TYPES[ftype][1]
    X = rng.normal(size=(k, 3))
    conn = np.full((1, 9), -1, dtype=np.int32)
    conn[0, :k] = np.arange(k)
    ab = rng.uniform(0, 0.45, (6, 2)) if ftype.startswith("triangle") else rng.uniform(-1, 1, (6, 2))
    code = np.array([FACE_TYPES[ftype][0]], dtype=np.int32)
    with _backend.use(backend):
        K = _backend.kernels("search3d")

        def ev(pts):
            out = np.empty((len(pts), 18))
            K.face_eval(X, conn, code, np.zeros(len(pts), dtype=np.int64), np.ascontiguousarray(pts), out)
            return out

        got = ev(ab)
        N, dN = face_shapes(ftype, ab)
        np.testing.assert_allclose(got[:, :3], N @ X, atol=1e-13)
        np.testing.assert_allclose(got[:, 3:6], dN[:, :, 0] @ X, atol=1e-12)
        np.testing.assert_allclose(got[:, 6:9], dN[:, :, 1] @ X, atol=1e-12)
        h = 1e-5
        da = (ev(ab + [h, 0]) - ev(ab - [h, 0])) / (2 * h)
        db = (ev(ab + [0, h]) - ev(ab - [0, h])) / (2 * h)
        np.testing.assert_allclose(got[:, 9:12], da[:, 3:6], atol=1e-7)
        np.testing.assert_allclose(got[:, 12:15], db[:, 3:6], atol=1e-7)
        np.testing.assert_allclose(got[:, 12:15], da[:, 6:9], atol=1e-7)
        np.testing.assert_allclose(got[:, 15:18], db[:, 6:9], atol=1e-7)
        # the shape values alone (what the engine interpolates with): fe's, zero past the nodes
        S = np.full((len(ab), 9), np.nan)
        K.face_shapes(code, np.zeros(len(ab), dtype=np.int64), np.ascontiguousarray(ab), S)
        np.testing.assert_allclose(S[:, :k], N, rtol=0, atol=1e-14)
        assert np.all(S[:, k:] == 0.0)
        with pytest.raises(ValueError, match="not in 0..0"):
            K.face_shapes(code, np.ones(len(ab), dtype=np.int64), np.ascontiguousarray(ab), S)


@pytest.mark.parametrize("ftype", sorted(FACE_TYPES))
def test_boxes_hold_the_face_and_lebesgue_bound(ftype):
    """A face's box (its Bezier control points) holds every point of a strongly curved face;
    the bound on a face point's motion (sum |N_i|) is the sampled maximum."""
    rng = np.random.default_rng(2)
    k = FACE_TYPES[ftype][1]
    tri = ftype.startswith("triangle")
    ref = np.array([[0, 0], [1, 0], [0, 1]] if tri else [[-1, -1], [1, -1], [1, 1], [-1, 1]], float)
    pts = []
    for _ in range(20):
        X = np.zeros((k, 3))
        X[:len(ref), :2] = ref
        if k > len(ref):  # mid-nodes (and centre) displaced far from their straight position
            mids = ([[.5, 0], [.5, .5], [0, .5]] if tri else [[0, -1], [1, 0], [0, 1], [-1, 0], [0, 0]])
            X[len(ref):, :2] = np.array(mids)[:k - len(ref)]
        X += rng.normal(scale=0.3, size=X.shape)
        fs = FaceSet(X, np.arange(k)[None], ftype, reach=1.0)
        g = np.linspace(0, 1, 41)
        A, B = (a.ravel() for a in np.meshgrid(g, g))
        ab = np.r_[np.c_[A, B * (1 - A)], [[1 / 3, 1 / 3]]] if tri else np.c_[2 * A - 1, 2 * B - 1]
        x = face_shapes(ftype, ab)[0] @ X
        assert np.all(x >= fs.boxes[0, :3] - 1e-12) and np.all(x <= fs.boxes[0, 3:] + 1e-12)
        pts.append(np.abs(face_shapes(ftype, ab)[0]).sum(axis=1).max())
    # the samples hold the maximising points (corners, edge middles, centre or centroid): equal to round-off
    np.testing.assert_allclose(max(pts), _LEBESGUE[FACE_TYPES[ftype][0]], rtol=1e-9)


@functools.lru_cache(maxsize=None)
def _random_case(ftype):
    """A wavy surface of 5 x 5 cells of ``ftype`` faces, 30 points near it (within 4 cm) and
    their brute-force distances (computed once for both backends)."""
    n = 5
    X, F = _lattice(n), _wavy_faces(n, ftype)
    rng = np.random.default_rng(5)
    m = 30
    xy = rng.uniform(0.02, 0.98, (m, 2))
    above = rng.uniform(-0.04, 0.04, m)
    P = np.c_[xy, _height(xy[:, 0], xy[:, 1]) + above]
    return X, F, P, above, _brute_distance(X, F, ftype, P)


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("ftype", sorted(FACE_TYPES))
def test_random_points_against_brute_force(backend, ftype):
    """Grid search = every-face scan; distance = the independent brute force; sign = side of the
    surface; normal along (P - closest point) and orthonormal frame."""
    X, F, P, above, ref = _random_case(ftype)
    with _backend.use(backend):
        fs = FaceSet(X, F, ftype, reach=0.2)
        pr, br = fs.project(P), fs.project_brute(P)
        every = fs.project_brute(P[:6], prune=False)  # every face projected (slow on the twin)
    assert fs.backend == backend
    assert (pr.face >= 0).all()
    for b in (br, every):
        np.testing.assert_array_equal(pr.face[:len(b)], b.face)
        np.testing.assert_allclose(pr.gap[:len(b)], b.gap, rtol=0, atol=1e-13)
    # the closest point is a point of the surface: never farther than the true nearest (to
    # round-off); L-BFGS-B reaches the minimum of the squared distance to ~1e-16, i.e. the
    # distance (0.002-0.04 m here) to ~1e-10 m
    assert np.all(np.abs(pr.gap) <= ref + 1e-12)
    np.testing.assert_allclose(np.abs(pr.gap), ref, rtol=0, atol=1e-9)
    # the wavy surface's slopes are below 0.3: a point 5 mm above (below) the surface at the
    # same (x, y) is above (below) it along its normal too
    clear = np.abs(above) > 5e-3
    assert np.all(np.sign(pr.gap[clear]) == np.sign(above[clear]))
    inside = pr.feature == 0
    np.testing.assert_allclose((P - pr.point)[inside], pr.gap[inside, None] * pr.normal[inside], atol=1e-10)
    for a in (pr.normal, pr.tangent1, pr.tangent2):
        np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.einsum("ij,ij->i", pr.normal, pr.tangent1), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.cross(pr.normal, pr.tangent1), pr.tangent2, atol=1e-12)


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("ftype", sorted(FACE_TYPES))
def test_small_faces_far_from_the_origin(backend, ftype):
    """The random case shrunk 1000x and moved 10 m away (faces 0.2 mm at coordinates of 10 m, as
    a fine master mesh on a large part): the same closest points scaled (against the brute
    force), and Newton stops as soon on it as on the unit surface (it stops when its step is
    below the round-off of the coordinates, not of the face parameters)."""
    X, F, P, above, ref = _random_case(ftype)
    s, o = 1e-3, np.array([10.0, -7.0, 3.0])
    with _backend.use(backend):
        unit = FaceSet(X, F, ftype, reach=0.2)
        small = FaceSet(o + s * X, F, ftype, reach=0.2 * s)
        pu, ps = unit.project(P), small.project(o + s * P)
    np.testing.assert_array_equal(ps.face, pu.face)
    # the brute force's 1e-9 m on the unit surface scales by s; the coordinates' round-off at
    # 10 m is 2e-15 m (a few units of it in the gap)
    np.testing.assert_allclose(np.abs(ps.gap), s * ref, rtol=0, atol=s * 1e-9 + 1e-13)
    np.testing.assert_allclose(ps.gap, s * pu.gap, rtol=0, atol=1e-13)
    np.testing.assert_allclose(ps.normal, pu.normal, rtol=0, atol=1e-8)
    # iterations per point: 2-6 on the unit surface; a fixed parameter tolerance (1e-14) never
    # met on the small faces ran each projection to the 40-iteration limit (10x)
    assert small.newton_iterations <= 1.5 * unit.newton_iterations, \
        (small.newton_iterations, unit.newton_iterations)


def _icosphere(level, R):
    """tri6 faces of a sphere of radius R (icosahedron split ``level`` times), nodes on it."""
    t = (1 + 5 ** 0.5) / 2
    V = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t], [0, -1, -t],
         [0, 1, -t], [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]
    T = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4],
         [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9],
         [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]]
    V = [np.array(v, float) / np.linalg.norm(v) for v in V]

    def split(V, T):
        cache = {}

        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in cache:
                v = V[a] + V[b]
                V.append(v / np.linalg.norm(v))
                cache[key] = len(V) - 1
            return cache[key]

        out = []
        for a, b, c in T:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            out.append((a, b, c, ab, bc, ca))
        return out

    for _ in range(level):
        T = [f for a, b, c, ab, bc, ca in split(V, T)
             for f in ((a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca))]
    T6 = split(V, T)
    return R * np.array(V), np.array(T6)


def _cylinder(n_around, n_along, R, L, ftype):
    """quad8/quad9 faces of the cylinder x^2 + y^2 = R^2, 0 <= z <= L, nodes on it, normals out."""
    th = np.linspace(0, 2 * np.pi, 2 * n_around + 1)[:-1]
    z = np.linspace(0, L, 2 * n_along + 1)
    TH, Z = np.meshgrid(th, z, indexing="ij")
    X = np.c_[R * np.cos(TH.ravel()), R * np.sin(TH.ravel()), Z.ravel()]
    m = len(z)

    def k(i, j):
        return (i % (2 * n_around)) * m + j

    F = []
    for I in range(n_around):
        for J in range(n_along):
            i, j = 2 * I, 2 * J
            f = [k(i, j), k(i + 2, j), k(i + 2, j + 2), k(i, j + 2),
                 k(i + 1, j), k(i + 2, j + 1), k(i + 1, j + 2), k(i, j + 1)]
            F.append(f + [k(i + 1, j + 1)] if ftype == "quad9" else f)
    return X, np.array(F)


@pytest.mark.parametrize("backend", _backends())
def test_sphere_tri6_gap_converges_to_the_analytic_distance(backend):
    """tri6 sphere (nodes on the sphere): gap -> |P| - R; the quadratic interpolation error is
    O(h^3) at least: the error falls at least 8x per halving of the faces (measured: 11x, 15x,
    16x from 20 to 1280 faces)."""
    R = 1.0
    rng = np.random.default_rng(7)
    d = rng.normal(size=(40, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    P = d * rng.uniform(0.9, 1.1, 40)[:, None] * R
    errors = []
    for level in (0, 1, 2) if backend == "python" else (0, 1, 2, 3):
        X, F = _icosphere(level, R)
        with _backend.use(backend):
            pr = FaceSet(X, F, "triangle6", reach=0.3).project(P)
        assert (pr.face >= 0).all() and not pr.off_surface.any()
        errors.append(np.abs(pr.gap - (np.linalg.norm(P, axis=1) - R)).max())
    errors = np.array(errors)
    assert np.all(errors[1:] < errors[:-1] / 8), errors
    assert errors[-1] < 2e-4


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("ftype", ["quad8", "quad9"])
def test_cylinder_gap_converges_and_crossing_is_continuous(backend, ftype):
    """Cylinder of quad8/quad9 faces: gap -> distance to the axis minus R, error falling >= 8x
    per halving (O(h^3) at least; measured 15x, 16x); a node moving around and along it (across many faces' edges, above and inside
    the surface) keeps a face and a gap that moves no more than the node (1-Lipschitz)."""
    R, L = 0.5, 1.0
    rng = np.random.default_rng(8)
    th, z, r = rng.uniform(0, 2 * np.pi, 40), rng.uniform(0.1, 0.9, 40), rng.uniform(0.45, 0.55, 40)
    P = np.c_[r * np.cos(th), r * np.sin(th), z]
    errors = []
    for n in (4, 8, 16):
        X, F = _cylinder(n, 2, R, L, ftype)
        with _backend.use(backend):
            pr = FaceSet(X, F, ftype, reach=0.3).project(P)
        assert (pr.face >= 0).all()
        errors.append(np.abs(pr.gap - (r - R)).max())
    errors = np.array(errors)
    assert np.all(errors[1:] < errors[:-1] / 8), errors
    s = np.linspace(0, 1, 400 if backend == "compiled" else 120)
    path = np.c_[(R + 0.02 * np.cos(9 * s)) * np.cos(2 * np.pi * s),
                 (R + 0.02 * np.cos(9 * s)) * np.sin(2 * np.pi * s), 0.2 + 0.6 * s]
    with _backend.use(backend):
        fs = FaceSet(*_cylinder(8, 4, R, L, ftype), ftype, reach=0.3)
        pr = fs.project(path)
    assert (pr.face >= 0).all() and len(np.unique(pr.face)) > 8
    step = np.linalg.norm(np.diff(path, axis=0), axis=1)
    assert np.all(np.abs(np.diff(pr.gap)) <= step + 1e-12)
    assert np.any(pr.gap > 0) and np.any(pr.gap < 0)


def _plane_patch_distance(p, corners):
    """Distance from p to a planar parallelogram with corners c0, c1, c2 (c3 = c0 + c2 - c1)."""
    c0, c1, c3 = corners[0], corners[1], corners[3]
    e1, e2 = c1 - c0, c3 - c0
    G = np.array([[e1 @ e1, e1 @ e2], [e1 @ e2, e2 @ e2]])
    uv = np.clip(np.linalg.solve(G, [e1 @ (p - c0), e2 @ (p - c0)]), 0, 1)
    if not np.allclose(e1 @ e2, 0):  # the tests use rectangles only
        raise AssertionError
    return np.linalg.norm(p - (c0 + uv[0] * e1 + uv[1] * e2))


def _roof(slope):
    """Two rectangles meeting on the ridge x = 0 (z = -slope |x|: a ridge for slope > 0, a
    valley for slope < 0), normals up."""
    X = np.array([[-1, -1, -slope], [0, -1, 0], [1, -1, -slope], [-1, 1, -slope], [0, 1, 0],
                  [1, 1, -slope]], float)
    return X, np.array([[0, 1, 4, 3], [1, 2, 5, 4]])


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("slope", [0.5, -0.5])
def test_ridge_and_valley_crossing(backend, slope):
    """A node crossing a ridge (slope 0.5) or a valley (-0.5) above the surface, and one crossing
    under the ridge inside the body: a face all the way, gap = the closed-form distance to the
    nearer rectangle (signed), the normal turning continuously over the ridge (no jump larger
    than the step over the distance) and jumping once in the valley."""
    X, F = _roof(slope)
    s = np.linspace(-0.8, 0.8, 321)
    with _backend.use(backend):
        fs = FaceSet(X, F, "quad", reach=2.0)
        # above the ridge (the roof's top is z = 0) and inside the body under it; above the valley
        # (its rims are at z = 0.4)
        for h, sign in ((0.3, 1.0), (-0.5, -1.0)) if slope > 0 else ((0.5, 1.0),):
            path = np.c_[s, np.full_like(s, 0.2), np.full_like(s, h)]
            pr = fs.project(path)
            assert (pr.face >= 0).all() and not pr.off_surface.any()
            ref = np.array([min(_plane_patch_distance(p, X[f]) for f in F) for p in path])
            np.testing.assert_allclose(pr.gap, sign * ref, rtol=0, atol=1e-12)
            dn = np.linalg.norm(np.diff(pr.normal, axis=0), axis=1)
            jumps = dn > 2 * (s[1] - s[0]) / np.abs(pr.gap).min()
            if slope > 0 and h > 0:
                assert not jumps.any()
                assert (pr.feature == 1).any()  # the ridge's own region: closest point on the edge
                np.testing.assert_allclose(pr.normal[pr.feature == 1] @ [1, 0, 0],
                                           (path - pr.point)[pr.feature == 1, 0]
                                           / np.abs(pr.gap[pr.feature == 1]), atol=1e-12)
            else:
                assert jumps.sum() == 1


@pytest.mark.parametrize("backend", _backends())
def test_peak_no_lost_or_spurious_contact(backend):
    """A pyramid of 4 triangles: nodes on a circle above the apex (in its normal cone) see the
    apex (a vertex) at the distance to it; nodes over the flanks the plane distance; all
    positive, none lost; a node lowered through the apex goes from + to - continuously."""
    X = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0], [0, 0, 1]], float)
    F = np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]])
    a = np.linspace(0, 2 * np.pi, 73)
    ring = np.c_[0.05 * np.cos(a), 0.05 * np.sin(a), np.full_like(a, 1.3)]
    with _backend.use(backend):
        fs = FaceSet(X, F, "triangle", reach=2.0)
        pr = fs.project(ring)
        assert (pr.feature == 2).all() and (pr.face >= 0).all()
        np.testing.assert_allclose(pr.gap, np.linalg.norm(ring - X[4], axis=1), atol=1e-12)
        np.testing.assert_allclose(pr.point, np.tile(X[4], (len(a), 1)), atol=1e-12)
        flank = np.array([[0.0, -0.3, 0.9]])  # over the face 0-1-4, plane y - z/2... distance:
        n = np.cross(X[1] - X[0], X[4] - X[0])
        n /= np.linalg.norm(n)
        pf = fs.project(flank)
        assert pf.feature[0] == 0 and pf.face[0] == 0
        np.testing.assert_allclose(pf.gap, (flank - X[0]) @ n, atol=1e-12)
        down = np.c_[np.full(41, 0.01), np.full(41, 0.02), np.linspace(1.2, 0.8, 41)]
        pd = fs.project(down)
    assert (pd.face >= 0).all() and pd.gap[0] > 0 > pd.gap[-1]
    assert np.all(np.abs(np.diff(pd.gap)) <= 0.01 + 1e-12)


@pytest.mark.parametrize("backend", _backends())
def test_free_border_and_reach(backend):
    """Beyond the master's free border a node is off the surface; beyond reach it has no face."""
    X, F = _roof(0.0)
    with _backend.use(backend):
        fs = FaceSet(X, F, "quad", reach=0.5)
        pr = fs.project([[0.5, 0.0, 0.1], [1.2, 0.0, 0.1], [0.5, 0.0, 0.8], [1.0, 0.0, 0.1]])
    np.testing.assert_array_equal(pr.off_surface, [False, True, False, False])
    assert pr.face[2] == -1 and np.isinf(pr.gap[2])
    np.testing.assert_allclose(pr.gap[[0, 1, 3]], [0.1, np.hypot(0.2, 0.1), 0.1], atol=1e-12)
    np.testing.assert_array_equal(pr.faces_master, [True, False, False, True])


@pytest.mark.parametrize("backend", _backends())
def test_flat_parallelogram_and_triangle_against_the_plane(backend):
    """Faces whose point is affine in the parameters (a sheared parallelogram quad and a
    triangle in a tilted plane) take the closest point inside them from their normal equations:
    against the plane's closed form (gap n.(p - x0), point p - gap n, the parameters mapping to
    that point through the shape functions of :func:`fesub.fe.face_shapes`), with no Newton
    iteration; a trapezoid (not affine) is still projected by Newton, as closely."""
    rot = np.linalg.qr(np.random.default_rng(7).standard_normal((3, 3)))[0]
    o = np.array([0.3, -0.2, 0.1])
    flat = {"quad": np.array([[0.0, 0.0], [1.0, 0.2], [1.4, 1.1], [0.4, 0.9]]),
            "triangle": np.array([[0.0, 0.0], [1.0, 0.1], [0.3, 0.8]]),
            "trapezoid": np.array([[0.0, 0.0], [1.0, 0.0], [0.8, 0.7], [0.2, 0.7]])}
    rng = np.random.default_rng(8)
    for name, xy in flat.items():
        k = len(xy)
        X = o + np.c_[xy, np.zeros(k)] @ rot.T
        ftype = "triangle" if k == 3 else "quad"
        # random points above and below the face's interior (convex combinations of its corners)
        w = rng.dirichlet(np.ones(k), 200)
        P = w @ X + rng.uniform(-0.05, 0.05, (200, 1)) * rot[:, 2]
        with _backend.use(backend):
            fs = FaceSet(X, np.arange(k)[None, :], ftype, reach=1.0)
            pr = fs.project(P)
        n = rot[:, 2]
        gap = (P - o) @ n
        # a face of unit size: its coordinates' round-off is ~1e-16 m
        np.testing.assert_allclose(pr.gap, gap, rtol=0, atol=1e-14)
        np.testing.assert_allclose(pr.point, P - gap[:, None] * n, rtol=0, atol=1e-14)
        np.testing.assert_allclose(np.abs(pr.normal @ n), 1.0, rtol=0, atol=1e-14)
        N = face_shapes(ftype, pr.param)[0]
        np.testing.assert_allclose(N @ X, pr.point, rtol=0, atol=1e-14)
        if name == "trapezoid":
            assert fs.newton_iterations > 0
        else:
            assert fs.newton_iterations == 0


@pytest.mark.parametrize("backend", _backends())
def test_refit_and_tracker_equal_a_fresh_build(backend):
    """A master deformed step by step: the refitted set answers as a set built afresh on the
    deformed nodes; a tracker over moving slaves answers the same and reuses its candidates."""
    n = 3 if backend == "python" else 6
    X0, F = _lattice(n), _wavy_faces(n, "quad8")
    rng = np.random.default_rng(11)
    m = 8 if backend == "python" else 60
    xy = rng.uniform(0.05, 0.95, (m, 2))
    S0 = np.c_[xy, _height(xy[:, 0], xy[:, 1]) + rng.uniform(-0.02, 0.03, m)]
    with _backend.use(backend):
        fs = FaceSet(X0, F, "quad8", reach=0.15, margin=0.0375)
        tr, tr_rows = fs.tracker(m), fs.tracker(m)
        rebuilt = 0
        for k in range(1, 9):
            u = 0.006 * k * np.c_[np.sin(4 * X0[:, 1]), np.cos(3 * X0[:, 0]), np.sin(5 * X0[:, 0] * X0[:, 1])]
            rebuilt += fs.refit(X0 + u)
            S = S0 + 0.002 * k * np.c_[np.cos(3 * S0[:, 1]), np.ones(m), -np.ones(m)]
            got, tracked = fs.project(S), tr.project(S)
            fresh = FaceSet(X0 + u, F, "quad8", reach=0.15).project(S)
            np.testing.assert_array_equal(got.face, fresh.face)
            np.testing.assert_array_equal(tracked.face, fresh.face)
            # the same query as its rows (what the 3D contact step reads): the same numbers
            iout, fout = tr_rows.project_rows(S)
            np.testing.assert_array_equal(np.where(iout[:, 0] >= 0, fs.order[np.maximum(iout[:, 0], 0)], -1),
                                          tracked.face)
            np.testing.assert_array_equal(iout[:, 2] == 1, tracked.off_surface)
            np.testing.assert_array_equal(fout[:, 5], tracked.gap)
            np.testing.assert_array_equal(fout[:, 6:15].reshape(-1, 3, 3),
                                          np.stack([tracked.normal, tracked.tangent1, tracked.tangent2], 1))
            for a, b in ((got, fresh), (tracked, fresh)):
                np.testing.assert_allclose(a.gap, b.gap, rtol=0, atol=1e-14)
                np.testing.assert_allclose(a.normal, b.normal, rtol=0, atol=1e-12)
                np.testing.assert_allclose(a.tangent1, b.tangent1, rtol=0, atol=1e-12)
    assert rebuilt >= 1  # the master moved by up to 0.048 m, beyond the padding (margin 0.0375 m)
    assert m < tr.searches < tr.queries  # first query searches all; later ones reuse some


def test_checks_name_the_problem():
    X = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2, 1, 0]], float)
    with pytest.raises(MeshError, match="oriented oppositely"):
        FaceSet(X, np.array([[0, 1, 2, 3], [1, 2, 5, 4]]), "quad")
    with pytest.raises(MeshError, match="zero area"):
        FaceSet(np.r_[X, [[3, 0, 0]]], np.array([[0, 1, 2, 3], [1, 4, 6, 4]]), "quad")
    with pytest.raises(MeshError, match="zero area"):  # collinear corners
        FaceSet(np.r_[X, [[3, 0, 0]]], np.array([[1, 4, 6]]), "tri3")
    with pytest.raises(MeshError, match="shared by 3 faces"):
        Y = np.r_[X, [[1, 0, 1], [1, 1, 1]]]
        FaceSet(Y, np.array([[0, 1, 2, 3], [1, 4, 5, 2], [1, 2, 7, 6]]), "quad")
    with pytest.raises(ParameterError, match="face type"):
        FaceSet(X, np.array([[0, 1, 2, 3]]), "quad5")
    with pytest.raises(ParameterError, match="outside"):
        FaceSet(X, np.array([[0, 1, 2, 9]]), "quad")
    with pytest.raises(ParameterError, match=r"\(m, 4\)"):
        FaceSet(X, np.array([[0, 1, 2]]), "quad4")
    fs = FaceSet(X, np.array([[0, 1, 2, 3], [1, 4, 5, 2]]), "quad", reach=0.3)
    with pytest.raises(ModelError, match="faces no master face"):
        fs.check_slaves([[0.5, 0.5, 2.0], [5.0, 5.0, 0.0]])
    with pytest.raises(ModelError, match="off the master's border"):
        fs.check_slaves([[2.1, 0.5, 0.05]])
    assert fs.check_slaves([[0.5, 0.5, 0.1], [9, 9, 9]]).faces_master.tolist() == [True, False]
    with pytest.raises(ParameterError, match="NaN"):
        fs.project([[0.0, np.nan, 0.0]])


@pytest.mark.parametrize("element,ftype", [("hexahedron", "quad"), ("tetra10", "triangle6"),
                                           ("wedge", "triangle")])
def test_from_mesh_node_set_and_surface_cells(element, ftype):
    """The top of a box from its node set: outward normals (+z), the gap of a node above it its
    height; surface cells given in either orientation pick the solid's outward faces."""
    mesh = box(1.0, 1.0, 0.5, 3, 3, 2, element=element)
    fs = FaceSet.from_mesh(mesh, "zmax", reach=0.5)
    assert FACE_TYPES[ftype][0] in fs.ftype
    P = np.array([[0.3, 0.4, 0.6], [0.7, 0.1, 0.45]])
    pr = fs.project(P)
    np.testing.assert_allclose(pr.gap, [0.1, -0.05], atol=1e-12)
    np.testing.assert_allclose(pr.normal, [[0, 0, 1], [0, 0, 1]], atol=1e-12)
    top = [b for b in solid_boundary_faces(mesh) if len(b)]
    cells = {}
    for b in top:
        on = np.isclose(mesh.points[b.nodes][:, :, 2], 0.5).all(axis=1)
        if on.any():
            flip = {"quad": [0, 3, 2, 1], "triangle": [0, 2, 1], "triangle6": [0, 2, 1, 5, 4, 3]}
            cells[b.face_type] = b.nodes[on][:, flip[b.face_type]]  # inward, as Gmsh may give them
    fs2 = FaceSet.from_mesh(mesh, cells, reach=0.5)
    np.testing.assert_allclose(fs2.project(P).gap, [0.1, -0.05], atol=1e-12)
    with pytest.raises(MeshError, match="no boundary face"):
        FaceSet.from_mesh(mesh, {"triangle": np.array([[0, 1, 2]])})


@pytest.mark.parametrize("backend", _backends())
def test_work_per_query_independent_of_the_face_count(backend):
    """The faces examined per query (the search's work, counted by the kernel) stay flat as the
    surface is refined 10x per side: O(1) per query (times are for benchmarks/)."""
    work = []
    for n in (8, 24) if backend == "python" else (10, 32, 100):
        x = np.linspace(0.0, 1.0, n + 1)
        X, Y = np.meshgrid(x, x, indexing="ij")
        pts = np.c_[X.ravel(), Y.ravel(), _height(X.ravel(), Y.ravel())]
        i, j = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
        quads = np.c_[i * (n + 1) + j, (i + 1) * (n + 1) + j, (i + 1) * (n + 1) + j + 1, i * (n + 1) + j + 1]
        rng = np.random.default_rng(2)
        xy = rng.uniform(0, 1, (300, 2))
        P = np.c_[xy, _height(xy[:, 0], xy[:, 1]) + rng.uniform(-0.2, 0.2, 300) / n]
        with _backend.use(backend):
            fs = FaceSet(pts, quads, "quad")
            pr = fs.project(P)
        assert (pr.face >= 0).all()
        work.append(fs.examined / len(P))
    # measured 3.4-3.7 faces per query from 100 to 10 000 faces (25 % allows the few faces
    # near the plate's border, whose share falls with n); a scan of every face grows 100x here
    assert max(work) < 6 and max(work) < 1.25 * min(work), work


def test_gmsh_physical_surface_of_the_bundled_bracket():
    """The bundled Gmsh bracket (tetra10): its physical surface 'tip' (the plane z = 40 mm) as a
    node set and as Gmsh surface cells gives the same triangle6 faces, normals out (+z); its
    'interface' lies inside the solid (between two volumes) and is refused."""
    from pathlib import Path

    import meshio

    from fesub.fe import read_solid, surface_cells

    path = str(Path(__file__).resolve().parents[1] / "meshes" / "bracket.msh")
    mesh = read_solid(path)
    a = FaceSet.from_mesh(mesh, "tip")
    b = FaceSet.from_mesh(mesh, surface_cells(meshio.read(path), "tip"))
    assert len(a) == len(b) > 0 and set(a.ftype) == {FACE_TYPES["triangle6"][0]}
    centre = mesh.points[mesh.nodes("tip")].mean(axis=0)
    P = centre + [[0.0, 0.0, 0.002], [0.001, 0.002, -0.001]]
    for fs in (a, b):
        pr = fs.project(P)
        np.testing.assert_allclose(pr.gap, [0.002, -0.001], atol=1e-15)
        np.testing.assert_allclose(pr.normal, [[0, 0, 1], [0, 0, 1]], atol=1e-12)
    with pytest.raises(MeshError, match="between two cells"):
        FaceSet.from_mesh(mesh, "interface")
