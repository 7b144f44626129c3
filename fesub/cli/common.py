"""What every ``fesub`` study shares: flags, argument types, the output folder, resuming, interrupts.

Flags of every study (:func:`add_common`): ``--out DIR`` (default ``fesub-out/<study>``),
``-q/--quiet``, ``--overwrite``, ``--no-figures``, and ``-j/--jobs N`` where the study has parallel
work (:func:`usable_cores` by default where the study says so, else 1).

The output folder (:class:`StudyDir`) is resumed, never overwritten silently: each finished part
(a transient, the loci, a backbone, a basin tile) is written as it finishes, through
:mod:`fesub.io` (by the worker process that computed it, :meth:`StudyDir.submit`), and skipped on a
rerun with the same parameters; ``--overwrite`` recomputes
everything. A rerun with other parameters into a folder that holds finished parts is refused (it
would mix two runs).

Interrupts (:func:`run_study`): Ctrl-C (SIGINT) or SIGTERM leaves what was finished on disk, prints
where it is and how to resume, and exits with 130 (SIGINT) or 143 (SIGTERM), without a traceback.
Every error (bad arguments, a missing or damaged file, a run that failed or whose results are
not numbers) gives one ``fesub STUDY: error: ...`` line and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

__all__ = ["StudyParser", "HelpFormatter", "add_common", "number", "integer", "StudyDir",
           "run_study", "run_task", "Deferred", "usable_cores", "out_dir", "non_finite_results", "Interrupted", "check_interrupted",
           "raise_pending_interrupt", "EXIT_USAGE", "EXIT_SIGINT",
           "EXIT_SIGTERM"]

EXIT_USAGE, EXIT_FAILED, EXIT_SIGINT, EXIT_SIGTERM = 2, 1, 130, 143
RUN_RECORD = "fesub-run.json"


class StudyParser(argparse.ArgumentParser):
    """Argument parser whose errors are one line, ``PROG: error: MESSAGE``, and exit status 2."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows every default (``(default: ...)``) and keeps the description's line breaks."""

    def _get_help_string(self, action):
        h = action.help or ""
        d = action.default
        # identity, not equality: a default of 0 or 0.0 is shown (0 == False)
        if d is None or d is False or d is argparse.SUPPRESS or "%(default)" in h:
            return h
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return h + " (default: %(default)s)"
        return h


def _parse_bound(x: str, kind, what):
    try:
        v = kind(x)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be {what}, got {x!r}") from None
    return v


def number(*, gt=None, ge=None, lt=None, le=None, unit: str = ""):
    """argparse ``type=``: a finite float within the given bounds (the message names them)."""
    u = f" {unit}" if unit else ""
    parts = [f"> {gt:g}{u}" if gt is not None else None, f">= {ge:g}{u}" if ge is not None else None,
             f"< {lt:g}{u}" if lt is not None else None, f"<= {le:g}{u}" if le is not None else None]
    want = " and ".join(p for p in parts if p) or "a finite number"

    def conv(x: str) -> float:
        import math

        v = _parse_bound(x, float, "a number")
        ok = math.isfinite(v) and (gt is None or v > gt) and (ge is None or v >= ge) and \
            (lt is None or v < lt) and (le is None or v <= le)
        if not ok:
            raise argparse.ArgumentTypeError(f"must be {want}, got {x}")
        return v

    conv.__name__ = "number"
    return conv


def integer(*, ge=None, le=None):
    """argparse ``type=``: an integer within the given bounds (``1.5`` is refused, not truncated)."""
    want = " and ".join(p for p in (f">= {ge}" if ge is not None else None,
                                     f"<= {le}" if le is not None else None) if p) or "an integer"

    def conv(x: str) -> int:
        v = _parse_bound(x, int, "an integer")
        if (ge is not None and v < ge) or (le is not None and v > le):
            raise argparse.ArgumentTypeError(f"must be an integer {want}, got {x}")
        return v

    conv.__name__ = "integer"
    return conv


def out_dir(x: str) -> str:
    """argparse ``type=`` of ``--out``: a folder name; an empty one (which would mean the current
    folder, mixing a study's files with whatever is there) is refused."""
    if not x.strip():
        raise argparse.ArgumentTypeError("must name a folder, got an empty name "
                                         "(use --out . for the current folder)")
    return x


def usable_cores() -> int:
    """The number of CPU cores this process may run on (its affinity mask where the system has one).

    Returns
    -------
    int
        Number of cores (dimensionless count, >= 1).
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def add_common(parser, study: str, *, jobs: bool = False, figures: bool = True,
               jobs_default: int | None = 1) -> None:
    """The flags of every study: ``--out``, ``-q/--quiet``, ``--overwrite``, ``--no-figures``,
    and ``-j/--jobs`` where the study has parallel work (``jobs_default`` workers by default, the
    usable cores when None)."""
    g = parser.add_argument_group("output and execution (the same in every study)")
    g.add_argument("--out", metavar="DIR", default=f"fesub-out/{study}", type=out_dir,
                   help="output folder; an existing one is resumed (finished parts are kept)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bars or messages")
    g.add_argument("--overwrite", action="store_true",
                   help="recompute every part, replacing what the output folder holds")
    if figures:
        g.add_argument("--no-figures", action="store_true", help="write numbers only, no figures")
    if jobs:
        helptext = "worker processes for the parallel parts"
        if jobs_default is None:
            jobs_default = usable_cores()
            helptext += " (default: %(default)s, the cores this process may use; 1: all in this process)"
        g.add_argument("-j", "--jobs", type=integer(ge=1), default=jobs_default, metavar="N", help=helptext)


class Interrupted(KeyboardInterrupt):
    """Raised (as a KeyboardInterrupt) when SIGTERM arrives, so one path handles both signals."""


_received = {"signal": None}


def raise_pending_interrupt() -> None:
    """Raise again an interrupt that the study received but that did not stop it.

    Python prints and drops an exception raised in a finaliser or a weakref callback, so a SIGINT
    or SIGTERM that arrives while one runs would otherwise be lost; the handlers of
    :func:`run_study` record every signal, and each part boundary calls this."""
    sig = _received["signal"]
    if sig == signal.SIGTERM:
        raise Interrupted()
    if sig == signal.SIGINT:
        raise KeyboardInterrupt


def check_interrupted(result) -> None:
    """Re-raise the interrupt a long library run caught (its ``status == "interrupted"``)."""
    if getattr(result, "status", None) == "interrupted":
        raise KeyboardInterrupt


class StudyDir:
    """A study's output folder: validated before any work, resumed part by part.

    Parameters
    ----------
    path : str or Path
        The folder (created with its parents).
    study : str
        Study name, recorded in ``fesub-run.json``.
    parameters : dict
        The run's parameters (JSON values); a folder holding finished parts of a run with other
        parameters is refused unless ``overwrite``.
    overwrite : bool
        Recompute every part (existing files are replaced as the new ones finish).
    figures : bool
        Whether figures are drawn; :meth:`figure` records each for ``report.html``.
    """

    def __init__(self, path, study: str, parameters: dict, *, overwrite=False, figures=True,
                 quiet=False):
        from ..atomic import read_json, write_json
        from ..errors import ParameterError

        self.path, self.study, self.overwrite = Path(path), study, bool(overwrite)
        self.figures_on, self.quiet = bool(figures), bool(quiet)
        self.parameters = parameters
        self.figures: list[tuple[str, str]] = []
        self.resumed: list[str] = []
        p = self.path
        if p.exists() and not p.is_dir():
            raise ParameterError(f"--out {p} is an existing file, not a folder")
        for parent in p.parents:
            if parent.exists() and not parent.is_dir():
                raise ParameterError(f"--out {p}: {parent} is a file, not a folder")
        try:
            p.mkdir(parents=True, exist_ok=True)
            probe = p / ".fesub-write-probe"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise ParameterError(f"--out {p} is not a writable folder ({exc.strerror or exc})") from None
        record = p / RUN_RECORD
        params = _plain(parameters)
        if record.is_file() and not self.overwrite:
            old = read_json(record)
            if old.get("study") != study or old.get("parameters") != params:
                diff = sorted(k for k in set(params) | set(old.get("parameters", {}))
                              if params.get(k) != old.get("parameters", {}).get(k))
                raise ParameterError(
                    f"--out {p} holds a {old.get('study')} run with other parameters "
                    f"({', '.join(diff) or 'study'}); use --overwrite to replace it or another --out")
        write_json(record, {"study": study, "parameters": params})

    # ---- parts
    def part(self, name: str) -> Path:
        """Path of the part ``name`` (a ``.nc`` result file)."""
        from ..io import result_path

        return result_path(self.path / name)

    def done(self, name: str) -> bool:
        """Whether ``name`` finished in an earlier run (and is to be reused)."""
        ok = not self.overwrite and self.part(name).is_file()
        if ok and name not in self.resumed:
            self.resumed.append(name)
        return ok

    def load(self, name: str):
        """Reopen the finished part ``name``."""
        from ..io import load

        return load(self.part(name))

    def save(self, name: str, result):
        """Write a finished part (atomically) and return ``result``."""
        raise_pending_interrupt()
        result.save(self.part(name))
        return result

    def compute(self, name: str, fn):
        """The part ``name``: reopened if it finished before, else ``fn()`` saved as it returns.

        A result whose ``status`` is ``"interrupted"`` is not saved as finished; the interrupt is
        raised again.
        """
        if self.done(name):
            self.say(f"{name}: finished in an earlier run, reused")
            return self.load(name)
        raise_pending_interrupt()
        result = fn()
        check_interrupted(result)
        return self.save(name, result)

    def submit(self, pool, name: str, fn, *args, **kwargs):
        """The part ``name`` as a future: reopened if it finished before, else
        ``fn(*args, **kwargs)`` run on ``pool`` and saved by the worker as it returns.

        ``pool`` is a process pool (:func:`fesub.parallel.worker_pool`; ``fn`` and its arguments
        must pickle) or ``"serial"``: then the part is computed as by :meth:`compute` when its
        ``result()`` is first asked for (so that one job keeps the order in which the study uses
        the parts). A result whose ``status`` is ``"interrupted"`` is not saved; its future raises
        the interrupt.
        """
        if pool is None or pool == "serial" or self.done(name):
            return Deferred(self.compute, name, lambda: fn(*args, **kwargs))
        return pool.submit(_run_part, self.part(name), fn, args, kwargs)

    # ---- figures, messages, summary, report
    def figure(self, filename: str, caption: str) -> Path:
        """Record a figure (drawn to ``path/filename``) with a one-line caption for the report."""
        self.figures = [f for f in self.figures if f[0] != filename] + [(filename, caption)]
        return self.path / filename

    def say(self, *msg) -> None:
        if not self.quiet:
            print(*msg, flush=True)

    def finish(self, summary: dict) -> Path:
        """Write ``summary.json`` (the summary schema of :mod:`fesub.io`) and ``report.html``.

        A result that is not a number (NaN: a run that diverged, or an input out of the model's
        range) is a failure: the summary is written, marked ``"status": "failed"`` with the names
        of those results, and :class:`~fesub.errors.FesubError` is raised (exit status 2). An
        infinity is a value (a critical friction coefficient that does not exist, loci complete
        at every frequency), not a failure."""
        from ..atomic import write_json
        from ..errors import FesubError
        from .report import write_report

        if self.resumed:
            summary.setdefault("details", {})["resumed_parts"] = list(self.resumed)
        bad = non_finite_results(summary)
        if bad:
            summary["status"] = "failed"
            summary.setdefault("notes", []).append("results that are not numbers (NaN): " + ", ".join(bad))
        write_json(self.path / "summary.json", summary)
        figs = [(f, c) for f, c in self.figures if (self.path / f).is_file()]
        write_report(self.path / "report.html", summary, figs)
        if bad:
            raise FesubError(f"the run gave results that are not numbers (NaN: {', '.join(bad[:5])}"
                             f"{', ...' if len(bad) > 5 else ''}); check the inputs "
                             f"(summary in {self.path / 'summary.json'})")
        return self.path / "summary.json"


def non_finite_results(summary: dict) -> list:
    """Names of the results of a summary whose value is, or holds, NaN (an infinity is a value).

    Parameters
    ----------
    summary : dict
        A summary in the schema of :func:`fesub.io.summary_record`.

    Returns
    -------
    list of str
        The names (empty when every result is finite or not a number).
    """
    import math

    def bad(v):
        if isinstance(v, float):
            return math.isnan(v)
        if isinstance(v, dict):
            return any(bad(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return any(bad(x) for x in v)
        try:
            import numpy as np

            if isinstance(v, (np.ndarray, np.generic)) and np.asarray(v).dtype.kind in "fc":
                return bool(np.any(np.isnan(v)))
        except ImportError:  # pragma: no cover
            pass
        return False

    return [k for k, q in (summary.get("results") or {}).items()
            if bad(q.get("value") if isinstance(q, dict) else q)]


def _run_part(path, fn, args, kwargs):
    """Worker side of :meth:`StudyDir.submit`: compute the part, save it unless interrupted."""
    result = fn(*args, **kwargs)
    check_interrupted(result)
    result.save(path)
    return result


class Deferred:
    """A call made when its :meth:`result` is first asked for (then kept): the future of a task
    of a study run with one job.

    Parameters
    ----------
    fn : callable
        The task.
    *args, **kwargs
        Its arguments.
    """

    def __init__(self, fn, *args, **kwargs):
        self._call, self._done, self._value = (fn, args, kwargs), False, None

    def result(self):
        """The task's value, computed now if it was not yet (an exception of the task is raised
        here)."""
        if not self._done:
            fn, args, kwargs = self._call
            self._value, self._done, self._call = fn(*args, **kwargs), True, None
        return self._value

    def done(self) -> bool:
        """Whether the value has been computed."""
        return self._done


def run_task(pool, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` as a future: submitted to ``pool`` (a process pool from
    :func:`fesub.parallel.worker_pool`; ``fn`` and its arguments must pickle), or a
    :class:`Deferred` call when ``pool`` is ``"serial"`` or None.

    Parameters
    ----------
    pool : concurrent.futures.Executor or str or None
        Where to run.
    fn : callable
        The task, a module-level function.
    *args, **kwargs
        Its arguments.

    Returns
    -------
    concurrent.futures.Future or Deferred
        Its ``result()`` (or exception) when done; with one job computed when first asked for.
    """
    if pool is None or pool == "serial":
        return Deferred(fn, *args, **kwargs)
    return pool.submit(fn, *args, **kwargs)


