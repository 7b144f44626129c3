"""Free-play oscillators: exact and sigmoid-smoothed dynamics, periodic orbits, continuation,
bifurcation diagrams and basins of attraction (two-mass system with a soft symmetric gap).

Modules: :mod:`.laws` (force laws, admissibility, radius of influence), :mod:`.system` (parameters,
vector fields), :mod:`.integrate` (adaptive references, event-driven), :mod:`.batch` (compiled
fixed-step batch integrator, parallel), :mod:`.orbits` (shooting, Floquet), :mod:`.continuation`
(branches in the forcing frequency, backbones), :mod:`.analysis` (bifurcation diagrams, basins),
:mod:`.plots`, :mod:`.cli`.
"""

from .analysis import (PAPER_ICS, BasinResult, BifurcationResult, basin_point, basins,  # noqa: F401
                       bifurcation_diagram, bifurcation_point, classify, period_of)
from .batch import BatchResult, batch_parallel, batch_periodic  # noqa: F401
from .integrate import FlowResult, flow  # noqa: F401
from .laws import (SIGMOIDS, FreePlay, SigmoidFreePlay, check_sigmoid,  # noqa: F401
                   delta_for_radius, influence_constant, radius_of_influence,
                   radius_of_influence_closed_form, spurious_force_peak, vector_field_error)
from .orbits import Orbit, floquet_test_functions, periodic_orbit, poincare_map  # noqa: F401
from .system import P_REF, PRESETS, FreePlayParams, TwoMassFreePlay, get_params  # noqa: F401
