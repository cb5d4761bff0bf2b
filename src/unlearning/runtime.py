"""How the process runs: the device, the dtype and the process group a run or an evaluation
uses (`Runtime`), process-wide switches set once by entry points, and random state that library
code borrows without leaving a trace.

One `Runtime` travels from the command line (`--device`, `--dtype`) and the notebooks'
parameters into model loading, the unlearning engine and evaluation. `device="auto"` takes a GPU
when there is one. Under `accelerate launch` (or torchrun) the processes join one group
(`Runtime.accelerator`): each takes its share of every global batch, gradients are averaged
before synthesis, and only the main process writes models, records and cache entries.

Library functions never reseed the global generators or flip process-wide switches; they take
explicit `torch.Generator`s or borrow the global one inside `own_random_state`. Entry points
(the `unlearning` command, `Lab.for_profile` in the notebooks) call `configure_process` once.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import torch
from accelerate import Accelerator
from transformers.utils import logging as hf_logging

from unlearning.choices import DEVICES, DTYPES
from unlearning.progress import interactive


def configure_process() -> None:
    """Prefer deterministic kernels (warn where none exists) and keep transformers' progress bars
    and info logs out of non-interactive output (papermill, CI)."""
    torch.use_deterministic_algorithms(True, warn_only=True)
    if not interactive():
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
        os.environ.setdefault("TQDM_DISABLE", "1")  # libraries' own bars (GGUF dequantization) too


@contextmanager
def own_random_state(seed: int):
    """Run a block on torch's global generator seeded with `seed` (model initialisation and
    LoRA adapters draw from it), then give the caller back its own random state: a run leaves
    no trace on the process, whether it was computed or read from the store."""
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


TORCH_DTYPES = {name: getattr(torch, name) for name in DTYPES}  # "float32" -> torch.float32


def launched_as_group() -> bool:
    """Was this process started as one of several by `accelerate launch` or torchrun?"""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


@lru_cache(maxsize=None)
def _accelerator(cpu: bool):
    return Accelerator(cpu=cpu)


@dataclass(frozen=True)
class Runtime:
    """Where and in which precision models run: `device` auto / cpu / cuda, `dtype` float32 or
    bfloat16 (weights and activations; losses and margins are computed in float32)."""

    device: str = "auto"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {', '.join(DEVICES)}; got {self.device!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {self.dtype!r}")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("device 'cuda' asked for, but torch sees no GPU here (use --device auto or cpu)")

    @property
    def torch_dtype(self) -> torch.dtype:
        return TORCH_DTYPES[self.dtype]

    def accelerator(self):
        """The process group when launched as several processes (else None)."""
        return _accelerator(self.device_type == "cpu") if launched_as_group() else None

    @property
    def device_type(self) -> str:
        """'cuda' or 'cpu': what `auto` resolves to on this machine."""
        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        return self.device

    def torch_device(self) -> torch.device:
        """This process's device (its own GPU in a process group)."""
        group = self.accelerator()
        return group.device if group is not None else torch.device(self.device_type)

    @property
    def processes(self) -> int:
        group = self.accelerator()
        return group.num_processes if group is not None else 1

    @property
    def is_main(self) -> bool:
        group = self.accelerator()
        return group is None or group.is_main_process

    def wait(self) -> None:
        """A barrier across the process group (nothing without one)."""
        group = self.accelerator()
        if group is not None:
            group.wait_for_everyone()

    def describe(self) -> dict:
        """What enters run and evaluation keys and records: the resolved device type, the dtype
        and the number of processes (numbers are promised equal only on the same of all three)."""
        return {"device": self.device_type, "dtype": self.dtype, "processes": self.processes}
