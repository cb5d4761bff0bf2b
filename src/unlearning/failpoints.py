"""Named points where a test can kill this process, to prove that an interrupted run is redone.

`reached("run:model-saved")` does nothing, unless the environment variable
`UNLEARNING_FAILPOINT` names that point: then the process kills itself with SIGKILL on the spot,
as a power cut or an out-of-memory killer would, with no chance to clean up (or, with
`UNLEARNING_FAILPOINT_SIGNAL=INT`, interrupts itself as Ctrl-C would). `name@N` waits for the
N-th time the point is reached (a chapter that records several runs, killed after the second).
The tests of `tests/system/test_interruption_*.py` set it in a subprocess and rerun the command to check
that the rerun redoes exactly the unfinished work. The points sit before, inside and after the
final writes of a run, an evaluation and a learned model.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

VARIABLE = "UNLEARNING_FAILPOINT"
SIGNAL_VARIABLE = "UNLEARNING_FAILPOINT_SIGNAL"
_times_reached: Counter = Counter()


def reached(name: str) -> None:
    """Die here (SIGKILL, or SIGINT) when `UNLEARNING_FAILPOINT` is `name` (or `name@N` and this
    is the N-th time); otherwise return at once."""
    wanted = os.environ.get(VARIABLE)
    if not wanted or wanted.split("@")[0] != name:
        return
    _times_reached[name] += 1
    if _times_reached[name] == int(wanted.partition("@")[2] or 1):
        kind = os.environ.get(SIGNAL_VARIABLE, "KILL")
        os.kill(os.getpid(), signal.SIGINT if kind == "INT" else signal.SIGKILL)
