"""Test-only fault injection: a worker kills itself at a chosen stage of a chosen graph.

Off unless the worker's environment names a *fault plan* in ``GRAPH_EXPLORER_FAULT_PLAN``: a
JSON file ``{"rules": [{"stage": "layout", "graph": "<text>", "times": 1, "action": "kill"}]}``. At each
progress stage a worker reports, ``check(stage, graph_key)`` re-reads the plan (tests may write
it after the server started) and, when a rule's ``stage`` equals the stage and its ``graph``
occurs in ``repr(graph_key)`` (an upload id, a run name), appends the rule's index to the ledger
``<plan>.ledger`` and kills its own process with SIGKILL (``action`` ``kill``, the default), as
the kernel's OOM killer or a segfaulting extension would, or stops it with SIGSTOP (``stop``: a
wedged worker), as long as the ledger holds fewer than ``times`` entries for that rule
(``times`` null or absent: every time). Deterministic: no timing is involved.

Post-condition: without the variable, ``check`` returns at once and never reads a file.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal

__all__ = ["ENV_VAR", "check", "crashes"]

ENV_VAR = "GRAPH_EXPLORER_FAULT_PLAN"


def crashes(plan_path: str) -> list[int]:
    """Rule indices of the crashes done so far under ``plan_path``, in order."""
    try:
        with open(plan_path + ".ledger") as f:
            return [int(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def check(stage: str, graph_key) -> None:
    """Kill this process if the fault plan says so for ``stage`` of ``graph_key``."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return
    try:
        with open(path) as f:
            rules = json.load(f).get("rules", [])
    except (OSError, ValueError):
        return
    where = repr(graph_key)
    for index, rule in enumerate(rules):
        if rule.get("stage") != stage or rule.get("graph", "") not in where:
            continue
        if not _claim(path, index, rule.get("times")):
            continue
        os.kill(os.getpid(), signal.SIGSTOP if rule.get("action") == "stop" else signal.SIGKILL)
        return


def _claim(path: str, index: int, times) -> bool:
    """Record one more fault of rule ``index`` unless it has happened ``times`` times.

    Count and append under an exclusive lock of the ledger: two workers reaching the stage
    at once must not both read "0 so far" (a rule with ``times: 1`` stopped two workers).
    """
    fd = os.open(path + ".ledger", os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if times is not None and crashes(path).count(index) >= times:
            return False
        os.write(fd, f"{index}\n".encode())
        os.fsync(fd)
        return True
    finally:
        os.close(fd)  # releases the lock
