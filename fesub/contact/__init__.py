"""Sliding frictional contact between substructures.

Two Craig-Bampton substructures, a slider driven along the target surface and the target, in
node-to-segment contact with Coulomb friction (the seed paper's sliding system, its transient and
its stability analyses, undeformed and deformed); and the general system of any number of reduced
bodies whose many contact nodes stick, slip and separate (``multibody``). The package face
(``fesub.contact.NAME``) is the two systems, their transients and the contact geometry; the
analyses are imported from their modules.

Modules, by what a user does:

===================  ==========================================================================
``system``           :class:`SlidingContactSystem`: the two reduced substructures, the target surface,
                     output channels, static equilibrium and the contact rows B_E, B_C
``transient``        :func:`simulate` (:class:`TransientResult`): the sliding transient, its argument
                     checks, time step and signals
``march``            the forward-increment march underneath: modal (compiled kernel) and dense
``geometry``         node-to-segment search (:class:`SegmentSet`: a target surface prepared once, O(1)
                     per query; :func:`find_segment` for one-off queries), :func:`project` and the
                     coupling rows :func:`coupling_rows` (eqs. 34-44)
``eigen``            complex eigenvalues over the contact positions, stability maps, critical mu
``primal``           null-space bases of a contact row and the primal projection L_E' X L_C in O(n^2)
``secular``          the same eigenvalues as the certified roots of the secular function over the
                     substructure modes (Aberth-Ehrlich, warm-started along the positions): the
                     default of the loci, the map and the critical mu for the whole reduced model
``deformed``         stability of the deformed sliding state: :func:`sliding_state` (Newton, nonlinear
                     contact), :func:`deformed_eigenvalues` (rows linearised about it, geometric
                     stiffness), :func:`compare_geometries` (deformed vs undeformed along the path)
``bursts``           bursts of a transient signal (:func:`detect_bursts`: band-limited envelopes,
                     growth rate fitted to the rise) and the analyses that predict them
                     (:func:`attribute`, :class:`BurstTable`)
``perturb``          a small perturbation of the sliding state in the transient
                     (:func:`perturbation_response`) and :func:`matrix_pencil` pole fits
``receptance``       FRFs at a frozen contact position: modal receptances of each substructure,
                     LM-FBS coupling (eq. 45), the primal check
``frf``              the time-dependent FRF along the sliding path (``TDFRFResult``)
``plots``            figures of the study (imported on its own: ``from fesub.contact import plots``)
``multibody``        the general system: :class:`Body` (matrices, Substructure or Craig-Bampton;
                     prescribed motion, loads) and :class:`MultibodyModel` (any number of bodies in
                     their free modes, tied bodies assembled, driven bodies marched relative to
                     their drives' quasi-static motion)
``interface``        :class:`ContactInterface` (many slave nodes on master segments, Coulomb
                     friction) and :class:`TiedInterface` (bonded nodes)
``stepper``          :func:`simulate_multibody`: forward-increment steps over the friction-contact
                     kernel, nodes that stick, slip and separate; ``stepper_compiled`` its step
                     loop in chunks of the compiled ``multibody`` kernel (the default)
``nodal``            :class:`ContactRunResult`: per-node forces, gaps, slips and states, channels,
                     energies of a multibody run
``plots_multibody``  figures of a multibody run: contact-state map, node force distributions,
                     friction force against drag, friction and normal force against time, energy
                     balance
===================  ==========================================================================

Units: SI throughout (forces in N, lengths in m, times in s, frequencies in Hz or rad/s as named).
"""

from .geometry import SegmentSet, coupling_rows, find_segment, project  # noqa: F401
from .system import SlidingContactSystem  # noqa: F401
from .transient import TransientResult, simulate  # noqa: F401
from .interface import ContactInterface, TiedInterface  # noqa: F401
from .multibody import Body, MultibodyModel  # noqa: F401
from .nodal import ContactRunResult  # noqa: F401
from .stepper import simulate_multibody  # noqa: F401

__all__ = ["SlidingContactSystem", "TransientResult", "simulate", "coupling_rows", "find_segment", "project",
           "SegmentSet", "Body", "MultibodyModel", "ContactInterface", "TiedInterface", "simulate_multibody",
           "ContactRunResult"]
