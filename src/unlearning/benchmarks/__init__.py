"""The benchmarks, one module each, in one registry.

Each module defines a `Benchmark` (`unlearning.benchmarks.base`): its split names and
schemas, hub layout, how it feeds unlearning, its metric suite, its quality gates and its
oracle rule. Adding a benchmark is one new module and one line in `REGISTRY`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from unlearning.benchmarks.base import Benchmark, base_name, model_name
from unlearning.benchmarks.common import EvalConfig
from unlearning.benchmarks.muse import BOOKS, NEWS
from unlearning.benchmarks.pretrain import PRETRAIN
from unlearning.benchmarks.rwku import RWKU, RWKU_REAL
from unlearning.benchmarks.tofu import TOFU, TOFU_REAL
from unlearning.benchmarks.wmdp import WMDP

REGISTRY: dict[str, Benchmark] = {b.name: b for b in (
    TOFU,
    TOFU_REAL,
    NEWS,
    BOOKS,
    WMDP,
    RWKU,
    RWKU_REAL,
    PRETRAIN,
)}
DEFAULT = TOFU.name  # what `unlearning unlearn` runs on when neither --benchmark nor the recipe names one


def get_benchmark(name: str) -> Benchmark:
    """Look a benchmark up by name; the error lists every registered name."""
    if name not in REGISTRY:
        raise ValueError(f"benchmark must be one of {', '.join(REGISTRY)}; got {name!r}")
    return REGISTRY[name]


def unlearning_benchmarks() -> list[str]:
    """Names of the benchmarks that have forget and retain sets."""
    return [name for name, b in REGISTRY.items() if b.kind is not None]


def evaluated_benchmarks() -> list[str]:
    """Names of the benchmarks that have a metric suite."""
    return [name for name, b in REGISTRY.items() if b.suite is not None]


def eval_config(benchmark: str, forget_split: str | None = None, **changes) -> EvalConfig:
    """The evaluation config of a benchmark's forget split, where it has several to choose from
    (`Benchmark.forget_splits`; TOFU: forget01/05/10); other benchmarks ignore `forget_split`."""
    choices = get_benchmark(benchmark).forget_splits
    if not (forget_split and choices):
        return replace(EvalConfig(), **changes)
    if forget_split not in choices:
        raise ValueError(f"forget split of {benchmark} must be one of {', '.join(choices)}; got {forget_split!r}")
    return replace(EvalConfig(forget_split=forget_split), **changes)


def load(benchmark: str, source: str | Path, split: str, mirror: str | Path | None = None) -> list[dict]:
    """Records of a split of a registered benchmark, schema-checked (local folder or hub name)."""
    return get_benchmark(benchmark).load(source, split, mirror)


__all__ = ["Benchmark", "EvalConfig", "REGISTRY", "base_name", "eval_config", "evaluated_benchmarks", "get_benchmark", "load",
           "model_name", "unlearning_benchmarks"]
