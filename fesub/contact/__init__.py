"""Sliding frictional contact between substructures.

Any number of reduced bodies whose contact nodes stick, slip and separate, marched by one
forward-increment engine (``engine``); the seed paper's sliding system (a slider driven along a
target, one slave node), a model on that engine, with its transient and its stability analyses,
undeformed and deformed. The package
face (``fesub.contact.NAME``) is the two systems, their transients and the contact geometry; the
analyses are imported from their modules.

Subpackages, by what a user does:

================  =============================================================================
``geometry``      where a slave meets a target: node-to-segment search in 2D (:class:`SegmentSet`,
                  :func:`find_segment`), :func:`project`, the coupling rows :func:`coupling_rows`;
                  node-to-face search in 3D (:class:`FaceSet`: closest points on curved faces,
                  gaps and local frames, a hashed grid refitted as the master deforms)
``engine``        the contact engine: :class:`Body`, :class:`MultibodyModel` (``bodies``; driven
                  bodies marched relative to their drives' quasi-static motion),
                  :class:`ContactInterface`, :class:`TiedInterface` (``interfaces``),
                  :class:`ContactInterface3D` (``surfaces``: node-to-surface between solid
                  bodies, the friction cone per node; ``contacts3d`` its per-step state),
                  :func:`simulate_multibody` (``stepper``; ``contacts`` the per-step state of an
                  interface: search, rows, close of the step; ``driver`` its compiled step loop),
                  :class:`ContactRunResult` (``results``), figures of a run (``plots``: contact
                  states, node forces, friction against drag and time, energy balance);
                  friction laws :class:`Coulomb`, :class:`StaticKinetic`, :class:`Stribeck`,
                  :class:`UserLaw` (``friction``); the exact 3D friction cone of a node,
                  :func:`solve_cone`, of many, :func:`solve_cones`, and of coupled nodes by
                  block Gauss-Seidel, :func:`solve_coupled` (``cone``)
``sliding``       the seed paper's system: :class:`SlidingContactSystem` (``system``), its
                  transient :func:`simulate` (``transient``, a model on the engine), its
                  figures (``plots``)
``analyses``      linearised sliding states: eigenvalue loci, maps and critical mu (``eigen``),
                  secular roots (``secular``), the primal projection (``primal``), the deformed
                  state (``deformed``), perturbations (``perturb``), FRFs at a frozen position
                  (``receptance``) and along the path (``frf``), bursts (``bursts``); the
                  steady sliding state of a multibody model with many contact nodes
                  (``steady``) and its linearisation (``linearised``), eigenvalues over mu
                  (``mode_coupling``)
================  =============================================================================

Units: SI throughout (forces in N, lengths in m, times in s, frequencies in Hz or rad/s as named).
"""

from .geometry import FaceSet, SegmentSet, coupling_rows, find_segment, project  # noqa: F401
from .sliding.system import SlidingContactSystem  # noqa: F401
from .sliding.transient import TransientResult, simulate  # noqa: F401
from .engine.interfaces import ContactInterface, TiedInterface  # noqa: F401
from .engine.surfaces import ContactInterface3D  # noqa: F401
from .engine.bodies import Body, MultibodyModel  # noqa: F401
from .engine.results import ContactRunResult  # noqa: F401
from .engine.stepper import simulate_multibody  # noqa: F401
from .engine.friction import Coulomb, StaticKinetic, Stribeck, UserLaw  # noqa: F401
from .engine.cone import ConeSolution, solve_cone, solve_cones, solve_coupled  # noqa: F401

__all__ = ["SlidingContactSystem", "TransientResult", "simulate", "coupling_rows", "find_segment", "project",
           "SegmentSet", "FaceSet", "Body", "MultibodyModel", "ContactInterface", "TiedInterface", "simulate_multibody",
           "ContactInterface3D",
           "ContactRunResult", "Coulomb", "StaticKinetic", "Stribeck", "UserLaw", "ConeSolution", "solve_cone",
           "solve_cones", "solve_coupled"]
