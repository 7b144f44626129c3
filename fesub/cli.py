"""The ``fesub`` command: one subcommand per study.

Each study lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``;
this file only wires them together, importing a study when it is called.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .errors import FesubError

# subcommand -> (module, one-line help)
STUDIES = {
    "beam-on-beam": ("fesub.models.beam_on_beam_cli", "sliding contact of two beams (main study)"),
    "coulomb": ("fesub.coulomb.cli", "closed-form steady state of MDOF chains with Coulomb contact"),
    "backbone": ("fesub.hbm.cli", "harmonic balance with friction: FRFs, backbones, dNNM"),
    "freeplay": ("fesub.nonsmooth.cli", "free-play oscillators: bifurcations, basins"),
    "circular": ("fesub.circular.cli", "friction force and torque over a circular contact"),
    "sweep": ("fesub.sweep_cli", "parameter sweeps on a local pool or a Dask cluster"),
    "config": ("fesub.cli", "show which backend is active and why"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:  # for `fesub config`
    pass


def run(args) -> int:  # `fesub config`
    from . import show_config

    show_config()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fesub", description=__doc__.splitlines()[0])
    from . import __version__

    parser.add_argument("--version", action="version", version=f"fesub {__version__}")
    sub = parser.add_subparsers(dest="study", metavar="STUDY")
    for name, (modname, help_) in STUDIES.items():
        p = sub.add_parser(name, help=help_, description=help_)
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name and modname.startswith(exc.name):
                p.set_defaults(_missing=f"the '{name}' study is not part of this build yet")
                continue
            raise
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.study is None:
        parser.print_help()
        return 2
    if getattr(args, "_missing", None):
        print(f"fesub: {args._missing}", file=sys.stderr)
        return 2
    try:
        return int(args._run(args) or 0)
    except FesubError as exc:
        print(f"fesub {args.study}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
