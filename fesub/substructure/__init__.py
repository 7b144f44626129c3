"""Substructures, Craig-Bampton reduction, primal and dual assembly."""

from .craig_bampton import CraigBampton  # noqa: F401
from .substructure import Substructure  # noqa: F401
