"""Progress bars for long work: shown when a person watches, silent in papermill and CI.

Set UNLEARNING_PROGRESS=0 to silence them, =1 to force them.
"""

from __future__ import annotations

import os
import sys

from tqdm import tqdm


def interactive() -> bool:
    """True when progress should be drawn: a terminal, not CI, not a papermill kernel."""
    forced = os.environ.get("UNLEARNING_PROGRESS")
    if forced is not None:
        return forced not in ("0", "false", "no")
    if os.environ.get("CI") or os.environ.get("PAPERMILL_EXECUTION"):
        return False
    return sys.stderr.isatty()


def progress(iterable, **kwargs):
    """`tqdm(iterable)` when interactive, the bare iterable otherwise."""
    return tqdm(iterable, **kwargs) if interactive() else iterable
