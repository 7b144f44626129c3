"""Contact geometry and search: where a slave node meets a target surface; no dynamics here.

==============  ===================================================================================
``segments``    2D node-to-segment contact: :class:`SegmentSet` (a target surface prepared once,
                O(1) per query), :func:`find_segment` (one-off queries), :func:`project` and the
                coupling rows :func:`coupling_rows` of a slave on a segment (eqs. 34-44)
==============  ===================================================================================

Units: SI (lengths in m).
"""

from .segments import SegmentSet, coupling_rows, find_segment, find_segment_brute, project, segment_at_x

__all__ = ["SegmentSet", "coupling_rows", "find_segment", "find_segment_brute", "project", "segment_at_x"]
