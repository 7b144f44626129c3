"""The contact engine: any number of reduced bodies whose contact nodes stick, slip and separate,
marched by forward increments (central differences, the frictional contact problem per step).

==================  =================================================================================
``bodies``          :class:`Body` (matrices, Substructure or Craig-Bampton, plane (x, y) or solid (x,
                    y, z); prescribed motion, loads)
                    and :class:`MultibodyModel` (bodies in their free modes, tied bodies assembled,
                    driven bodies marched relative to their drives' quasi-static motion, an
                    optional modal cut-off)
``nodes``           :class:`~.nodes.NodeRows`: node displacements over the modal coordinates
``interfaces``      :class:`ContactInterface` (slave nodes on master segments, a friction law per
                    node, the frame's geometry) and :class:`TiedInterface` (bonded nodes)
``contacts``        :class:`~.contacts.InterfaceState`: an interface in a step (search in the
                    deformed, undeformed or frozen frame, rows, close of the step)
``surfaces``        :class:`ContactInterface3D`: slave nodes of a solid body on master faces of
                    another (tri3, quad4, tri6, quad8, quad9), one friction law per node
``contacts3d``      :class:`~.contacts3d.InterfaceState3D`: a 3D interface in a step (search
                    through the faces' grid and a slave tracker, rows n, t1, t2, close of the
                    step) and :func:`~.contacts3d.contact_step3d` (the step's problem on the
                    friction cone, block Gauss-Seidel of the ``cone`` kernel; Python step loop)
``stepper``         :func:`simulate_multibody`: the step loop, over the friction-contact kernel
                    (solid bodies: over the ``cone`` kernel, in Python)
``driver``          the step loop in chunks of the compiled ``multibody`` kernel (the default)
``results``         :class:`ContactRunResult`: per-node forces, gaps, slips, states, channels, energies
``friction``        friction laws: :class:`~.friction.Coulomb`, :class:`~.friction.StaticKinetic`,
                    :class:`~.friction.Stribeck` (velocity weakening), :class:`~.friction.UserLaw`
                    (a Python callable); :func:`~.friction.law_arrays` encodes one law per node
``laws2d``          one step's contact problem of the Python step loop with laws beyond one
                    coefficient (each node exactly, through the ``cone`` kernel)
``cone``            the exact friction cone of a 3D node (normal and two tangents):
                    :func:`~.cone.solve_cone`, :func:`~.cone.solve_cones` (many independent nodes),
                    :func:`~.cone.solve_coupled` (block Gauss-Seidel), over the ``cone`` kernel
``plots``           figures of a run: contact-state map, node forces, friction against drag, friction
                    and normal force against time, energies; pressure and state maps over a 3D
                    contact face
``surface_series``  the deformed surfaces of a 3D run (:class:`~.surface_series.RunSurface`): a
                    ParaView time series (``.pvd`` of VTU files) with contact pressure, slip and
                    state fields, and an off-screen animation (pyvista)
==================  =================================================================================

Units: SI (forces in N, lengths in m, times in s).
"""

from .bodies import Body, MultibodyModel
from .interfaces import ContactInterface, TiedInterface
from .surfaces import ContactInterface3D
from .results import ContactRunResult
from .stepper import simulate_multibody

__all__ = ["Body", "MultibodyModel", "ContactInterface", "ContactInterface3D", "TiedInterface", "ContactRunResult", "simulate_multibody"]
