"""Harmonic balance with friction contact elements: analytic stiffness and Hessian, forced
responses, backbone curves (Lagrange-multiplier optimality system), dNNM and phase resonance."""
