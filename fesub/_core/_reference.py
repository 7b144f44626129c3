"""Index of the NumPy twins of the compiled kernels.

Each compiled module ``fesub/_core/<name>.pyx`` has its twin in ``fesub/_core/<name>_ref.py`` with the
same functions and signatures. This module gathers them: ``twins()`` maps kernel names to the twin
modules, which is what the tests iterate over when they compare both backends.
"""

from __future__ import annotations

import importlib


def twins() -> dict:
    """Map kernel module name -> its imported NumPy twin module."""
    from .._backend import kernel_names

    return {n: importlib.import_module(f"fesub._core.{n}_ref") for n in kernel_names()}
