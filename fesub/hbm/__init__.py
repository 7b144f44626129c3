"""Harmonic balance of structures with friction contact elements.

A structure with contact elements is an :class:`HBSystem`
(``R(Q, w, alpha) = D(w) Q + F_nl(Q) - alpha F_ex``, analytic Jacobian and contact Hessian);
the analyses continue its periodic responses with the shared pseudo-arclength driver
:func:`fesub.continuation.continue_branch`. Ready-made systems are in :mod:`fesub.models`
(``fesub.models.build("jenkins_1dof")``).

Modules, by what a user does:

==============  ==============================================================================
``system``      :class:`HBSystem` (optional constant term, static preload ``fstatic``) and
                :class:`ContactElement` (a contact law placed on DOFs)
``contact``     the contact laws :class:`Jenkins` (1D) and :class:`StickSlipSeparation` (2D):
                harmonic forces, stiffness and Hessian by the event method or AFT
``friction3d``  :class:`Friction3D`: 3D node-to-node friction contact (penalty normal with
                preload, circular Coulomb slip) by AFT with the exact derivative of the discrete
                return map; :func:`evaluate_many` evaluates all elements in one compiled call
``preload``     :class:`BoltedJoint`: the static state of ``Friction3D`` contacts under bolt
                loads (:class:`Bolt`: a shank spring tightened to its pretension), the
                stuck-interface modes about it (:class:`PreloadState`) and the harmonic balance
                about that state
``interface``   :func:`interface_states` (:class:`InterfaceStates`): pressure, slip, opening
                and dissipation of every ``Friction3D`` contact over the period at points of a
                backbone
``cubic``       :class:`Cubic`: cubic (Duffing) stiffness ``f = k3 u^3``, placed like a contact law
``laws``        scalar laws ``f(u, v)`` evaluated by AFT, with the constant term:
                :class:`UnilateralContact` (penalty contact with a gap), :class:`RegularisedCoulomb`
                (tanh friction), :class:`UserLaw` (a Python function), base :class:`AFTLaw`
``fourier``     harmonic basis (optional constant term), interval integrals, harmonic amplitudes
``forced``      forced responses: :func:`solve_at`, :func:`solve_condensed` (one frequency),
                :func:`forced_response` (:class:`FRF`), :func:`frf_peak`,
                :func:`forced_response_record` (one response as a JSON-friendly record)
``backbone``    :func:`backbone` (:class:`Backbone`): the ridge of the forced responses, local or
                the global maximum in a frequency window; by default solved on the condensed
                harmonic balance when the contact, load and monitor DOFs are few
``condense``    :class:`CondensedSystem`: the harmonic balance condensed exactly onto those DOFs
                (dynamic stiffness per harmonic by the modes or a factorisation, with exact
                frequency derivatives), expanded back to every DOF
``optimality``  the optimality system underneath the backbone, :func:`backbone_point`
``newton``      the damped Newton method of the one-point solvers, tolerances relative to the
                rounding scale of the residual, :class:`NewtonStatus`
``ridges``      ridges traced one by one, the global checks and their upper envelope
``nnm``         :func:`phase_resonance` (:class:`PhaseResonance`), :func:`dnnm` (:class:`DNNM`),
                :func:`linear_modes`
``stability``   Hill's method: :func:`floquet` (:class:`Floquet`: exponents, multipliers, stable
                flag) of one solution, :func:`frf_stability` and :func:`backbone_stability`
                (:class:`Stability`: along a curve, folds / period doublings / Neimark-Sacker)
``timeint``     :func:`newmark`: time integration with an exact return mapping, to validate
                (the Jenkins and 2D elements by their affine states, :class:`Friction3D` by
                the step of ``step3d``: its own time-discrete law, solved by Newton);
                :func:`harmonics`: its last period in the layout of ``Q``
``ringdown``    :func:`ring_down` (:class:`RingDown`): the free decay from a point of a damped
                nonlinear mode, frequency and damping ratio read half-swing by half-swing;
                :func:`decay_prediction`: the decay the mode predicts by the energy balance
                between turning points (:func:`turning_energy`)
``plots``       figures of the study (imported on its own: ``from fesub.hbm import plots``)
==============  ==============================================================================

Units: SI throughout (forces in N, frequencies in rad/s, displacements in m).
"""

from .backbone import Backbone, backbone
from .condense import CondensedSystem
from .contact import ContactResult, Jenkins, StickSlipSeparation, force_history
from .cubic import Cubic
from .friction3d import Friction3D, evaluate_many, force_history_3d
from .forced import (FRF, forced_response, forced_response_record, frf_peak, solve_at,
                     solve_condensed)
from .laws import AFTLaw, RegularisedCoulomb, UnilateralContact, UserLaw
from .newton import NewtonStatus
from .nnm import DNNM, PhaseResonance, dnnm, linear_modes, phase_resonance
from .optimality import backbone_point
from .interface import InterfaceStates, interface_states
from .preload import Bolt, BoltedJoint, PreloadState
from .stability import Floquet, Stability, backbone_stability, floquet, frf_stability
from .system import ContactElement, HBSystem
from .timeint import TimeResult, fundamental, harmonics, initial_from_hb, newmark
from .ringdown import (
    DecayPrediction,
    RingDown,
    decay_prediction,
    decay_rates,
    ring_down,
    turning_energy,
)

__all__ = [
    # systems and contact laws
    "HBSystem", "ContactElement", "Jenkins", "StickSlipSeparation", "ContactResult",
    "force_history", "Friction3D", "evaluate_many", "force_history_3d", "Cubic", "UnilateralContact", "RegularisedCoulomb", "UserLaw", "AFTLaw",
    # bolt preload
    "Bolt", "BoltedJoint", "PreloadState", "InterfaceStates", "interface_states",
    # forced responses
    "FRF", "forced_response", "solve_at", "solve_condensed", "frf_peak", "forced_response_record",
    "NewtonStatus",
    # backbones
    "Backbone", "backbone", "backbone_point", "CondensedSystem",
    "PhaseResonance", "phase_resonance", "DNNM", "dnnm", "linear_modes",
    # stability (Hill's method)
    "Floquet", "floquet", "Stability", "frf_stability", "backbone_stability",
    # time integration
    "TimeResult", "newmark", "fundamental", "harmonics", "initial_from_hb",
    "RingDown", "ring_down", "decay_rates", "decay_prediction", "DecayPrediction",
    "turning_energy",
]
