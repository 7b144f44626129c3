"""Craig-Bampton reduction of a cantilever plate
=============================================

Cantilever plate: modes, Craig-Bampton reduction on the free-end edge, first mode to PNG.

    python examples/cantilever_modes.py [--out DIR] [--modes 20]

Builds a 1 m x 0.1 m steel cantilever (plane stress, 0.02 m wide, 40 x 4 Q4 elements with
incompatible modes), clamps its left edge, keeps the nodes of the free-end edge physical and
reduces the rest to ``--modes`` fixed-interface normal modes. Prints the comparison of the lowest
10 frequencies of the reduced and full models (``CraigBampton.validate``), the Euler-Bernoulli
estimate for reference, and renders the first mode (PNG) and the lowest modes (VTU) into the output
directory (a new temporary directory by default).
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
from pathlib import Path

import numpy as np

from fesub.fe import PlaneStress, rectangle
from fesub.substructure import CraigBampton, Substructure


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path, nargs="?", default=None, help="output directory")
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: a temp dir)")
    parser.add_argument("--modes", type=int, default=20, help="fixed-interface modes kept (default 20)")
    parser.add_argument("--no-render", action="store_true", help="skip the PNG (no pyvista needed)")
    args = parser.parse_args(argv)
    out = args.out or args.out_dir
    out = out if out is not None else Path(tempfile.mkdtemp(prefix="fesub_cantilever_"))
    out.mkdir(parents=True, exist_ok=True)

    L, h, width = 1.0, 0.1, 0.02
    steel = PlaneStress(E=210e9, nu=0.3, rho=7850.0, thickness=width)
    mesh = rectangle(L, h, 40, 4)
    sub = Substructure(mesh, steel, clamped=["left"], name="cantilever")
    print(sub)

    cb = CraigBampton(sub, boundary=sub.dofs("right"), n_modes=args.modes)
    print(cb.summary())
    table = cb.validate(10)
    # Euler-Bernoulli bending frequencies, for orientation (the plane-stress model also has an
    # axial mode and shear/rotary-inertia effects that lower the higher bending modes)
    beta = np.array([1.8751040687, 4.6940911330, 7.8547574382, 10.9955407349])
    f_eb = beta**2 / (2 * np.pi * L**2) * np.sqrt(steel.E * h**2 / (12 * steel.rho))
    print(f"\n{'mode':>4} {'full (Hz)':>12} {'reduced (Hz)':>13} {'rel. error':>11}")
    for i, (ff, fr, e) in enumerate(zip(table["full_hz"], table["reduced_hz"], table["rel_error"]), 1):
        print(f"{i:>4} {ff:12.4f} {fr:13.4f} {e:11.2e}")
    print("Euler-Bernoulli bending (Hz):", np.array2string(f_eb, precision=2))

    f, phi = sub.modes(6)
    result = {"out": out, "validate": table, "frequencies_hz": f}
    from fesub.plots.modes import write_modes_vtu

    shapes = [sub.expand(phi[:, j]) for j in range(phi.shape[1])]
    result["vtu"] = write_modes_vtu(mesh, shapes, out / "cantilever_modes.vtu", frequencies_hz=f)
    from fesub.plots.modes import plot_coupled_modes

    result["figure"] = plot_coupled_modes([(mesh, shapes[0])], out / "cantilever_mode1_plane.png",
                                          title=f"cantilever, mode 1 ({f[0]:.1f} Hz)", labels=["cantilever"])
    if not args.no_render and importlib.util.find_spec("pyvista") is None:
        print("pyvista is not installed: no off-screen rendering (pip install \".[viz]\")")
    elif not args.no_render:
        from fesub.plots.modes import render_mode

        result["png"] = render_mode(mesh, shapes[0], out / "cantilever_mode1.png", title="cantilever, mode 1",
                                    frequency_hz=f[0])
        print("first mode rendered to", result["png"])
    print("modes for ParaView:", result["vtu"])
    return result


if __name__ == "__main__":
    main()
