"""Finite elements on meshio meshes: meshes, materials (plane stress and plane strain), elements,
assembly, modal analysis, and matrices to and from other FE codes (MatrixMarket, Abaqus) in
``matrix_io``. Plane elements: Q4 (with or without incompatible modes) and T3 in ``elements``, the
quadratic Q8, Q9 and T6 in ``quadratic`` (meshio's quad8, quad9, triangle6; ``quadratic_mesh``
turns a linear mesh into a quadratic one); a mesh may mix cell types. Distributed edge loads
(force per length or pressure) in ``loads``.
Whole reduced models to all three formats in ``matrix_io``; Nastran OP4 in ``nastran``."""

from .assembly import DofMap, mesh_matrices, modes, rayleigh, rayleigh_ratio, solve_static  # noqa: F401
from .materials import BeamSection, PlaneStrain, PlaneStress  # noqa: F401
from .factor import SparseFactor, factorisations, factorize  # noqa: F401
from .mesh import Mesh, beam_line, read, rectangle  # noqa: F401
from .quadratic import q8_matrices, q9_matrices, quadratic_mesh, t6_matrices  # noqa: F401
from .loads import edge_load  # noqa: F401
from .matrix_io import (ReducedModel, export_reduced_model, read_abaqus_matrix, read_matrix,  # noqa: F401
                        read_reduced_model, write_abaqus_matrix, write_matrix)
from .nastran import read_op4, write_op4  # noqa: F401
