"""How the process runs: process-wide switches set once by entry points, and random state that
library code borrows without leaving a trace.

Library functions never reseed the global generators or flip process-wide switches; they take
explicit `torch.Generator`s or borrow the global one inside `own_random_state`. Entry points
(the `unlearning` command, `Lab.for_profile` in the notebooks) call `configure_process` once.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from unlearning.progress import interactive


def configure_process() -> None:
    """Prefer deterministic kernels (warn where none exists) and keep transformers' progress bars
    and info logs out of non-interactive output (papermill, CI)."""
    from transformers.utils import logging as hf_logging

    torch.use_deterministic_algorithms(True, warn_only=True)
    if not interactive():
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


@contextmanager
def own_random_state(seed: int):
    """Run a block on torch's global generator seeded with `seed` (model initialisation and
    LoRA adapters draw from it), then give the caller back its own random state: a run leaves
    no trace on the process, whether it was computed or read from the store."""
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield
