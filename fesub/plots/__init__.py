"""Figures and renderings.

The plotting modules import their heavy dependencies (matplotlib, pyvista) lazily, inside the
functions, so that the numerical core never needs them:

* :mod:`fesub.plots.modes` - mode shapes of meshes rendered off-screen with pyvista (PNG, GIF)
  and written to VTU for ParaView.
* :mod:`fesub.plots.style` - the one matplotlib set-up (off-screen), dB colour limits, and the
  house rules every figure is tested against.
"""
