"""A benchmark's metric suite on one model, cached in the store (benchmarks.md s. 2).

`evaluate(benchmark, model_dir, data_dir, tokenizer_dir, oracle=...)` returns a flat dict of
metrics and writes it to `<model_dir>/metrics/<benchmark>-<key>.json`. The key hashes the
model's weights, every data file of the benchmark, the evaluation config, the code of the
benchmark's suite and of everything it calls in the package (`store.code_key`: metrics,
tokenisation, the suites' shared helpers, model loading), and the oracle's metrics,
so a changed model, data set, setting or metric never serves a stale number
(OpenUnlearning's `overwrite: false` pitfall), while an unchanged one is read back. Editing a
benchmark's gates or another benchmark's suite does not touch it.

Metrics that compare against the retain-only oracle (TOFU forget quality, PrivLeak) need the
oracle's own metrics: evaluate the oracle first and pass its dict as `oracle`.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

from unlearning.benchmarks import TOFU, EvalConfig, evaluated_benchmarks, get_benchmark
from unlearning.models import load_model, load_tokenizer
from unlearning.runtime import Runtime
from unlearning.store import cached, code_key, content_key, file_hash, weights_hash

__all__ = ["DivergedMetrics", "EvalConfig", "cache_key", "evaluate", "is_evaluated", "metrics_path", "suite_version"]


class DivergedMetrics(dict):
    """The metrics of a run that diverged (`record['dir']` is None): no model to measure, so every
    metric reads as NaN. Tables show NaN as "diverged" (`plotting.use_book_style`), plots leave
    the point out, and a row built with `**metrics` simply lacks the columns."""

    def __init__(self) -> None:
        super().__init__(diverged=True)

    def __missing__(self, name: str) -> float:
        return float("nan")


def suite_version(benchmark: str) -> str:
    """Hash of the code that computes a benchmark's metrics (part of its cache key)."""
    return code_key(get_benchmark(benchmark).suite, load_model, load_tokenizer)


# what an evaluation records about itself, not what it measured: left out of the oracle's part of a key
COST_KEYS = ("eval_seconds",)


def cache_key(benchmark: str, model_dir: Path, data_dir: Path, config: EvalConfig, oracle: dict | None,
              runtime: Runtime = Runtime()) -> str:
    """The store key of an evaluation: the weights, every data file of the benchmark, the config, the
    suite's code, the oracle's metrics (its cost left out: an oracle evaluated again with the same
    numbers changes nothing) and the runtime."""
    oracle = None if oracle is None else {k: v for k, v in oracle.items() if k not in COST_KEYS}
    return content_key(benchmark=benchmark, weights=weights_hash(model_dir),
                       data=file_hash(*sorted(Path(data_dir).rglob("*.json"))), config=asdict(config),
                       code=suite_version(benchmark), oracle=oracle,
                       runtime={k: v for k, v in runtime.describe().items() if k != "processes"})


def evaluate(benchmark: str, model_dir: str | Path | None, data_dir: str | Path, tokenizer_dir: str | Path, *,
             config: EvalConfig = EvalConfig(), oracle: dict | None = None, log=None,
             runtime: Runtime = Runtime()) -> dict:
    """Metrics of `benchmark` for the model in `model_dir` on `runtime` (device and dtype), read
    from the store when the key matches, else computed and written atomically next to the model."""
    if model_dir is None:  # the run diverged and saved no model (`runs.run`)
        return DivergedMetrics()
    if benchmark not in evaluated_benchmarks():
        raise ValueError(f"benchmark must be one of {', '.join(evaluated_benchmarks())}; got {benchmark!r}")
    if config.forget_only and get_benchmark(benchmark).suite is not TOFU.suite:
        raise ValueError(f"forget_only: only TOFU-schema benchmarks have it, not {benchmark}")
    model_dir, data_dir = Path(model_dir), Path(data_dir)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"data: folder not found: {data_dir}")
    key = cache_key(benchmark, model_dir, data_dir, config, oracle, runtime)

    def compute() -> dict:
        start = time.perf_counter()
        model = load_model(model_dir, runtime.torch_dtype, runtime.device_type)
        tokenizer = load_tokenizer(tokenizer_dir)
        metrics = get_benchmark(benchmark).suite(model, tokenizer, data_dir, config, oracle)
        metrics["eval_seconds"] = time.perf_counter() - start  # what one evaluation costs (checkpoint selection)
        return {"key": key, "benchmark": benchmark, "config": asdict(config), "runtime": runtime.describe(),
                "metrics": metrics}

    return cached(metrics_path(model_dir, benchmark, key), compute, log)["metrics"]


def metrics_path(model_dir: str | Path, benchmark: str, key: str) -> Path:
    """Where the evaluation of `key` is cached: beside the model it measured."""
    return Path(model_dir) / "metrics" / f"{benchmark}-{key[:16]}.json"


def is_evaluated(benchmark: str, model_dir: str | Path, data_dir: str | Path, *, config: EvalConfig = EvalConfig(),
                 oracle: dict | None = None, runtime: Runtime = Runtime()) -> bool:
    """Is this evaluation in the store (readable without the model's weights)?"""
    key = cache_key(benchmark, Path(model_dir), Path(data_dir), config, oracle, runtime)
    return metrics_path(model_dir, benchmark, key).is_file()
