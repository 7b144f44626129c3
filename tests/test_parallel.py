"""Thread limits and worker pools shared by every study (fesub.parallel)."""

from __future__ import annotations

import os

import numpy as np  # noqa: F401 - loads NumPy's OpenBLAS, which the limits act on
import pytest

from fesub import parallel
from fesub.errors import ParameterError


def _live():
    s, g = parallel._openblas()
    return None if g is None else int(g())


def test_single_thread_blas_sets_one_and_restores():
    before = _live()
    if before is None:
        pytest.skip("no OpenBLAS loaded in this process")
    old = parallel.set_blas_threads(2)
    try:
        assert _live() == 2 and old == before
        with parallel.single_thread_blas():
            assert _live() == 1
        assert _live() == 2
    finally:
        parallel.set_blas_threads(before)
    with pytest.raises(ParameterError):
        parallel.set_blas_threads(0)


def _worker_state(_):
    return ({v: os.environ.get(v) for v in parallel.THREAD_VARS}, _live())


def test_pool_workers_run_one_thread_and_serial_for_one_job():
    with parallel.worker_pool(1) as ex:
        assert ex == "serial"
    with parallel.worker_pool(2) as ex:
        env, live = ex.submit(_worker_state, 0).result(timeout=120)
    assert set(env.values()) == {"1"}
    assert live in (None, 1)
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ParameterError):
            with parallel.worker_pool(bad):
                pass
