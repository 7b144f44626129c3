"""Solid meshes cut into substructures: the cells of one region as a mesh of its own.

A substructure model starts from a mesh of its own: :func:`submesh` takes some cells of a
:class:`fesub.fe.SolidMesh`, renumbers the nodes they use (in their original order) and keeps
the part of every node set that falls inside. :func:`read_volumes` reads a mesh file whose
cells carry physical volumes (Gmsh physical groups of dimension 3, read through meshio) and
returns the whole mesh with one sub-mesh per volume: a conforming mesh of several volumes
becomes several substructures whose nodes on a shared face coincide (ties by matching nodes).

Units: coordinates in m.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import MeshError
from ..fe.solid_mesh import SolidMesh, read_solid
from ..fe.solid_shapes import CELL_NODES

__all__ = ["submesh", "read_volumes"]


def submesh(mesh: SolidMesh, cells, *, source: str | None = None) -> SolidMesh:
    """The mesh of some cells of a solid mesh, its nodes renumbered.

    Parameters
    ----------
    mesh : fesub.fe.SolidMesh
        The whole mesh (coordinates in m).
    cells : dict
        Cell type -> selection of that block's cells: a boolean mask over the block or row
        indices. Types left out contribute no cells.
    source : str, optional
        Name of the new mesh (messages); default ``"<mesh source>[subset]"``.

    Returns
    -------
    fesub.fe.SolidMesh
        The selected cells over the nodes they use, numbered in their original order; every
        node set of ``mesh`` restricted to those nodes (sets left empty are dropped). Node ``i``
        of the new mesh is node ``np.unique(<selected connectivity>)[i]`` of ``mesh``.

    Raises
    ------
    MeshError
        If a type is not a block of ``mesh``, a selection is out of range, or nothing is
        selected.
    """
    picked = {}
    for ctype, sel in dict(cells).items():
        if ctype not in mesh.cells:
            raise MeshError(f"{mesh.source}: no {ctype!r} cells to select; the mesh has {sorted(mesh.cells)}")
        conn = mesh.cells[ctype]
        sel = np.asarray(sel)
        if sel.dtype == bool:
            if sel.shape != (len(conn),):
                raise MeshError(f"{mesh.source}: a mask over the {ctype} cells needs {len(conn)} entries, "
                                f"got shape {sel.shape}")
            rows = conn[sel]
        else:
            idx = np.atleast_1d(sel)
            if idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= len(conn)):
                raise MeshError(f"{mesh.source}: {ctype} cell indices must be integers in 0..{len(conn) - 1}")
            rows = conn[idx.astype(np.int64)]
        if len(rows):
            picked[ctype] = rows
    if not picked:
        raise MeshError(f"{mesh.source}: the selection holds no cell")
    used = np.unique(np.concatenate([c.ravel() for c in picked.values()]))
    new = np.full(mesh.n_points, -1, np.int64)
    new[used] = np.arange(used.size)
    sets = {}
    for name, nodes in mesh.node_sets.items():
        inside = new[nodes]
        if np.any(inside >= 0):
            sets[name] = inside[inside >= 0]
    return SolidMesh(mesh.points[used], {t: new[c] for t, c in picked.items()}, sets,
                     source=source or f"{mesh.source}[subset]")


def _volume_tags(m):
    """Per solid cell type, the physical volume tag of every cell of the merged block, and tag -> name."""
    phys = (m.cell_data or {}).get("gmsh:physical")
    if phys is None:
        raise MeshError("the mesh file carries no physical groups (gmsh:physical cell data); tag the "
                        "volumes in Gmsh with Physical Volume(\"name\") = {...}")
    tags: dict[str, list] = {}
    for b, block in enumerate(m.cells):
        if block.type in CELL_NODES:
            tags.setdefault(block.type, []).append(np.asarray(phys[b], np.int64))
    names = {}
    for name, val in (m.field_data or {}).items():
        val = np.asarray(val).ravel()
        if len(val) >= 2 and int(val[1]) == 3:
            names[int(val[0])] = name
    return {t: np.concatenate(v) for t, v in tags.items()}, names


def read_volumes(path, *, file_format: str | None = None):
    """Read a solid mesh and cut it along its physical volumes.

    Parameters
    ----------
    path : str or path-like
        Mesh file with physical volumes (Gmsh ``.msh``; coordinates in m), read by meshio.
    file_format : str, optional
        meshio format name, when the extension does not tell.

    Returns
    -------
    whole : fesub.fe.SolidMesh
        The whole mesh, as :func:`fesub.fe.read_solid` reads it.
    volumes : dict
        Volume name -> :class:`fesub.fe.SolidMesh` of its cells (:func:`submesh`), in the order
        of the volume tags; a volume without a name is called ``volume_<tag>``.

    Raises
    ------
    MeshError
        If the file cannot be read or carries no physical volumes.
    """
    from ..fe.mesh_files import meshio_read

    # read_solid checks the file and reports what meshio cannot read; the second read (cheap next
    # to assembling the mesh) gives the cell tags that a SolidMesh does not keep
    whole = read_solid(path, file_format=file_format)
    path = os.fspath(path)
    m = meshio_read(path, file_format=file_format)
    try:
        tags, names = _volume_tags(m)
    except MeshError as exc:
        raise MeshError(f"{path}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - tags a reader returned in a shape of its own
        raise MeshError(f"{path}: unreadable volume tags ({type(exc).__name__}: {exc})") from None
    volumes = {}
    for t in np.unique(np.concatenate(list(tags.values()))):
        name = names.get(int(t), f"volume_{int(t)}")
        sel = {ctype: tag == t for ctype, tag in tags.items() if np.any(tag == t)}
        volumes[name] = submesh(whole, sel, source=f"{path}[{name}]")
    return whole, volumes
