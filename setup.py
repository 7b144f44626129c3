"""Build script: compiles every Cython kernel in fesub/_core.

``FESUB_REQUIRE_EXT=1`` turns a failed or skipped extension build into an install error.
Without it a failed build is reported and the package installs with its NumPy twins.
"""
import glob
import os
import sys

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext

REQUIRE = os.environ.get("FESUB_REQUIRE_EXT", "0") not in ("", "0", "false", "no")


# the sliding-contact march spends its time in dot products over the modal coordinates; letting
# the compiler reassociate those sums (no NaN/Inf semantics are changed) vectorises them
_EXTRA_FLAGS = {"fesub._core.contact": ["-fassociative-math", "-fno-signed-zeros", "-fno-trapping-math"]}
# FESUB_NATIVE=1: tune the contact march for the building machine's CPU (AVX2/FMA/...); the
# binary then runs only on machines like it, so wheels and CI build without it
if os.environ.get("FESUB_NATIVE", "0") not in ("", "0", "false", "no"):
    _EXTRA_FLAGS["fesub._core.contact"] = _EXTRA_FLAGS["fesub._core.contact"] + ["-march=native"]


def _extensions():
    try:
        import numpy
        from Cython.Build import cythonize
    except ImportError as exc:  # pragma: no cover - build environment problem
        if REQUIRE:
            raise RuntimeError(f"FESUB_REQUIRE_EXT=1 but Cython/NumPy is missing: {exc}") from exc
        print(f"fesub: building without compiled kernels ({exc})", file=sys.stderr)
        return []
    from setuptools import Extension

    exts = []
    for pyx in sorted(glob.glob(os.path.join("fesub", "_core", "*.pyx"))):
        name = pyx[:-4].replace(os.sep, ".")
        exts.append(
            Extension(
                name,
                [pyx],
                include_dirs=[numpy.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=["-O3"] + _EXTRA_FLAGS.get(name, []),
            )
        )
    built = []
    for ext in exts:  # one at a time, so that one broken kernel does not hide the others
        try:
            built.extend(cythonize([ext], language_level=3, quiet=True))
        except Exception as exc:  # noqa: BLE001 - Cython raises CompileError and friends
            if REQUIRE:
                raise
            print(f"fesub: {ext.name} not cythonized ({exc}); its NumPy twin will be used",
                  file=sys.stderr)
    return built


class OptionalBuildExt(build_ext):
    """Compile the kernels; fail loudly only when FESUB_REQUIRE_EXT=1."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - reported and re-raised on demand
            if REQUIRE:
                raise
            print(f"fesub: compiled kernels not built ({exc}); NumPy twins will be used",
                  file=sys.stderr)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            if REQUIRE:
                raise
            print(f"fesub: extension {ext.name} not built ({exc})", file=sys.stderr)


setup(
    ext_modules=_extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
    packages=find_packages(include=["fesub", "fesub.*"]) + ["fesub.meshes"],
    package_dir={"fesub.meshes": "meshes"},
    package_data={"fesub.meshes": ["*.msh", "*.md"], "fesub._core": ["*.pyx", "*.pxd"]},
)
