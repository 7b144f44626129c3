"""``fesub sweep CONFIG.toml``: run a parameter sweep described by a TOML file.

Example configuration::

    study = "beam_on_beam_stability"

    [grid]                      # cartesian product, first key = first axis
    mu = {start = 0.0, stop = 0.4, num = 9}
    s = [0.01, 0.03, 0.05, 0.07, 0.09]

    [fixed]                     # parameters shared by every case
    n_basis = 120

Instead of ``[grid]``, an array of tables ``[[cases]]`` lists the cases one by one. The result store
(``--out``, default ``<config name>.sweep`` beside the configuration) is resumable: run the same
command again after an interruption and only the missing cases are computed. At the end the store
is gathered into ``<out>/gathered.npz`` (+ ``.json``) and, for a 2-D grid, ``<out>/map.png``
shows the study's main result field.
"""

from __future__ import annotations

import os
import sys

from ..errors import ParameterError, check_positive

#: exit status after SIGINT/SIGTERM (the store holds what finished)
EXIT_INTERRUPTED = 130


def add_arguments(parser) -> None:
    parser.add_argument("config", help="TOML file: study, [grid] or [[cases]], [fixed]")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="Dask scheduler address, e.g. tcp://host:8786")
    where.add_argument("--local-cluster", type=int, metavar="N",
                       help="start a dask.distributed LocalCluster with N worker processes")
    parser.add_argument("--out", metavar="DIR", help="result store (default: CONFIG.sweep)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="local process-pool size (default: number of CPUs)")
    parser.add_argument("--retry-failed", action="store_true", help="recompute failed cases too")
    parser.add_argument("--connect-timeout", type=float, default=5.0, metavar="S",
                        help="seconds to wait for the scheduler (default 5)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG map")


def read_config(path) -> dict:
    """Parse and check the TOML configuration (ParameterError naming the bad key)."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            cfg = tomllib.load(fh)
    except FileNotFoundError:
        raise ParameterError(f"config file {path!r} does not exist") from None
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
    if "fixed" in cfg and not isinstance(cfg["fixed"], dict):
        raise ParameterError(f"[fixed] in {path!r} must be a table")
    return cfg


def plot_map(data, field: str, path) -> str:
    """PNG map of a scalar field over a 2-D grid (failed/missing cells blank)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    (n0, a0), (n1, a1) = list(data.axes.items())
    z = data.fields[field]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    m = ax.pcolormesh(a1, a0, np.ma.masked_invalid(z), shading="nearest")
    fig.colorbar(m, ax=ax, label=field)
    ax.set_xlabel(n1)
    ax.set_ylabel(n0)
    ax.set_title(f"{data.study}: {field}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return os.fspath(path)


def run(args) -> int:
    from .. import sweep as sw

    cfg = read_config(args.config)
    out = args.out or os.path.splitext(os.fspath(args.config))[0] + ".sweep"
    # the whole configuration is checked before a cluster starts or the store is touched
    sw.check_sweep(cfg["study"], grid=cfg.get("grid"), cases=cfg.get("cases"), fixed=cfg.get("fixed"))
    if args.local_cluster is not None and args.local_cluster < 1:
        raise ParameterError(f"--local-cluster must be >= 1, got {args.local_cluster}")
    if args.workers is not None and args.workers < 1:
        raise ParameterError(f"--workers must be >= 1, got {args.workers}")
    check_positive("--connect-timeout", args.connect_timeout)
    cluster = None
    try:
        if args.local_cluster is not None:
            try:
                from distributed import LocalCluster
            except ImportError as exc:
                raise sw.SchedulerError(f"--local-cluster needs dask.distributed: {exc}") from None

            cluster = LocalCluster(n_workers=args.local_cluster, threads_per_worker=1,
                                   dashboard_address=None)
        rep = sw.run_sweep(cfg["study"], out, grid=cfg.get("grid"), cases=cfg.get("cases"),
                           fixed=cfg.get("fixed"), scheduler=args.scheduler, cluster=cluster,
                           workers=args.workers, connect_timeout=args.connect_timeout,
                           retry_failed=args.retry_failed, progress=not args.no_progress)
    finally:
        if cluster is not None:
            cluster.close()
    print(f"sweep {cfg['study']}: {rep.n_cases} cases, {rep.n_done_before} already in {out}, "
          f"{rep.n_computed} computed, {rep.n_failed} failed, {rep.n_missing} missing "
          f"({rep.elapsed_s:.1f} s)")
    for f in rep.failures[:10]:
        print(f"  failed {f['params']}: {f['error']}", file=sys.stderr)
    if rep.failures:  # the traceback of the first failure (all of them are in the case files)
        print(f"traceback of the first failure:\n{rep.failures[0]['traceback']}", file=sys.stderr)
    if rep.interrupted:
        print(f"interrupted: run the same command again to resume from {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    data = sw.load_store(out)
    npz = data.save(os.path.join(out, "gathered.npz"))
    print(f"gathered results: {npz}")
    study = sw.STUDIES.get(cfg["study"])
    if not args.no_plot and len(data.axes) == 2 and data.fields:
        field = study.primary if study is not None and study.primary in data.fields else None
        if field is None or data.fields[field].ndim != 2:
            field = next((k for k, v in data.fields.items() if v.ndim == 2), None)
        if field is not None:
            print(f"map: {plot_map(data, field, os.path.join(out, 'map.png'))}")
    return 1 if rep.n_failed else 0
