"""The sliding system of two reduced substructures: a slider driven along a target surface, one
slave node in node-to-segment contact with Coulomb friction (the beam-on-beam benchmark's system).

===============  ==================================================================================
``system``       :class:`SlidingContactSystem`: the two reduced substructures, the target surface,
                 output channels, static equilibrium and the contact rows B_E, B_C; the same
                 system as a model on the contact engine (:meth:`~SlidingContactSystem.multibody_model`)
``transient``    :func:`simulate` (:class:`TransientResult`): the sliding transient, the system
                 marched on the contact engine, with the seed method's signals and stops
``plots``        figures of the study (imported on its own)
===============  ==================================================================================

Units: SI (forces in N, lengths in m, times in s).
"""

from .system import SlidingContactSystem
from .transient import TransientResult, simulate

__all__ = ["SlidingContactSystem", "TransientResult", "simulate"]
