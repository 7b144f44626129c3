"""Free-play oscillators: exact and sigmoid-smoothed dynamics, periodic orbits, continuation,
bifurcation diagrams and basins of attraction (two-mass system with a soft symmetric gap).

Modules: :mod:`.laws` (force laws, sigmoid admissibility, radius of influence), :mod:`.system`
(parameters, vector fields), :mod:`.integrate` (adaptive SciPy references, event-driven for the
exact law), :mod:`.batch` (compiled fixed-step batch RK4, parallel on any executor),
:mod:`.orbits` (shooting, monodromy, Floquet), :mod:`.branches` (continuation in the forcing
frequency with fesub.continuation, bifurcation test functions, backbones), :mod:`.analysis`
(bifurcation diagrams, basins computed in blocks of rows, sweep-engine entry points),
:mod:`.plots`; the command is ``fesub freeplay`` (:mod:`fesub.cli.freeplay`).

Results (:class:`BasinResult`, :class:`BasinCells`, :class:`BifurcationResult`, :class:`Orbit`,
:class:`OrbitBranch`, :class:`Backbone`) follow the result protocol of :mod:`fesub.io`
(``save``/``fesub.load``, ``to_xarray`` with units). The model is non-dimensional; with the
reference scales 1 m, 1 rad/s and 1 kg its numbers are SI numbers, and the results carry those
units (displacement m, velocity m/s, frequency rad/s, force N).

Choices and corrections (see also the module docstrings):

* Parameters: the provisional set :data:`P_REF` (the paper's Table 2 is not in the source).
* Eq. 7 of the paper is misprinted (``1 - exp``); the logistic ``2/(1 + exp(-delta x)) - 1`` is
  implemented and the printed form is rejected as non-admissible.
* Radius of influence: Eq. 10 by quadrature, and the closed form ``R_i = U*/delta``.
* Saltation matrix = identity for the exact law (continuous vector field): no jump terms in the
  monodromy; checked against finite differences.
* Forcing phase: t0 = 0, ``Q cos(W t)`` (4-D form); the 6-D (u, v) form is available.
* Basin classification: signature (period from stroboscopic recurrence, max x1, min x1), clustered
  with a 1e-3 tolerance; non-periodic cells get label -1, diverged cells -2.
* Bifurcation diagram: section x1' = 0 keeps maxima and minima by default (``section_dir=0``).
"""

from .analysis import (PAPER_ICS, BasinCells, BasinResult, BifurcationResult,  # noqa: F401
                       assemble_basin, basin_cells, basin_grid, basin_point, basins,
                       bifurcation_diagram, bifurcation_point, classify, period_of, tile_bounds)
from .branches import Backbone, OrbitBranch, backbone, continue_orbit, orbit_branch  # noqa: F401
from .batch import BatchResult, batch_parallel, batch_periodic  # noqa: F401
from .integrate import FlowResult, flow  # noqa: F401
from .laws import (SIGMOIDS, FreePlay, SigmoidFreePlay, check_sigmoid,  # noqa: F401
                   delta_for_radius, influence_constant, radius_of_influence,
                   radius_of_influence_closed_form, spurious_force_peak, vector_field_error)
from .orbits import Orbit, floquet_test_functions, periodic_orbit, poincare_map  # noqa: F401
from .system import P_REF, PRESETS, FreePlayParams, TwoMassFreePlay, get_params  # noqa: F401