def _plain(obj):
    """JSON-comparable copy of the parameters (tuples as lists, paths as strings)."""
    import json

    from ..atomic import json_default

    return json.loads(json.dumps(obj, default=json_default))


def _one_line(exc) -> str:
    """An error's message on one line (a FesubError may carry a note of several)."""
    return " ".join(str(exc).split())


def _on_sigterm(signum, frame):
    _received["signal"] = signal.SIGTERM
    raise Interrupted()


def _on_sigint(signum, frame):
    _received["signal"] = signal.SIGINT  # recorded: see raise_pending_interrupt
    raise KeyboardInterrupt


def _forget_caught_interrupt() -> None:
    """Clear CPython's record of an interrupt that left code run by ``exec`` or ``eval`` of a
    string (a dataclass or named tuple being made as a module loads, say): CPython keeps it even
    when the KeyboardInterrupt is caught further up, and a ``python -m fesub`` process then ends
    by SIGINT at exit whatever status the study returned (seen once in a test run: a Ctrl-C during
    a lazy import, the message printed, the process killed by SIGINT instead of exiting 130).
    The study has caught its interrupt and chosen its status. Best effort: CPython only."""
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (AttributeError, ValueError, OSError):  # another interpreter, or the name is gone
        pass


def run_study(args, *, exiting: bool = False) -> int:
    """Run a parsed study: exit status 0, 2 (any error: bad input, an unreadable or damaged file,
    a run that failed or gave results that are not numbers; one line on stderr), 130/143
    (interrupted).

    With ``exiting`` (the ``fesub`` command, whose process ends with the study), a study stopped
    by a signal ignores any further Ctrl-C from then on: a second Ctrl-C while it stops its
    workers, prints where it is and exits would otherwise end the process by the signal instead
    of the status 130."""
    from ..errors import FesubError

    prog = f"fesub {args.study}"
    _received["signal"] = None
    old = {}
    try:
        old = {signal.SIGTERM: signal.signal(signal.SIGTERM, _on_sigterm)}
        old[signal.SIGINT] = signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not the main thread (a test runner's worker): no handler
        pass
    try:
        status = int(args._run(args) or 0)
        raise_pending_interrupt()  # one that a finaliser swallowed after the last part
        return status
    except KeyboardInterrupt:
        if exiting and signal.SIGINT in old:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            old.pop(signal.SIGINT)  # not restored: the process ends
        if exiting:
            _forget_caught_interrupt()
        term = _received["signal"] == signal.SIGTERM or isinstance(sys.exc_info()[1], Interrupted)
        out = getattr(args, "out", None)
        where = f"finished parts are kept in {out}; " if out else ""
        print(f"\n{prog}: interrupted by {'SIGTERM' if term else 'SIGINT'}; {where}"
              f"rerun the same command to resume", file=sys.stderr)
        return EXIT_SIGTERM if term else EXIT_SIGINT
    except FesubError as exc:  # bad input, a damaged file, a run that failed: one line, status 2
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # a missing file, a full or read-only disk during the run
        print(f"{prog}: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return EXIT_USAGE
    finally:
        for sig, handler in old.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(sig, handler)
