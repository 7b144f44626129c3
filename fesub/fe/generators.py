"""Generators of structured meshes: :func:`rectangle` (Q4, T3, Q8, Q9 or T6 cells with named
boundary sets) and :func:`beam_line` (two-node frame elements). Coordinates in m."""

from __future__ import annotations

import numpy as np

from ..errors import MeshError, check_count, check_positive
from .mesh import Mesh
from .quadratic import quadratic_mesh

__all__ = ["rectangle", "beam_line"]


def rectangle(length: float, height: float, nx: int, ny: int, *, origin=(0.0, 0.0),
              angle: float = 0.0, element: str = "quad") -> Mesh:
    """Structured mesh of a rectangle ``length x height`` (m) with ``nx x ny`` divisions.

    The rectangle's local x axis is rotated by ``angle`` (rad, anticlockwise) about its
    lower-left corner, which is placed at ``origin``. ``element='triangle'`` splits each quad
    into two T3; ``quad8``, ``quad9`` and ``triangle6`` add the mid-edge (and centre) nodes of
    :func:`fesub.fe.quadratic.quadratic_mesh`. Named sets (local orientation): node and edge sets ``bottom``, ``top``, ``left``,
    ``right``; one-node sets ``bottom_left``, ``bottom_right``, ``top_left``, ``top_right``.
    Edge sets run in the direction of increasing local x (bottom/top) or y (left/right).

    Parameters
    ----------
    length, height : float
        Sides of the rectangle along its local x and y (m), > 0.
    nx, ny : int
        Divisions along the local x and y (-), >= 1.
    origin : tuple of float
        Position of the lower-left corner (m).
    angle : float
        Rotation of the local x axis, anticlockwise (rad).
    element : str
        ``"quad"`` (Q4), ``"triangle"`` (two T3 per quad), ``"quad8"``, ``"quad9"`` or
        ``"triangle6"``.

    Returns
    -------
    Mesh
        Plane mesh, coordinates in m, with the named sets above.
    """
    length = check_positive("length", length, error=MeshError)
    height = check_positive("height", height, error=MeshError)
    for name, v in (("length", length), ("height", height)):
        if v > 1e100:  # see Mesh.check: areas of larger cells overflow
            raise MeshError(f"{name} must be below 1e100 m, got {v:.3g} m (units not in metres?)")
    # 1e8 cells is ~20 GB of assembled matrices: beyond it, a typo more likely than a model
    nx = check_count("nx", nx, 1, 10**8, error=MeshError)
    ny = check_count("ny", ny, 1, 10**8 // nx, error=MeshError)
    if element not in ("quad", "triangle", "quad8", "quad9", "triangle6"):
        raise MeshError(f"element must be 'quad', 'triangle', 'quad8', 'quad9' or 'triangle6', got {element!r}")
    xs = np.linspace(0.0, length, nx + 1)
    ys = np.linspace(0.0, height, ny + 1)
    X, Y = np.meshgrid(xs, ys)  # row j = y index
    pts = np.column_stack([X.ravel(), Y.ravel()])
    nid = np.arange((nx + 1) * (ny + 1)).reshape(ny + 1, nx + 1)
    q = np.column_stack([nid[:-1, :-1].ravel(), nid[:-1, 1:].ravel(),
                         nid[1:, 1:].ravel(), nid[1:, :-1].ravel()])
    cells = {"quad": q} if element.startswith("quad") else {
        "triangle": np.vstack([q[:, [0, 1, 2]], q[:, [0, 2, 3]]])}
    bottom, top = nid[0, :], nid[-1, :]
    left, right = nid[:, 0], nid[:, -1]
    sets = {"bottom": bottom, "top": top, "left": left, "right": right,
            "bottom_left": [nid[0, 0]], "bottom_right": [nid[0, -1]],
            "top_left": [nid[-1, 0]], "top_right": [nid[-1, -1]]}
    pair = lambda a: np.column_stack([a[:-1], a[1:]])  # noqa: E731
    edges = {"bottom": pair(bottom), "top": pair(top), "left": pair(left), "right": pair(right)}
    mesh = Mesh(pts, cells, sets, edges, source=f"rectangle({length}, {height}, {nx}, {ny})")
    if element not in ("quad", "triangle"):
        mesh = quadratic_mesh(mesh, quad=element if element != "triangle6" else "quad8")
    return mesh.transformed(angle=angle, origin=(0.0, 0.0), translate=origin)


def beam_line(start, end, n: int) -> Mesh:
    """A straight line of ``n`` two-node frame elements from ``start`` to ``end`` (m).

    Node sets ``start``, ``end`` and ``all``.

    Parameters
    ----------
    start, end : array_like of 2 floats
        Coordinates (x, y) of the two ends (m); they must differ.
    n : int
        Number of elements (-), >= 1.

    Returns
    -------
    Mesh
        ``n + 1`` equally spaced nodes (coordinates in m) and ``n`` ``line`` cells.
    """
    if int(n) != n or n < 1:
        raise MeshError(f"n must be an integer >= 1, got {n!r}")
    n = int(n)
    a, b = np.asarray(start, float), np.asarray(end, float)
    if np.linalg.norm(b - a) <= 0:
        raise MeshError("beam_line: start and end coincide")
    t = np.linspace(0.0, 1.0, n + 1)[:, None]
    pts = a + t * (b - a)
    conn = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    return Mesh(pts, {"line": conn}, {"start": [0], "end": [n], "all": np.arange(n + 1)},
                source=f"beam_line({n})")
