"""Contact geometry and search: where a slave node meets a target surface; no dynamics here.

==============  ===================================================================================
``segments``    2D node-to-segment contact: :class:`SegmentSet` (a target surface prepared once,
                O(1) per query), :func:`find_segment` (one-off queries), :func:`project` and the
                coupling rows :func:`coupling_rows` of a slave on a segment (eqs. 34-44)
``faces``       3D node-to-face contact: :class:`FaceSet` (master faces tri3, quad4, tri6, quad8,
                quad9 checked and entered in a hashed uniform grid once, O(1) per query, refitted
                as the master deforms), the closest point by Newton's method on curved faces,
                its signed gap and local frame (:class:`FaceProjection`), the rule at edges
                and corners, :class:`SlaveTracker` (candidate faces kept within a margin)
==============  ===================================================================================

Units: SI (lengths in m).
"""

from .faces import FaceProjection, FaceSet, SlaveTracker
from .segments import SegmentSet, coupling_rows, find_segment, find_segment_brute, project, segment_at_x

__all__ = ["FaceSet", "FaceProjection", "SlaveTracker", "SegmentSet", "coupling_rows", "find_segment", "find_segment_brute", "project", "segment_at_x"]
