"""Friction laws: their coefficients against the formulas, their encoding for the kernels (one
law per node), and one clear error for every bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub.contact.engine.friction import (LAW_CONSTANT, LAW_STATIC_KINETIC, LAW_STRIBECK, Coulomb,
                                           StaticKinetic, Stribeck, UserLaw, as_law, law_arrays)
from fesub.errors import ParameterError


def test_coefficients():
    v = np.array([0.0, 0.05, 0.1, 1.0])
    law = Stribeck(0.6, 0.2, 0.1)
    # the formula written out at each speed (1/e of mu_s - mu_k left at v = v_s)
    expected = [0.2 + 0.4 * math.exp(-x / 0.1) for x in v]
    np.testing.assert_allclose(law.coefficient(v), expected, rtol=1e-15)
    np.testing.assert_allclose(law.coefficient(-0.1), 0.2 + 0.4 / math.e, rtol=1e-15)
    assert law.mu_static == 0.6
    assert StaticKinetic(0.5, 0.3).coefficient(2.0) == 0.3 and StaticKinetic(0.5, 0.3).mu_static == 0.5
    assert Coulomb(0.4).coefficient(3.0) == 0.4
    assert UserLaw(lambda v: 0.5 / (1 + v)).mu_static == 0.5


def test_as_law():
    assert as_law(0.3) == Coulomb(0.3)
    assert isinstance(as_law(lambda v: 0.2), UserLaw)
    law = StaticKinetic(0.4, 0.2)
    assert as_law(law) is law


def test_law_arrays_per_node():
    laws = [Coulomb(0.3), StaticKinetic(0.5, 0.2), Stribeck(0.6, 0.1, 0.05), UserLaw(lambda v: 0.25)]
    code, params, user = law_arrays(laws, 4)
    np.testing.assert_array_equal(code, [LAW_CONSTANT, LAW_STATIC_KINETIC, LAW_STRIBECK, LAW_CONSTANT])
    np.testing.assert_array_equal(params, [[0.3, 0.3, 0.0], [0.5, 0.2, 0.0], [0.6, 0.1, 0.05],
                                           [0.25, 0.25, 0.0]])
    np.testing.assert_array_equal(user, [False, False, False, True])
    code, params, user = law_arrays(0.2, 3)
    assert code.dtype == np.int64 and params.shape == (3, 3) and np.all(params[:, :2] == 0.2)


@pytest.mark.parametrize("make, match", [
    (lambda: StaticKinetic(0.3, 0.5), "mu_k = 0.5 must not exceed"),
    (lambda: Stribeck(0.3, 0.5, 0.1), "mu_k = 0.5 must not exceed"),
    (lambda: Coulomb(-0.1), "mu"),
    (lambda: StaticKinetic(-0.1, -0.2), "mu_s"),
    (lambda: Stribeck(0.5, 0.3, 0.0), "v_s"),
    (lambda: Stribeck(0.5, 0.3, -1.0), "v_s"),
    (lambda: Coulomb(float("nan")), "mu"),
    (lambda: UserLaw(0.3), "callable"),
    (lambda: UserLaw(lambda v: -0.1), "finite and >= 0"),
    (lambda: UserLaw(lambda v: "a"), "real number"),
    (lambda: as_law("0.3"), "friction law"),
    (lambda: law_arrays([0.1, 0.2], 3), "one per node"),
])
def test_bad_input(make, match):
    with pytest.raises(ParameterError, match=match):
        make()
