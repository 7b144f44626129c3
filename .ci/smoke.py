"""Smoke test of an installed fesub (a wheel or an sdist in a fresh venv), run outside the checkout.

* every kernel imports compiled (FESUB_REQUIRE_EXT=1), and on x86-64 the instruction-set builds
  (AVX2, AVX-512) the wheel carries are there and the one the CPU runs is chosen;
* a short contact run (an elastic block pressed on a rigid ground and pulled until part of its
  contact slips, on the multibody stepper) on the compiled kernels equals the same run on their
  NumPy twins;
* the bundled meshes are installed and the version agrees with the installed metadata.
"""

import platform
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

import fesub
from fesub import _backend

assert not Path("fesub").exists(), "run the smoke test outside the checkout"
info = fesub.show_config()
assert info["backend"] == "compiled", info
for name in _backend.kernel_names():
    assert _backend.active(name) == "compiled", f"kernel {name} is not compiled"
try:
    dist_version = metadata.version("fesub")
except metadata.PackageNotFoundError:  # run from a source tree (developers)
    dist_version = fesub.__version__
assert dist_version == fesub.__version__, (dist_version, fesub.__version__)
core = Path(fesub.__file__).parent / "_core"
if platform.machine().lower() in ("x86_64", "amd64"):
    for kernel in ("coulomb", "freeplay", "friction_lcp", "multibody", "cone"):  # setup.py's _ISA_KERNELS
        for isa in ("avx2", "avx512"):
            assert list(core.glob(f"{kernel}_{isa}.*.so")), f"{kernel}_{isa} build missing"
    print("instruction-set builds:", {k: _backend.isa(k) for k in ("friction_lcp", "multibody", "cone")},
          "CPU levels:", _backend.isa_levels())
from fesub.models import beam_on_beam  # noqa: E402

mesh_dir = Path(beam_on_beam.bundled_mesh_dir())
assert list(mesh_dir.glob("*.msh")), f"no bundled meshes in {mesh_dir}"

from fesub.contact import Body, ContactInterface, MultibodyModel, simulate_multibody  # noqa: E402
from fesub.fe import PlaneStress, rectangle  # noqa: E402
from fesub.substructure import Substructure  # noqa: E402

mesh = rectangle(0.1, 0.02, 6, 2)
sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), rayleigh=(200.0, 0.0))
bottom, top = (mesh.nodes(s) for s in ("bottom", "top"))
dx, dy = sub.dofs(top, "x"), sub.dofs(top, "y")


def loads(t):
    """10 N pressed in over 0.02 s, then pulled at 100 N/s (N)."""
    f = np.zeros(sub.n_dofs)
    f[dy] = -10.0 * min(t / 0.02, 1.0) / top.size
    f[dx] = 100.0 * max(t - 0.02, 0.0) / top.size
    return f


def run():
    block = Body.from_substructure(sub, name="block", loads=loads)
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]],
                  [[-1, -1], [-1, -1]], name="ground")
    model = MultibodyModel([block, ground],
                           [ContactInterface("block", bottom, "ground", [[0, 1]], mu=0.3)])
    return simulate_multibody(model, duration=0.04, fs_out=2e3, progress=False)


compiled = run()
with _backend.use("python"):
    twin = run()
u_c, u_t = compiled.nodes["state"], twin.nodes["state"]
assert np.array_equal(u_c, u_t), "node states differ between the compiled kernel and its twin"
for key in compiled.nodes:
    a, b = np.asarray(compiled.nodes[key], float), np.asarray(twin.nodes[key], float)
    # the compiled march reassociates its sums (setup.py): round-off apart, relative to the
    # largest value of each series, with a floor of 1e-12 (m, N, m/s: a closed gap is ~1e-14 m)
    scale = np.abs(b).max()
    assert np.abs(a - b).max() <= 1e-9 * scale + 1e-12, (key, np.abs(a - b).max(), scale)
slipping = int(np.sum(u_c[-1] >= 2))
print(f"smoke test passed: fesub {fesub.__version__}, {sys.executable}; contact run of "
      f"{compiled.t.size} samples, {slipping} of {bottom.size} nodes slipping at the end, "
      f"compiled == twin")
