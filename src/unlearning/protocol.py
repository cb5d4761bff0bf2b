"""The book's shared protocol: the settings every run without a paper's recipe uses (the
`unlearning unlearn` command's defaults, and the chapters' comparisons beyond the papers), and
the evaluation config of a benchmark's forget split.

A recipe (`unlearning.recipes`) is a paper's own run; the protocol is the one budget and rate
the book gives every method where it compares them on equal terms (masc.md s. 12-13).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from unlearning.benchmarks import EvalConfig, get_benchmark
from unlearning.engine import OptimConfig, steps_for_epochs
from unlearning.methods import get_method
from unlearning.runs import RunSpec, StopConfig


@dataclass(frozen=True)
class Protocol:
    """The settings every chapter shares (and the command line's defaults).

    As in the MASC paper's comparison (masc.md s. 12-13): every baseline trains for a fixed
    budget of `epochs` passes over the forget set; a method whose default stop is the violation
    rule (MASC), or any method given `stop="violation"`, stops by itself once the violation rate
    falls to `tolerance`, capped at `cap` steps.
    """

    lr: float = 1e-4
    batch_size: int = 4
    epochs: float = 5.0
    cap: int = 1000
    tolerance: float = 0.475
    seed: int = 0

    def __post_init__(self) -> None:
        if not (self.epochs > 0 and math.isfinite(self.epochs)):
            raise ValueError(f"epochs must be a finite number > 0, got {self.epochs!r}")
        if self.cap < 1:
            raise ValueError(f"cap must be >= 1, got {self.cap!r}")
        if not 0 <= self.tolerance <= 1:
            raise ValueError(f"tolerance must lie in [0, 1], got {self.tolerance!r}")

    @property
    def optim(self) -> OptimConfig:
        return OptimConfig(lr=self.lr, batch_size=self.batch_size)

    def describe(self) -> str:
        """The settings in one sentence, for the pages that use them (no number typed by hand)."""
        return (f"AdamW at learning rate {self.lr:g}, {self.batch_size} forget and {self.batch_size} retain examples "
                f"per step; fixed budgets of {self.epochs:g} epoch(s) over the forget split; self-stopping runs end at "
                f"a violation rate of {self.tolerance} (at most {self.cap} steps)")

    def spec(self, benchmark: str, method: str, model: str | Path, n_forget: int, *,
             stop: "str | StopConfig | None" = None, **options) -> RunSpec:
        """The run of `method` under this protocol; `n_forget` sizes the epoch budget. `stop` is the
        method's default stop when None, a kind ("violation": at `tolerance`, capped at `cap` steps;
        "fixed": the epoch budget) or a whole StopConfig; `options` are RunSpec fields that replace
        the protocol's (rule, forget_split, hparams, max_steps, optim, seed, ...)."""
        stop = stop or get_method(method).default_stop
        if isinstance(stop, str):
            stop = StopConfig("violation", tolerance=self.tolerance) if stop == "violation" else StopConfig(stop)
        steps = self.cap if stop.kind == "violation" else steps_for_epochs(n_forget, n_forget, self.batch_size, self.epochs)
        defaults = {"max_steps": steps, "optim": self.optim, "seed": self.seed}
        return RunSpec(benchmark, method, str(model), stop=stop, **{**defaults, **options})


def eval_config(benchmark: str, forget_split: str | None = None, **changes) -> EvalConfig:
    """The evaluation config of a benchmark's forget split, where it has several to choose from
    (`Benchmark.forget_splits`; TOFU: forget01/05/10); other benchmarks ignore `forget_split`."""
    choices = get_benchmark(benchmark).forget_splits
    if not (forget_split and choices):
        return replace(EvalConfig(), **changes)
    if forget_split not in choices:
        raise ValueError(f"forget split of {benchmark} must be one of {', '.join(choices)}; got {forget_split!r}")
    return replace(EvalConfig(forget_split=forget_split), **changes)
