"""Compiled kernels (Cython) and their NumPy twins.

Convention: ``<name>.pyx`` is the compiled kernel module, ``<name>_ref.py`` its pure-NumPy twin with
identical function names and signatures. Kernels allocate nothing, know no physics and trust their
inputs: the Python wrappers in the physics packages validate and allocate. See ``_reference.py``.
"""
