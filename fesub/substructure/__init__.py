"""Substructures, Craig-Bampton reduction, primal and dual assembly.

========================  ==========================================================================
``Substructure``          FE matrices of a plane, frame or 3D solid mesh with clamps, DOF lookup by
                          node set (substructure.py)
``CraigBampton``          reduced model: fixed- or free-interface, ``method="factored"`` (default)
                          or the textbook ``"reference"`` (craig_bampton.py)
``FixedInterfaceBasis``   the factored fixed-interface reduction: one factor of K_ii, implicit T
                          (fixed_interface.py)
``Interface``             a tie between node sets of two substructures: matching nodes (2D or 3D),
                          or node-to-surface or mortar on non-matching plane meshes (assembly.py)
``SubstructureAssembly``  N substructures (full, Craig-Bampton or matrices) tied: constraint rows B,
                          dual and primal (u = L v) forms, coupled modes, export as a contact Body
                          (assembly.py)
``CoupledModes``          result: frequencies and mode shapes on each substructure (coupled_modes.py)
``parts``                 one face for the substructures of an assembly (full, Craig-Bampton,
                          matrices): matrices, nodes, node -> coordinate map
``submesh``               the cells of part of a solid mesh as a mesh of its own (volumes.py)
``read_volumes``          a solid mesh file cut along its physical volumes, one mesh each
                          (volumes.py)
``reduction``             Craig-Bampton reductions of several parts (``PartSpec``,
                          ``reduce_parts``): on a process pool or a Dask cluster, cached on disk
                          by a content key (``ReducedPart``, a fesub result)
``ties``                  node pairing, node-to-surface weights, mortar rows, sparse null space of
                          tie rows
========================  ==========================================================================
"""

from .assembly import Interface, SubstructureAssembly  # noqa: F401
from .coupled_modes import CoupledModes  # noqa: F401
from .craig_bampton import CraigBampton  # noqa: F401
from .fixed_interface import FixedInterfaceBasis  # noqa: F401
from .reduction import PartSpec, ReducedPart, reduce_parts  # noqa: F401
from .substructure import Substructure  # noqa: F401
from .volumes import read_volumes, submesh  # noqa: F401

__all__ = ["CraigBampton", "FixedInterfaceBasis", "Substructure", "Interface", "SubstructureAssembly",
           "CoupledModes", "submesh", "read_volumes", "PartSpec", "ReducedPart", "reduce_parts"]
