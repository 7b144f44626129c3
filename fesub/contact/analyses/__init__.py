"""Analyses of a sliding contact: linearised sliding states and what they predict.

=================  =================================================================================
``eigen``          complex eigenvalues over the contact positions (loci), stability maps, critical mu
``secular``        the same eigenvalues as certified roots of the secular function (Aberth-Ehrlich)
``primal``         null-space bases of a contact row and the primal projection L_E' X L_C
``deformed``       the deformed sliding state (Newton) and its eigenvalues (rows linearised about it)
``contact_terms``  the contact forces and constraints of the closed nodes of a multibody model
                   (sliding or sticking) and their derivatives: geometric stiffness, friction
                   follower terms, the slope of a velocity-dependent law
``steady``         the steady sliding state of a multibody model, plane or solid (many nodes open,
                   sticking or sliding), by Newton's method on the active set
``linearised``     the equations linearised about it and their eigenvalues (primal projection on
                   null-space bases by elimination)
``linearised3d``   the node-to-surface terms for solid bodies: the contact point on curved faces, the
                   sliding direction in the tangent plane and its damping mu lambda_n / v across it
``band``           every eigenvalue in a frequency band (shift-invert Arnoldi, several shifts) with
                   an argument-principle count that none is missed
``mode_coupling``  eigenvalues over mu (all, or those of a band) and the critical mu of each pair;
                   the textbook 2-DOF belt model on the engine
``perturb``        a small perturbation of the sliding state in the transient, matrix-pencil pole fits
``receptance``     FRFs at a frozen contact position (modal receptances, LM-FBS coupling)
``frf``            the time-dependent FRF along the sliding path
``bursts``         bursts of a transient signal and the analyses that predict them
=================  =================================================================================

The modules are imported on their own (``from fesub.contact.analyses import eigen``).
Units: SI (frequencies in Hz or rad/s as named).
"""
