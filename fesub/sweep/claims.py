"""Which controller computes which case: claim files, and what dead controllers left behind.

Several controllers may run the same sweep into one store (two terminals, two machines sharing a
file system): before computing a case a controller claims it by creating ``claims/<hash>``
exclusively (``O_CREAT | O_EXCL``, holding its pid, host and process start time); a case
claimed by another live process is left to it (and waited for, on the same machine), a claim
whose process is gone is taken over, and a claim is released once the case file is in place.
Temporary files of a writer that was killed hard are removed by the next run
(:func:`clean_temp_files`).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time

from ..atomic import unlink_quietly

_HOST = socket.gethostname()
HOST_TAG = hashlib.sha256(_HOST.encode()).hexdigest()[:8]
#: a claim file that is empty or unreadable is taken as being written for this long (s)
CLAIM_GRACE_S = 60.0


def _proc_start(pid: int):
    """Start time of process ``pid`` (clock ticks since boot, Linux), None where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _claim_state(path: str) -> str:
    """``"live"`` (a running process of this machine holds it), ``"foreign"`` (a process whose
    life cannot be checked from here holds it: another machine, or no POSIX process table) or
    ``"stale"`` (its process is gone, or the pid now belongs to another process)."""
    try:
        with open(path, encoding="utf-8") as fh:
            info = json.loads(fh.read())
    except FileNotFoundError:
        return "stale"
    except (OSError, ValueError):
        info = None
    if not isinstance(info, dict) or not isinstance(info.get("pid"), int):
        try:  # a claim being written, or damaged: live while young
            young = time.time() - os.stat(path).st_mtime < CLAIM_GRACE_S
        except OSError:
            return "stale"
        return "live" if young else "stale"
    if info.get("host") != _HOST or os.name != "posix":
        return "foreign"
    pid = info["pid"]
    if pid <= 0 or not _pid_alive(pid):
        return "stale"
    start = info.get("start")
    if start is not None:
        now = _proc_start(pid)
        if now is not None and now != start:
            return "stale"
    return "live"


def try_claim(path: str) -> str:
    """Claim a case (``O_CREAT | O_EXCL``: one process wins): ``"claimed"``, or the state of the
    claim that another process holds (``"live"`` or ``"foreign"``). A stale claim is taken over:
    it is renamed away (one process succeeds) and the claim is made afresh."""
    text = json.dumps({"pid": os.getpid(), "host": _HOST, "start": _proc_start(os.getpid()),
                       "time": time.time()})
    for _ in range(5):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            state = _claim_state(path)
            if state != "stale":
                return state
            tomb = f"{path}.stale-{os.getpid()}-{os.urandom(4).hex()}"
            try:
                os.rename(path, tomb)
            except FileNotFoundError:  # another process took it over first
                continue
            if _claim_state(tomb) != "stale":  # a fresh claim made meanwhile: give it back
                try:
                    os.link(tomb, path)
                except OSError:
                    pass
                unlink_quietly(tomb)
                return "live"
            unlink_quietly(tomb)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return "claimed"
    return "live"  # pragma: no cover - lost five races in a row


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine exists (True where that cannot be checked)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def clean_temp_files(cases_dir: str) -> None:
    """Remove temporary files left by a hard-killed writer, not those of a writer still at work.

    A temporary file is named ``.tmp-<pid>@<host tag>-...``: one of this machine is removed when
    its process is gone; one of another machine (a store on a shared file system) when it is
    older than :data:`CLAIM_GRACE_S` (a write takes milliseconds); one without a host tag when
    either holds.
    """
    for f in os.listdir(cases_dir):
        if not f.startswith(".tmp-"):
            continue
        path = os.path.join(cases_dir, f)
        owner = f[5:].split("-", 1)[0]
        pid_text, _, host = owner.partition("@")
        try:
            pid = int(pid_text)
        except ValueError:
            pid = -1
        try:
            old = time.time() - os.stat(path).st_mtime > CLAIM_GRACE_S
        except OSError:
            continue
        dead = pid <= 0 or not _pid_alive(pid)
        if (host == HOST_TAG and dead) or (host and host != HOST_TAG and old) or \
                (not host and (dead or old)):
            unlink_quietly(path)

