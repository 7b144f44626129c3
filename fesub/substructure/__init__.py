"""Substructures, Craig-Bampton reduction, primal and dual assembly.

========================  ==========================================================================
``Substructure``          FE matrices of a mesh with clamps, DOF lookup by node set (substructure.py)
``CraigBampton``          reduced model: fixed- or free-interface, ``method="factored"`` (default)
                          or the textbook ``"reference"`` (craig_bampton.py)
``FixedInterfaceBasis``   the factored fixed-interface reduction: one factor of K_ii, implicit T
                          (fixed_interface.py)
========================  ==========================================================================
"""

from .craig_bampton import CraigBampton  # noqa: F401
from .fixed_interface import FixedInterfaceBasis  # noqa: F401
from .substructure import Substructure  # noqa: F401

__all__ = ["CraigBampton", "FixedInterfaceBasis", "Substructure"]
