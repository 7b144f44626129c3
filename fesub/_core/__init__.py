"""Compiled kernels (Cython) and their NumPy twins.

Convention: ``<name>.pyx`` is the compiled kernel module, ``<name>_ref.py`` its pure-NumPy twin with
identical function names and signatures; a part of a long kernel is ``_<name>_<part>.pxi``,
included by ``<name>.pyx``, with its twin ``_<name>_<part>.py``, imported by ``<name>_ref.py``.
Kernels allocate nothing, know no physics and trust their inputs: the Python wrappers in the
physics packages validate and allocate. The backend chooser lists the kernels by their twins and
imports one or the other.
"""
