"""Free-play oscillators: exact and sigmoid-smoothed dynamics, periodic orbits, continuation,
bifurcation diagrams and basins of attraction (two-mass system with a soft symmetric gap).

Modules, from the model up:

* :mod:`.laws` -- free-play force laws (exact and sigmoid-smoothed), sigmoid admissibility,
  radius of influence;
* :mod:`.system` -- parameters (:class:`FreePlayParams`, :data:`P_REF`) and vector fields
  (:class:`TwoMassFreePlay`);
* :mod:`.integrate` -- adaptive SciPy reference flows, event-driven for the exact law
  (:func:`flow`);
* :mod:`.batch` -- compiled fixed-step batch RK4 of many initial conditions, parallel on any
  executor (:func:`batch_periodic`, :func:`batch_parallel`);
* :mod:`.orbits` -- periodic orbits by shooting, monodromy, Floquet multipliers
  (:func:`periodic_orbit`);
* :mod:`.branches` -- continuation of orbits in the forcing frequency with
  :mod:`fesub.continuation` and its bifurcation test functions (:func:`continue_orbit`,
  :func:`orbit_branch`), and the backbone of periodic orbits of the conservative system
  (:func:`orbit_backbone`);
* :mod:`.bifurcation` -- bifurcation diagrams: the Poincare section against the forcing
  frequency (:func:`bifurcation_diagram`) and its one-frequency sweep entry point
  (:func:`bifurcation_point`);
* :mod:`.basin` -- basins of attraction computed in blocks of rows (:func:`basins`,
  :func:`basin_cells`, :func:`assemble_basin`) and the one-point sweep entry point
  (:func:`basin_point`); :func:`basin_run` and :func:`basin_tiles` run the blocks as jobs
  without a barrier (the command line saves each as it finishes); ``basins(early_stop=True)``
  stops each cell once its stroboscopic path
  is recognised as leading to a known attractor;
* :mod:`.basin_results` -- the blocks of cells and the classified basin (:class:`BasinCells`,
  :class:`BasinResult`) and the clustering of the cells into attractors (:func:`classify`);
* :mod:`.recurrence` -- that recognition (cell mapping by recurrence on a coarse grid of the
  stroboscopic section) and the blocks of rows run as independent jobs on a pool;
* :mod:`.plots` -- figures; the command is ``fesub freeplay`` (:mod:`fesub.cli.freeplay`).

Results (:class:`BasinResult`, :class:`BasinCells`, :class:`BifurcationResult`, :class:`Orbit`,
:class:`OrbitBranch`, :class:`OrbitBackbone`) follow the result protocol of :mod:`fesub.io`
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

from .basin import (assemble_basin, attractors_of, basin_cells, basin_grid, basin_point, basin_run,
                    basin_tiles, basins)
from .basin_results import BasinCells, BasinResult, classify
from .batch import BatchResult, batch_parallel, batch_periodic, period_of, tile_bounds
from .bifurcation import PAPER_ICS, BifurcationResult, bifurcation_diagram, bifurcation_point
from .branches import (OrbitBackbone, OrbitBranch, continue_orbit, orbit_backbone, orbit_branch,
                       switch_orbit)
from .integrate import FlowResult, flow
from .laws import (SIGMOIDS, FreePlay, SigmoidFreePlay, check_sigmoid, delta_for_radius,
                   influence_constant, radius_of_influence, radius_of_influence_closed_form,
                   spurious_force_peak, vector_field_error)
from .orbits import Orbit, floquet_test_functions, periodic_orbit, poincare_map
from .system import P_REF, PARAM_UNITS, PRESETS, FreePlayParams, TwoMassFreePlay, get_params

__all__ = [
    # the model
    "FreePlayParams", "P_REF", "PRESETS", "PARAM_UNITS", "get_params", "TwoMassFreePlay",
    "FreePlay", "SigmoidFreePlay", "SIGMOIDS", "check_sigmoid", "delta_for_radius",
    "influence_constant", "radius_of_influence", "radius_of_influence_closed_form",
    "spurious_force_peak", "vector_field_error",
    # time integration
    "flow", "FlowResult", "batch_periodic", "batch_parallel", "BatchResult",
    # periodic orbits, their continuation and backbones
    "periodic_orbit", "poincare_map", "floquet_test_functions", "Orbit", "continue_orbit",
    "switch_orbit",
    "orbit_branch", "OrbitBranch", "orbit_backbone", "OrbitBackbone",
    # bifurcation diagrams and basins
    "bifurcation_diagram", "BifurcationResult", "PAPER_ICS", "basins", "basin_grid",
    "basin_cells", "assemble_basin", "basin_run", "basin_tiles", "attractors_of", "tile_bounds", "BasinCells", "BasinResult", "classify",
    "period_of", "basin_point", "bifurcation_point",
]
