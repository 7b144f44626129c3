"""Figures and renderings.

The plotting modules import their heavy dependencies (matplotlib, pyvista) lazily, inside the
functions, so that the numerical core never needs them:

* :mod:`fesub.plots.style` - the one matplotlib set-up (off-screen), dB colour limits, and the
  house rules every figure is tested against.
* :mod:`fesub.plots.modes` - mode shapes of plane and solid (hexahedron, tetra, tetra10, wedge)
  meshes: drawn in place with matplotlib (plane), rendered off-screen with pyvista (PNG, GIF;
  optional dependency), and written to VTU for ParaView with the frequencies (Hz) and damping
  ratios as field data.
* :mod:`fesub.plots.series` - time series of meshes: ParaView collections (``.pvd`` of VTU files
  written by meshio) and off-screen animations (GIF, pyvista).

Each study's own figures live beside it (``fesub.contact.sliding.plots``, ``fesub.hbm.plots``, ...).
"""
