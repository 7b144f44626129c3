"""Bad input to the Coulomb study raises clear fesub errors naming the parameter and its range."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.errors import FesubError, ModelError, ParameterError
from fesub.coulomb import ChainModel, CoulombContact, beta_limit, steady_state, stuck_response, time_response
from fesub.coulomb.integrate import simulate_chain
from fesub.coulomb.numeric_map import regime_map_point

U2 = ChainModel.uniform(2)


@pytest.mark.parametrize("gamma, kappa, match", [
    ([1.0, -0.5], [1.0, 1.0], "gamma"),
    ([1.0, 1.0], [1.0, 0.0], "kappa"),
    ([1.0, np.nan], [1.0, 1.0], "gamma"),
    ([], [], "gamma"),
    ([2.0, 1.0], [1.0, 1.0], r"gamma\[0\]"),
])
def test_bad_ratios(gamma, kappa, match):
    with pytest.raises(ParameterError, match=match):
        ChainModel(gamma, kappa)


def test_mismatched_lengths():
    with pytest.raises(ModelError, match="same length"):
        ChainModel([1.0, 1.0], [1.0])


def test_bad_frequency_and_friction():
    with pytest.raises(ParameterError, match="r1"):
        steady_state(U2, "wall:0", 0, [], 0.3)
    with pytest.raises(ParameterError, match="r1.*> 0"):
        steady_state(U2, "wall:0", 0, [0.5, -1.0], 0.3)
    with pytest.raises(ParameterError, match="beta.*>= 0"):
        steady_state(U2, "wall:0", 0, 1.0, -0.1)
    with pytest.raises(ParameterError, match="beta"):
        steady_state(U2, "wall:0", 0, 1.0, [])
    with pytest.raises(ParameterError, match="r1"):
        simulate_chain(U2, "wall:0", 0, 0.0, 0.3)


@pytest.mark.parametrize("mu", [0.99, 0.0, -1.0, np.inf, "a"])
def test_mu_below_one(mu):
    with pytest.raises(ParameterError, match="mu"):
        steady_state(U2, "wall:0", 0, 1.0, 0.3, mu=mu)
    with pytest.raises(ParameterError, match="mu"):
        simulate_chain(U2, "wall:0", 0, 1.0, 0.3, mu=mu)


@pytest.mark.parametrize("contact", ["wall:2", "wall:-1", "masses:0,5", "base:3", "floor:0", "wall", "masses:1,1"])
def test_contact_index_out_of_range(contact):
    with pytest.raises(ParameterError, match="contact|index|mass"):
        steady_state(U2, contact, 0, 1.0, 0.3)


def test_contact_errors_in_every_entry_point():
    for fn in (lambda: beta_limit(U2, CoulombContact.wall(5), 0, 1.0),
               lambda: stuck_response(U2, CoulombContact.masses(0, 4), 0, 1.0),
               lambda: time_response(U2, CoulombContact.base(2), 0, 1.0, 0.2),
               lambda: simulate_chain(U2, CoulombContact.wall(2), 0, 1.0, 0.2)):
        with pytest.raises(ParameterError, match=r"\[0, 1\]"):
            fn()


def test_load_index_out_of_range():
    with pytest.raises(ParameterError, match="load"):
        steady_state(U2, "wall:0", 2, 1.0, 0.3)


def test_bad_options():
    with pytest.raises(ParameterError, match="s_method"):
        steady_state(U2, "wall:0", 0, 1.0, 0.3, s_method="sup")
    with pytest.raises(ParameterError, match="amplitude"):
        steady_state(U2, "wall:0", 0, 1.0, 0.3, amplitude="rms")
    with pytest.raises(ParameterError, match="max_periods"):
        simulate_chain(U2, "wall:0", 0, 0.8, 0.3, max_periods=0)
    with pytest.raises(ParameterError, match="x0"):
        simulate_chain(U2, "wall:0", 0, 0.8, 0.3, x0=[0.0, 0.0, 0.0])
    with pytest.raises(ParameterError, match="natural frequency"):
        simulate_chain(U2, "wall:0", 0, float(U2.natural_r1[0]), 0.3)


def test_regime_map_point_bad_params():
    with pytest.raises(ParameterError, match="gamma"):
        regime_map_point({"kappa": [1, 1]}, 1.0, 0.3)
    with pytest.raises(ParameterError, match="mu"):
        regime_map_point({"gamma": [1, 1], "kappa": [1, 1], "mu": 0.5}, 1.0, 0.3)
    with pytest.raises(FesubError):
        regime_map_point([1, 2], 1.0, 0.3)


def test_no_solution_is_nan_not_a_number():
    # above the radicand limit the continuous solution does not exist: NaN, by design
    ss = steady_state(ChainModel.uniform(1), "wall:0", 0, 0.8, 2.0)
    assert np.isnan(ss.Z).all() and np.isnan(ss.X).all() and np.isnan(ss.phi).all()
