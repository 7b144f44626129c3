"""The ``fesub`` command: one subcommand per study, one module per study in this package.

Each study module exposes ``add_arguments(parser)`` and ``run(args) -> int`` and imports nothing
heavy at module level, so that ``fesub STUDY --help`` answers at once: only the study that is
asked for is imported, and its numerical modules only when it runs. The conventions every study
shares (flags, output folder, resuming, interrupts, errors) live in :mod:`fesub.cli.common`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: what ``fesub --help`` says above and below the list of studies (for the user, not the code)
DESCRIPTION = ("fesub: dynamics of structures with friction and contact. Each study runs from the "
               "command line and writes its result files, figures and a summary.json under "
               "fesub-out/<study>/ (--out DIR to change it); a run interrupted with Ctrl-C keeps what "
               "it finished and resumes from it.")
EPILOG = ("Start with 'fesub beam-on-beam', the main study. 'fesub STUDY --help' lists a study's "
          "options; 'fesub info fesub-out/STUDY' prints the summary of a finished run; "
          "'fesub config' says which compiled kernels are in use.")

# subcommand -> (module, one-line help)
COMMANDS = {
    "beam-on-beam": ("fesub.cli.beam_on_beam", "sliding contact of two beams (main study)"),
    "pad-on-beam": ("fesub.cli.pad_on_beam", "an elastic pad pressed and dragged on a beam: stick, partial slip, sliding"),
    "brake": ("fesub.cli.brake", "a disc brake's complex eigenvalues against mu, its unstable modes and a transient that confirms them (3D)"),
    "pad-on-plate": ("fesub.cli.pad_on_plate", "an elastic pad pressed and dragged on a plate in 3D: the contact state over the interface"),
    "coulomb": ("fesub.cli.coulomb", "closed-form steady state of MDOF chains with Coulomb contact"),
    "backbone": ("fesub.cli.backbone", "harmonic balance with friction: FRFs, backbones, dNNM"),
    "joint": ("fesub.cli.joint", "a bolted lap-joint beam: bolt preload, frequency and damping of its first bending mode against amplitude"),
    "freeplay": ("fesub.cli.freeplay", "free-play oscillators: bifurcations, basins"),
    "circular": ("fesub.cli.circular", "friction force and torque over a circular contact"),
    "sweep": ("fesub.cli.sweep", "parameter sweeps on a local pool or a Dask cluster"),
    "info": ("fesub.cli.info", "print the summary a result file or output folder records"),
    "config": ("fesub.cli.config", "show which backend is active and why"),
}


def build_parser(study: str | None = None) -> argparse.ArgumentParser:
    """The ``fesub`` parser; only ``study``'s module is imported (all of them when None)."""
    from .common import StudyParser, HelpFormatter

    parser = StudyParser(prog="fesub", description=DESCRIPTION, epilog=EPILOG,
                         formatter_class=HelpFormatter)
    from ..version import __version__

    parser.add_argument("--version", action="version", version=f"fesub {__version__}")
    sub = parser.add_subparsers(dest="study", metavar="STUDY", parser_class=StudyParser)
    for name, (modname, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_, formatter_class=HelpFormatter)
        if study is not None and name != study:
            continue
        mod = importlib.import_module(modname)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``fesub`` command; returns the exit status."""
    from .common import run_study

    argv_given = argv is not None  # None: the command itself, whose process ends with the study
    argv = list(sys.argv[1:] if argv is None else argv)
    study = next((a for a in argv if not a.startswith("-")), None)
    if study not in COMMANDS:
        study = None
    try:
        parser = build_parser(study)
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (status 2)
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.study is None:
        parser.print_help()
        return 2
    _sparse_bars_in_logs()
    return run_study(args, exiting=not argv_given)


#: seconds between two updates of a progress bar written to a log or a pipe
LOG_BAR_INTERVAL = 10


def _sparse_bars_in_logs() -> None:
    """Progress bars that go to a log or a pipe (stderr not a terminal) update every
    LOG_BAR_INTERVAL seconds instead of ten times a second, in this process and its workers.
    tqdm reads its ``TQDM_*`` defaults when it is imported, which a study does only when it runs
    (hence here); a user's own TQDM_MININTERVAL stands."""
    import os

    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        tty = False
    if not tty and "tqdm" not in sys.modules:
        os.environ.setdefault("TQDM_MININTERVAL", str(LOG_BAR_INTERVAL))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
