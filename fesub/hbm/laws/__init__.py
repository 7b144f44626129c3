"""Scalar contact laws ``f(u, v)`` for harmonic balance, evaluated by AFT, with the constant term.

Each law acts on one relative coordinate (``u`` m, ``v = du/dt`` m/s) of a
:class:`fesub.hbm.ContactElement` and says whether it is odd (``symmetric``); an asymmetric law
makes :class:`fesub.hbm.HBSystem` take the constant term by default.

================  =============================================================================
``aft``           :class:`AFTLaw` (the base: harmonic force, stiffness, Hessian, ``dF/dw``),
                  :class:`LawResult`
``unilateral``    :class:`UnilateralContact`: penalty contact with a gap, ``k_p max(u - g, 0)``
``regularised``   :class:`RegularisedCoulomb`: ``mu N tanh(v / v_eps)``
``user``          :class:`UserLaw`: a Python function ``f(u, v)`` (derivatives optional)
================  =============================================================================
"""

from .aft import AFTLaw, LawResult
from .regularised import RegularisedCoulomb
from .unilateral import UnilateralContact
from .user import UserLaw

__all__ = ["AFTLaw", "LawResult", "UnilateralContact", "RegularisedCoulomb", "UserLaw"]
