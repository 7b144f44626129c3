"""Finite elements on meshio meshes: meshes, materials, elements, assembly, modal analysis."""

from .assembly import DofMap, mesh_matrices, modes, rayleigh, rayleigh_ratio, solve_static  # noqa: F401
from .materials import BeamSection, PlaneStress  # noqa: F401
from .mesh import Mesh, beam_line, read, rectangle  # noqa: F401
