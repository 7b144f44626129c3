"""Sliding frictional contact between substructures."""

from .geometry import coupling_rows, find_segment, project  # noqa: F401
from .transient import SlidingContactSystem, TransientResult, simulate  # noqa: F401
