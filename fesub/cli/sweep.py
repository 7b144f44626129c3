"""``fesub sweep CONFIG.toml``: run a parameter sweep described by a TOML file.

Example configuration::

    study = "beam_on_beam_stability"

    [grid]                      # cartesian product, first key = first axis
    mu = {start = 0.0, stop = 0.4, num = 9}
    s = [0.01, 0.03, 0.05, 0.07, 0.09]

    [fixed]                     # parameters shared by every case
    n_basis = 120

Instead of ``[grid]``, an array of tables ``[[cases]]`` lists the cases one by one. The output
folder (``--out``, default ``fesub-out/sweep/<config name>``) is the result store: one file per
case, written as the case finishes, so that running the same command again after an interruption
computes only the missing cases (``--overwrite`` starts it afresh). At the end the store is
gathered into ``gathered.nc`` (``fesub.load(OUT)`` gives the same :class:`fesub.sweep.SweepData`),
the study's main result is drawn (``map.png``: a map over a 2-D grid, curves over a 1-D grid), and
``summary.json`` and ``report.html`` are written.
"""

from __future__ import annotations

#: shown as the default of --out; replaced by fesub-out/sweep/<config stem> when left as is
DEFAULT_OUT = "fesub-out/sweep/<CONFIG stem>"
#: the figure of the study's main result
MAP_FILE = "map.png"


def add_arguments(parser) -> None:
    from .common import add_common, integer, number

    parser.add_argument("config", help="TOML file: study = \"...\", [grid] or [[cases]], [fixed]")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="Dask scheduler address, e.g. tcp://host:8786 (instead of the local pool)")
    where.add_argument("--local-cluster", type=integer(ge=1), metavar="N",
                       help="start a dask.distributed LocalCluster with N worker processes "
                            "(instead of the local pool)")
    parser.add_argument("--retry-failed", action="store_true", help="recompute failed cases too")
    parser.add_argument("--connect-timeout", type=number(gt=0, unit="s"), default=5.0, metavar="S",
                        help="time to wait for the Dask scheduler [s]")
    parser.add_argument("--max-cases", type=integer(ge=1), default=1_000_000, metavar="N",
                        help="refuse a sweep of more cases than this (counted before any case is "
                             "built) [-]")
    add_common(parser, "sweep", jobs=True)
    parser.set_defaults(out=DEFAULT_OUT)


