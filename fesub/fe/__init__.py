"""Finite elements on meshio meshes: meshes, materials (plane stress and plane strain), elements,
assembly, modal analysis, and matrices to and from other FE codes (MatrixMarket, Abaqus) in
``matrix_io``. Plane elements: Q4 (with or without incompatible modes) and T3 in ``elements``, the
quadratic Q8, Q9 and T6 in ``quadratic`` (meshio's quad8, quad9, triangle6; ``quadratic_mesh``
turns a linear mesh into a quadratic one); a mesh may mix cell types. Distributed edge loads
(force per length or pressure) in ``loads``.
Whole reduced models to all three formats in ``matrix_io``; Nastran OP4 in ``nastran``.
3D solids: ``solid_mesh`` (``SolidMesh``, ``box``, ``read_solid``), ``solid`` (8-node hexahedron
with or without incompatible modes, tetra, tetra10, wedge: ``solid_matrices``, ``solid_strains``),
``assembly3d`` (``solid_mesh_matrices``), material ``Solid``; face tractions and pressures
(``face_load``, ``solid_boundary_faces``, Gmsh ``surface_cells``) in ``face_loads``."""

from .assembly import DofMap, mesh_matrices, modes, rayleigh, rayleigh_ratio, solve_static  # noqa: F401
from .materials import BeamSection, PlaneStrain, PlaneStress, Solid  # noqa: F401
from .factor import SparseFactor, factorisations, factorize  # noqa: F401
from .mesh import Mesh, read  # noqa: F401
from .generators import beam_line, rectangle  # noqa: F401
from .quadratic import q8_matrices, q9_matrices, quadratic_mesh, t6_matrices  # noqa: F401
from .loads import edge_load  # noqa: F401
from .matrix_io import (ReducedModel, export_reduced_model, read_abaqus_matrix, read_matrix,  # noqa: F401
                        read_reduced_model, write_abaqus_matrix, write_matrix)
from .nastran import read_op4, write_op4  # noqa: F401
from .solid import solid_matrices, solid_strains  # noqa: F401
from .solid_mesh import SolidMesh, box, read_solid  # noqa: F401
from .assembly3d import SolidDofMap, solid_mesh_matrices  # noqa: F401
from .face_loads import SolidFaces, face_forces, face_load, solid_boundary_faces, surface_cells  # noqa: F401
