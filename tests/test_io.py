"""JSON summaries with NumPy values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fesub.io import json_default, write_json


def test_numpy_values_round_trip_through_json(tmp_path):
    obj = {"f": np.float64(0.1), "i": np.int64(7), "b": np.bool_(True), "a": np.arange(3.0),
           "m": np.eye(2, dtype=np.int32), "nan": np.float64("nan"), "inf": np.array([np.inf]),
           "p": Path("out") / "x.npz", "plain": [1, "s", None]}
    back = json.loads(write_json(tmp_path / "s.json", obj).read_text())
    assert back["f"] == 0.1 and type(back["f"]) is float
    assert back["i"] == 7 and type(back["i"]) is int
    assert back["b"] is True
    assert back["a"] == [0.0, 1.0, 2.0] and back["m"] == [[1, 0], [0, 1]]
    assert np.isnan(back["nan"]) and back["inf"] == [np.inf]
    assert back["p"] == str(Path("out") / "x.npz") and back["plain"] == [1, "s", None]


def test_unknown_types_are_refused_not_stringified():
    with pytest.raises(TypeError, match="not JSON serialisable: object"):
        json.dumps({"x": object()}, default=json_default)
    with pytest.raises(TypeError, match="complex"):
        json.dumps({"z": 1 + 2j}, default=json_default)
