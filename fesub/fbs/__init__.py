"""Frequency-based substructuring: FRF matrices of substructures coupled, decoupled, transformed.

Works on FRFs, whether computed from a model or measured, independently of the sliding-contact
core (which couples its two beams by the same formula internally).

==========  ===================================================================================
``frf``     :class:`FRFMatrix` (FRFs labelled by node and direction, saved through fesub.io),
            :func:`frf_from_matrices` (receptances of a K, M, C model by direct solution)
``lmfbs``   :func:`couple` and :func:`decouple` (Lagrange-multiplier FBS with a signed Boolean
            interface, optional truncated-SVD regularisation), :func:`lmfbs` on raw arrays
``vpt``     virtual-point transformation of channels on a stiff interface:
            :func:`interface_modes`, :func:`virtual_point_frf`, :func:`consistency`
``uff``     :func:`read_uff58` / :func:`write_uff58` (Universal File Format, data set 58)
==========  ===================================================================================

Start with :func:`frf_from_matrices` (or :func:`read_uff58`) for each substructure, then
:func:`couple`. Units: SI (receptance in m/N, frequency in Hz).
"""

from .frf import FRF_UNITS, FRFMatrix, dof_label, frf_from_matrices
from .lmfbs import couple, decouple, interface_matrix, lmfbs
from .uff import read_uff58, write_uff58
from .vpt import consistency, interface_modes, reduction_matrix, virtual_point_frf

__all__ = ["FRFMatrix", "frf_from_matrices", "FRF_UNITS", "dof_label",
           "couple", "decouple", "lmfbs", "interface_matrix",
           "interface_modes", "reduction_matrix", "virtual_point_frf", "consistency",
           "read_uff58", "write_uff58"]
