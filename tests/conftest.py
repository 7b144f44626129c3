"""Shared fixtures: every kernel-backed routine is tested on both backends."""

from __future__ import annotations

import os

# one BLAS/OpenMP thread per process: on a small shared machine threaded BLAS in the many small
# dense solves of the tests is 10-100x slower (set before NumPy loads its BLAS)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest

from fesub import _backend


def _backends():
    names = _backend.kernel_names()
    have_compiled = bool(names) and all(_backend.compiled_available(n) for n in names)
    required = os.environ.get("FESUB_REQUIRE_EXT", "0") not in ("", "0")
    if required and not have_compiled:
        raise RuntimeError("FESUB_REQUIRE_EXT=1 but compiled kernels are missing")
    return ["python", "compiled"] if have_compiled else ["python"]


# --- validation records for the documentation (docs/validation.py) ------------------------------
# With FESUB_VALIDATION_LOG=FILE, every numpy.testing.assert_allclose that passes appends one JSON
# line {test, doc, measured_abs, measured_rel, rtol, atol, used}: the errors the tests measure
# against their references (measured_rel = max |a - d| / max |d|; used = the largest share of the
# allowed error atol + rtol |d| taken), for the generated validation page.
_VALIDATION_TEST = ["", ""]
if os.environ.get("FESUB_VALIDATION_LOG"):
    import json as _json

    import numpy as _np
    import numpy.testing as _npt

    _assert_allclose = _npt.assert_allclose

    def _recorded_allclose(actual, desired, rtol=1e-7, atol=0, *args, **kwargs):
        _assert_allclose(actual, desired, rtol, atol, *args, **kwargs)
        try:
            a, d = _np.asarray(actual, dtype=complex), _np.asarray(desired, dtype=complex)
            err = _np.abs(a - d)
            finite = _np.isfinite(err)
            if not finite.any():
                return
            scale = float(_np.abs(_np.broadcast_to(d, err.shape)[finite]).max())
            bound = atol + rtol * _np.abs(_np.broadcast_to(d, err.shape)[finite])
            rec = {"test": _VALIDATION_TEST[0], "doc": _VALIDATION_TEST[1],
                   "measured_abs": float(err[finite].max()),
                   "measured_rel": float(err[finite].max()) / scale if scale > 0 else None,
                   "rtol": float(rtol), "atol": float(atol),
                   "used": float((err[finite] / _np.maximum(bound, 1e-300)).max())}
        except (TypeError, ValueError):
            return
        with open(os.environ["FESUB_VALIDATION_LOG"], "a") as fh:
            fh.write(_json.dumps(rec) + "\n")

    _npt.assert_allclose = _recorded_allclose


@pytest.fixture(autouse=True)
def _validation_context(request):
    """Name and docstring of the running test, for the validation records."""
    _VALIDATION_TEST[:] = [request.node.nodeid, getattr(request.function, "__doc__", None) or ""]
    yield


def _python_sigint_handler():
    """Python's own Ctrl-C handler. A test run started in the background of a non-interactive
    shell (``cmd &`` in a script) inherits SIGINT ignored, and Python then installs no handler:
    the interrupt tests need the one an interactive run has."""
    import signal

    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, signal.default_int_handler)


_python_sigint_handler()


@pytest.fixture(autouse=True)
def _sigint_handler_restored(request):
    """Every test starts with Python's own Ctrl-C handler: one that a test leaves changed (an
    ignored SIGINT would make every later interrupt test fail far from the cause) is put back
    after it, with a warning that names the test."""
    import signal
    import warnings

    yield
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        warnings.warn(f"{request.node.nodeid} left SIGINT changed; restored", RuntimeWarning, stacklevel=1)


@pytest.fixture(params=_backends())
def backend(request):
    """Run the test once with the NumPy twins and once with the compiled kernels."""
    with _backend.use(request.param):
        yield request.param


@pytest.fixture
def subprocess_env():
    """Environment for scripts run in a child interpreter: the fesub under test is importable
    (installed or not), one BLAS thread, a headless Matplotlib backend."""
    import fesub
    from pathlib import Path

    root = str(Path(fesub.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    # PYTHONSAFEPATH: `python -m fesub.cli` must not put the working directory first on sys.path,
    # where a checkout without compiled kernels would shadow the installed package
    return dict(os.environ, PYTHONPATH=path, MPLBACKEND="Agg", OMP_NUM_THREADS="1",
                PYTHONSAFEPATH="1")


@pytest.fixture
def drawn_figures(monkeypatch):
    """Every figure a plotting helper writes through ``fesub.plots.style.save``, kept open for
    inspection (``fesub.plots.style.check_figure``) instead of closed; a list of (figure, path)."""
    from fesub.plots import style

    kept = []
    real = style.save

    def keep(fig, path, **kw):
        real.__globals__["pyplot"]()  # Agg
        fig.savefig(path, dpi=kw.get("dpi", 60))
        kept.append((fig, path))
        return path

    monkeypatch.setattr(style, "save", keep)
    yield kept
    import matplotlib.pyplot as plt

    for fig, _ in kept:
        plt.close(fig)


@pytest.fixture
def sigint_when():
    """``sigint_when(proc, ready, timeout=240, pause=0)``: wait until ``ready()`` is true while
    the child ``proc`` runs (it must not end first, nor take longer than ``timeout`` s), send it
    SIGINT ``pause`` s later, and return its ``(stdout, stderr)``; the child is killed if the
    test fails on the way."""
    import signal
    import time

    started = []

    def interrupt(proc, ready, timeout=240.0, pause=0.0):
        started.append(proc)
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"not ready after {timeout} s"
            time.sleep(0.02)
        time.sleep(pause)
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=120)

    yield interrupt
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
