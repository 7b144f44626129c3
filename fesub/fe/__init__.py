"""Finite elements on meshio meshes: meshes, materials, elements, assembly, modal analysis, and
matrices to and from other FE codes (MatrixMarket, Abaqus) in ``matrix_io``.
Whole reduced models to all three formats in ``matrix_io``; Nastran OP4 in ``nastran``."""

from .assembly import DofMap, mesh_matrices, modes, rayleigh, rayleigh_ratio, solve_static  # noqa: F401
from .materials import BeamSection, PlaneStrain, PlaneStress  # noqa: F401
from .factor import SparseFactor, factorisations, factorize  # noqa: F401
from .mesh import Mesh, beam_line, read, rectangle  # noqa: F401
from .matrix_io import (ReducedModel, export_reduced_model, read_abaqus_matrix, read_matrix,  # noqa: F401
                        read_reduced_model, write_abaqus_matrix, write_matrix)
from .nastran import read_op4, write_op4  # noqa: F401
