"""The FE example runs and its numbers hold against an independent solve."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cantilever_modes.py"


def _load():
    spec = importlib.util.spec_from_file_location("cantilever_modes", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("render", [False, True])
def test_cantilever_example(tmp_path, render, capsys):
    if render:
        pytest.importorskip("pyvista")
    args = ["--out", str(tmp_path)] + ([] if render else ["--no-render"])
    res = _load().main(args)
    text = capsys.readouterr().out
    assert "rel. error" in text and "Craig-Bampton" in text
    v = res["validate"]
    # 20 fixed-interface modes + the free-end edge: lowest 10 within 0.5 %, never below the full model
    assert np.all(v["rel_error"] < 5e-3) and np.all(v["rel_error"] > -1e-9)
    assert Path(res["vtu"]).stat().st_size > 0
    if render:
        assert Path(res["png"]).stat().st_size > 1000
    # the first frequency: a dense solve of the same model, and within 1 % of Euler-Bernoulli
    # (L/h = 10: shear and rotary inertia lower it by ~0.6 %)
    from fesub.fe import PlaneStress, rectangle
    from fesub.substructure import Substructure

    sub = Substructure(rectangle(1.0, 0.1, 40, 4), PlaneStress(210e9, 0.3, 7850.0, 0.02), clamped=["left"])
    lam = sla.eigh(sub.K.toarray(), sub.M.toarray(), eigvals_only=True, subset_by_index=[0, 0])
    # same model, sparse Lanczos vs dense LAPACK: both to round-off
    np.testing.assert_allclose(res["frequencies_hz"][0], np.sqrt(lam[0]) / (2 * np.pi), rtol=1e-8)
    f_eb = 1.8751040687**2 / (2 * np.pi) * np.sqrt(210e9 * 0.1**2 / (12 * 7850.0))
    assert abs(res["frequencies_hz"][0] / f_eb - 1) < 0.01