def read_config(path) -> dict:
    """Parse and check the TOML configuration (ParameterError naming the bad key)."""
    import tomllib

    from ..errors import ParameterError

    try:
        with open(path, "rb") as fh:
            cfg = tomllib.load(fh)
    except FileNotFoundError:
        raise ParameterError(f"config file {path!r} does not exist") from None
    except IsADirectoryError:
        raise ParameterError(f"config file {path!r} is a directory, not a TOML file") from None
    except OSError as exc:
        raise ParameterError(f"cannot read config file {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ParameterError(f"config file {path!r} is not UTF-8 text (byte {exc.start}: "
                             f"{exc.reason}); TOML files are UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"config file {path!r} is not valid TOML: {exc}") from None
    allowed = {"study", "grid", "cases", "fixed"}
    unknown = sorted(set(cfg) - allowed)
    if unknown:
        raise ParameterError(f"unknown key(s) {unknown} in {path!r}; allowed: {sorted(allowed)}")
    if not isinstance(cfg.get("study"), str):
        raise ParameterError(f"{path!r} must name the study: study = \"...\"")
    if ("grid" in cfg) == ("cases" in cfg):
        raise ParameterError(f"{path!r} must have exactly one of [grid] or [[cases]]")
    if "grid" in cfg and not isinstance(cfg["grid"], dict):
        raise ParameterError(f"[grid] in {path!r} must be a table")
    if "fixed" in cfg and not isinstance(cfg["fixed"], dict):
        raise ParameterError(f"[fixed] in {path!r} must be a table")
    return cfg


def _label(data, name: str) -> str:
    unit = data.unit(name)
    return f"{name} [{'-' if unit == '1' else unit}]"


def _title(data, field: str) -> str:
    fixed = data.manifest.get("fixed") or {}
    shown = [f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}" for k, v in fixed.items()
             if isinstance(v, (int, float, str)) or (isinstance(v, list) and len(v) <= 4)]
    tail = f"\n{', '.join(shown[:6])}" if shown else ""
    return f"{data.study}: {field}{tail}"


def pick_field(data):
    """The result to draw: the study's primary one when it is a map over the grid, else the first
    result that is; None when nothing can be drawn."""
    import numpy as np

    def drawable(name):
        z = data.fields.get(name)
        if z is None or not np.isfinite(z).any():
            return False
        return z.ndim == 2 if len(data.axes) == 2 else (len(data.axes) == 1 and z.ndim <= 2)

    if not data.axes or len(data.axes) > 2:
        return None
    if data.primary and drawable(data.primary):
        return data.primary
    return next((k for k in data.fields if drawable(k)), None)


def plot_map(data, field: str, path):
    """The result ``field`` over the grid: a colour map over a 2-D grid (failed/missing cells
    blank; a discrete colour scale for coded results, a diverging one centred on zero for a
    result of both signs), curves over a 1-D grid."""
    import numpy as np

    from ..plots import style

    plt = style.pyplot()
    names = list(data.axes)
    z = data.fields[field]
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    if len(names) == 2:
        (n0, a0), (n1, a1) = data.axes.items()
        zm = np.ma.masked_invalid(z)
        cats = data.categories.get(field)
        if cats:
            cmap = plt.get_cmap("viridis", len(cats))
            m = ax.pcolormesh(a1, a0, zm, shading="nearest", cmap=cmap, vmin=-0.5,
                              vmax=len(cats) - 0.5)
            cb = fig.colorbar(m, ax=ax, ticks=range(len(cats)))
            cb.ax.set_yticklabels(cats)
            cb.set_label(_label(data, field))
        elif np.nanmin(z) < 0 < np.nanmax(z):  # a signed result: its sign shows, zero is white
            from matplotlib.colors import TwoSlopeNorm

            norm = TwoSlopeNorm(0.0, float(np.nanmin(z)), float(np.nanmax(z)))
            m = ax.pcolormesh(a1, a0, zm, shading="nearest", cmap="RdBu_r", norm=norm)
            fig.colorbar(m, ax=ax, label=_label(data, field))
        else:
            m = ax.pcolormesh(a1, a0, zm, shading="nearest")
            fig.colorbar(m, ax=ax, label=_label(data, field))
        ax.set_xlabel(_label(data, n1))
        ax.set_ylabel(_label(data, n0))
        if (data.status == 0).any() or (data.status == -1).any():
            ax.text(0.01, 0.01, "blank: failed or missing case", transform=ax.transAxes,
                    fontsize=8, va="bottom")
    else:
        (n0, a0), = data.axes.items()
        zz = z.reshape(z.shape[0], -1)
        for j in range(zz.shape[1]):
            ax.plot(a0, zz[:, j], ".-" if zz.shape[1] == 1 else ".", ms=4,
                    label=f"{field}[{j}]" if 1 < zz.shape[1] <= 8 else None)
        if 1 < zz.shape[1] <= 8:
            ax.legend(fontsize=8)
        ax.set_xlabel(_label(data, n0))
        ax.set_ylabel(_label(data, field))
        ax.grid(alpha=0.3)
    ax.set_title(_title(data, field), fontsize=10)
    return style.save(fig, path)


def _default_out(config) -> str:
    from pathlib import Path

    return str(Path("fesub-out") / "sweep" / Path(config).stem)


def run(args) -> int:
    import os

    from .. import sweep as sw

    cfg = read_config(args.config)
    if args.out == DEFAULT_OUT:
        args.out = _default_out(args.config)
    out = args.out
    grid, cases, fixed = cfg.get("grid"), cfg.get("cases"), cfg.get("fixed")
    # the whole configuration (and a store of another sweep) is refused before the output folder,
    # a cluster or any case is touched
    if os.path.exists(out) and not os.path.isdir(out):
        from ..errors import ParameterError

        raise ParameterError(f"--out {out} is an existing file, not a folder")
    n = sw.check_sweep(cfg["study"], grid=grid, cases=cases, fixed=fixed, max_cases=args.max_cases,
                       store=None if args.overwrite else out)
    parameters = {"study": cfg["study"], "grid": grid, "cases": cases, "fixed": fixed}
    client = sw.connect_scheduler(args.scheduler, args.connect_timeout) if args.scheduler else None
    try:
        return _run(args, sw, cfg, n, parameters, client)
    finally:
        if client is not None:
            client.close()


def _run(args, sw, cfg, n, parameters, client) -> int:
    import os
    import signal
    import sys

    from .common import Interrupted, StudyDir

    out = args.out
    grid, cases, fixed = cfg.get("grid"), cfg.get("cases"), cfg.get("fixed")
    d = StudyDir(out, "sweep", parameters, overwrite=args.overwrite,
                 figures=not args.no_figures, quiet=args.quiet)
    if args.overwrite:  # what the last run gathered goes with the store it came from
        for f in ("gathered.nc", MAP_FILE, "summary.json", "report.html"):
            _remove(os.path.join(out, f))
    d.say(f"sweep {cfg['study']}: {n} cases into {out}")
    cluster = client
    try:
        if args.local_cluster is not None:
            try:
                from distributed import LocalCluster
            except ImportError as exc:
                raise sw.SchedulerError(f"--local-cluster needs dask.distributed: {exc}") from None

            cluster = LocalCluster(n_workers=args.local_cluster, threads_per_worker=1,
                                   dashboard_address=None)
        rep = sw.run_sweep(cfg["study"], out, grid=grid, cases=cases, fixed=fixed, cluster=cluster,
                           workers=None if cluster is not None else args.jobs,
                           connect_timeout=args.connect_timeout, retry_failed=args.retry_failed,
                           progress=not args.quiet, overwrite=args.overwrite,
                           max_cases=args.max_cases)
    finally:
        if cluster is not None and cluster is not client:
            cluster.close()
    d.say(f"sweep {cfg['study']}: {rep.n_cases} cases, {rep.n_done_before} already in {out}, "
          f"{rep.n_computed} computed, {rep.n_failed} failed, {rep.n_missing} missing "
          f"({rep.elapsed_s:.1f} s)")
    if rep.problems:
        print(f"{len(rep.problems)} file(s) of the store found damaged or foreign (not used):",
              file=sys.stderr)
        for p in rep.problems[:10]:
            print(f"  {p['file']}: {p['problem']}", file=sys.stderr)
    for f in rep.failures[:10]:
        print(f"  failed {f['params']}: {f['error']}", file=sys.stderr)
    if rep.interrupted:
        raise Interrupted() if rep.signal == signal.SIGTERM else KeyboardInterrupt()
    if rep.failures:  # the traceback of the first failure (all of them are in the case files)
        print(f"traceback of the first failure:\n{rep.failures[0]['traceback']}", file=sys.stderr)
    if rep.data is not None and rep.data.warnings and not args.quiet:
        w = rep.data.warnings[0]
        print(f"{len(rep.data.warnings)} case(s) emitted warnings (kept in their case files and "
              f"summary.json), e.g. case {w['index']}: {w['warnings'][0]}", file=sys.stderr)
    if rep.n_busy:
        print(f"{rep.n_busy} case(s) are claimed by a process on another machine; run the same "
              f"command again when it has finished", file=sys.stderr)
    data = rep.data
    d.save("gathered", data)
    d.say(f"gathered results: {d.part('gathered')} (fesub.load({out!r}) gives the same)")
    field = pick_field(data)
    if d.figures_on and field is not None:
        what = "map" if len(data.axes) == 2 else "curves"
        path = d.figure(MAP_FILE, f"{field} ({data.unit(field)}) of {data.study} over "
                                  f"{' and '.join(data.axes)}: {what}; blank where a case failed "
                                  f"or is missing")
        plot_map(data, field, path)
        d.say(f"{what}: {path}")
    summary = data.summary()
    summary["details"].update(n_done_before=rep.n_done_before, n_computed=rep.n_computed,
                              elapsed_s=rep.elapsed_s, config=os.path.abspath(args.config))
    if rep.problems:
        summary["details"]["problems_found_in_this_run"] = rep.problems[:20]
    d.finish(summary)
    return 1 if (rep.n_failed or rep.n_missing) else 0


def _remove(path) -> None:
    import os

    try:
        os.unlink(path)
    except OSError:
        pass
