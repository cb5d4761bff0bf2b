"""Paired intervals: how far apart two models are on the same evaluation items, and how sure we are.

Every verdict of the book (`experiments.verdicts`) compares numbers with their 95 % intervals. This
module computes the intervals from a chapter's results and nothing else: the rules take numbers and
intervals (`Estimate`), so a paper's published table, which has no items, is fed to them as it is
(`from_table`, `binomial_half_width`).

- **Items.** A metric suite records every item's score beside its aggregates (`metrics["items"]`:
  evaluation set -> field -> one value per item, in the set's order), and each benchmark names the
  statistic that turns them into each aggregate (`Benchmark.statistics`: model utility, forget
  quality's inputs, KnowMem, an accuracy), written for arrays with a leading resample axis.
- **Paired bootstrap** (`bootstrap`, `difference`, `value`): two models evaluated on the same items
  differ far less than two independent samples, so the items are resampled *jointly*: one draw of
  item indices per evaluation set, shared by every model, and the aggregates recomputed on each
  resample. The 95 % percentile interval of the statistic over `RESAMPLES` resamples (seed `SEED`);
  a difference whose interval covers zero decides nothing.
- **The item quantum is a floor, never the resolution**: where a scale moves in steps (a right or
  wrong answer: 1/n of a set) the interval is at least one step wide on each side (`quantum=`).
- **Seeds**: where a profile repeats training over seeds, the seed spread is added (`with_seeds`).
- **Run time** (`run_seconds`, `time_ratio`): a run's time resampled from its own per-step wall
  times (blocks of consecutive steps, since a machine's load drifts), and the ratio of two runs' times.

Steps of a run are a time series, so resampling them draws blocks of consecutive steps (a moving
block bootstrap, block length about n^(1/3)); items are independent and are drawn one by one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np
from scipy.stats import t

RESAMPLES = 2000    # bootstrap resamples of every interval
SEED = 0            # the resampling stream: the same seed gives the same interval
CONFIDENCE = 0.95   # every interval's coverage
ALPHA = 1 - CONFIDENCE  # the level of every significance check (floors, signals): the same 5 %
Z = NormalDist().inv_cdf(1 - ALPHA / 2)  # 1.95996...

Items = Mapping[str, Mapping[str, Sequence[float]]]        # evaluation set -> field -> per-item values
Statistic = Callable[[Mapping[str, Mapping[str, np.ndarray]]], np.ndarray]  # items [R, n] -> values [R]


@dataclass(frozen=True)
class Estimate:
    """A number (a metric, a difference of two models, a ratio of run times) with its 95 % interval
    [low, high] and how the interval was computed (items, resamples, seeds; or the paper's table).
    A NaN value (a diverged run, a missing evaluation) resolves nothing."""

    value: float
    low: float
    high: float
    how: str = ""

    def __post_init__(self) -> None:
        if not any(math.isnan(x) for x in (self.value, self.low, self.high)) and self.low > self.high:
            raise ValueError(f"an interval needs low <= high, got [{self.low}, {self.high}]")

    @property
    def positive(self) -> bool:
        """The whole interval lies above zero."""
        return self.low > 0

    @property
    def negative(self) -> bool:
        """The whole interval lies below zero."""
        return self.high < 0

    @property
    def resolved(self) -> bool:
        """The interval excludes zero: the difference is real at 95 %."""
        return self.positive or self.negative

    def above(self, level: float) -> bool:
        """The whole interval lies above `level`."""
        return self.low > level

    def below(self, level: float) -> bool:
        """The whole interval lies below `level`."""
        return self.high < level

    def __neg__(self) -> Estimate:
        return Estimate(-self.value, -self.high, -self.low, self.how)

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in other units (x100 for points); a positive `factor`."""
        if factor <= 0:
            raise ValueError(f"scaled needs a positive factor, got {factor}")
        return Estimate(self.value * factor, self.low * factor, self.high * factor, self.how)

    def text(self, digits: int = 3, signed: bool = True) -> str:
        """`+0.031 [+0.010, +0.052]`: the value and its 95 % interval."""
        if math.isnan(self.value):
            return "n/a"
        f = f"{{:{'+' if signed else ''}.{digits}f}}"
        return f"{f.format(self.value)} [{f.format(self.low)}, {f.format(self.high)}]"


def floored(estimate: Estimate, quantum: float) -> Estimate:
    """`estimate` with its interval at least `quantum` wide on each side of its value: the step of
    the scale (one right or wrong answer) is the finest difference that can ever be resolved."""
    if quantum <= 0 or math.isnan(estimate.value):
        return estimate
    return replace(estimate, low=min(estimate.low, estimate.value - quantum),
                   high=max(estimate.high, estimate.value + quantum))


def from_table(value: float, half_width: float = 0.0, how: str = "the paper's table") -> Estimate:
    """A published number with the uncertainty its source states (`half_width`: e.g. the reading
    accuracy of a figure, or a sampling interval); 0 for a number taken as exact."""
    if half_width < 0:
        raise ValueError(f"half_width must be >= 0, got {half_width}")
    return Estimate(value, value - half_width, value + half_width, how)


def binomial_half_width(accuracy: float, n_questions: int, paired: bool = True) -> float:
    """The 95 % sampling half-width of an accuracy over `n_questions` (normal approximation), or of
    the difference of two independent such accuracies (`paired`: x sqrt(2), an upper bound for two
    models answering the same questions); for published accuracies, which come without items."""
    if n_questions < 1 or not 0 <= accuracy <= 1:
        raise ValueError(f"need n_questions >= 1 and an accuracy in [0, 1], got {n_questions}, {accuracy}")
    return Z * math.sqrt(accuracy * (1 - accuracy) / n_questions) * (math.sqrt(2) if paired else 1)


# -- resampling ---------------------------------------------------------------------------------

def block_length(n: int) -> int:
    """The block of a moving block bootstrap of `n` consecutive steps: about n^(1/3)."""
    return max(1, round(n ** (1 / 3)))


def draw(rng: np.random.Generator, n: int, resamples: int, block: int = 1) -> np.ndarray:
    """`resamples` rows of `n` indices into 0..n-1: independent draws (`block` 1) or runs of
    `block` consecutive indices starting anywhere a whole block fits (moving blocks). Shape [R, n]."""
    if n < 1:
        raise ValueError("cannot resample an empty set")
    block = min(max(1, block), n)
    if block == 1:
        return rng.integers(0, n, size=(resamples, n))
    blocks = -(-n // block)
    starts = rng.integers(0, n - block + 1, size=(resamples, blocks))
    return (starts[:, :, None] + np.arange(block)).reshape(resamples, blocks * block)[:, :n]


def _set_sizes(models: Mapping[str, Items]) -> dict[str, int]:
    """Each evaluation set's number of items, the same in every model and field (paired items)."""
    sizes: dict[str, int] = {}
    for name, items in models.items():
        for part, fields in items.items():
            for field, values in fields.items():
                n = len(values)
                if sizes.setdefault(part, n) != n:
                    raise ValueError(f"items of {part!r} are not paired: {name}'s {field!r} has {n} values, "
                                     f"another has {sizes[part]}")
    return sizes


def _gathered(models: Mapping[str, Items], indices: Mapping[str, np.ndarray | None]) -> dict:
    """Every model's item arrays at `indices` (per set, [R, n]); None: the items as they are ([1, n])."""
    out = {}
    for name, items in models.items():
        out[name] = {}
        for part, fields in items.items():
            index = indices.get(part)
            out[name][part] = {field: (np.asarray(values, dtype=float)[None, :] if index is None
                                       else np.asarray(values, dtype=float)[index]) for field, values in fields.items()}
    return out


def bootstrap(models: Mapping[str, Items | None], statistic: Callable[[dict], np.ndarray], *,
              resamples: int = RESAMPLES, seed: int = SEED, quantum: float = 0.0, block: int = 1,
              what: str = "items") -> Estimate:
    """The 95 % percentile interval of `statistic` over models evaluated on the same items.

    `models`: name -> items (set -> field -> values); `statistic` takes name -> set -> field ->
    array [R, n] and returns [R] (e.g. the difference of two models' model utility). Every set's
    items are drawn once per resample and shared by every model (paired). A model without items
    (a diverged run) gives NaN."""
    if any(items is None for items in models.values()):
        return Estimate(math.nan, math.nan, math.nan, "no items (a diverged run)")
    sizes = _set_sizes(models)
    rng = np.random.default_rng(seed)
    indices = {part: draw(rng, n, resamples, block) for part, n in sorted(sizes.items())}
    point = float(np.asarray(statistic(_gathered(models, {})), dtype=float).reshape(-1)[0])
    values = np.asarray(statistic(_gathered(models, indices)), dtype=float)
    values = values[np.isfinite(values)]
    if math.isnan(point) or not len(values):
        return Estimate(math.nan, math.nan, math.nan, "no finite value")
    low, high = np.quantile(values, [ALPHA / 2, 1 - ALPHA / 2])
    counts = " + ".join(str(n) for _, n in sorted(sizes.items()))
    how = (f"paired bootstrap over {counts} {what}" + (f" in blocks of {block}" if block > 1 else "")
           + f", {resamples} resamples, seed {seed}")
    return floored(Estimate(point, min(float(low), point), max(float(high), point), how), quantum)


def value(items: Items | None, statistic: Statistic, **options) -> Estimate:
    """One model's statistic with its 95 % interval over its items."""
    return bootstrap({"a": items}, lambda m: statistic(m["a"]), **options)


def difference(a: Items | None, b: Items | None, statistic: Statistic, **options) -> Estimate:
    """statistic(a) - statistic(b) for two models on the same items, paired."""
    return bootstrap({"a": a, "b": b}, lambda m: statistic(m["a"]) - statistic(m["b"]), **options)


def metric_value(metrics: Mapping, statistic: Statistic, **options) -> Estimate:
    """`value` of an evaluation's metric (a metrics dict with its `items`)."""
    return value(items_of(metrics), statistic, **options)


def metric_difference(a: Mapping, b: Mapping, statistic: Statistic, **options) -> Estimate:
    """`difference` of two evaluations (metrics dicts with their `items`) on the same items."""
    return difference(items_of(a), items_of(b), statistic, **options)


def items_of(metrics: Mapping) -> Items | None:
    """The per-item scores an evaluation recorded (None for a diverged run or an old record)."""
    items = metrics.get("items") if hasattr(metrics, "get") else None
    return items if isinstance(items, Mapping) else None


def mean_items(runs: Sequence[Items]) -> Items:
    """Per item, the mean of each field over several runs of one method (its seeds): the items a
    seed-averaged comparison resamples."""
    if not runs:
        raise ValueError("mean_items needs at least one run")
    return {part: {field: list(np.mean([np.asarray(run[part][field], float) for run in runs], axis=0))
                   for field in fields} for part, fields in runs[0].items()}


def with_seeds(estimate: Estimate, a_seeds: Sequence[float], b_seeds: Sequence[float] | None = None) -> Estimate:
    """`estimate` (of method A, or of A - B) widened by training noise: Student's t quantile times
    the seed standard error sqrt(s_a^2 / n_a + s_b^2 / n_b), with each side's sample variance of the
    statistic over its seeds (a side run once borrows the other's variance; `b_seeds` None: a value
    of A alone) and the pooled degrees of freedom (the seeds less one per side that has several),
    added in quadrature to each side of the item interval. A few seeds estimate their spread
    poorly, which the t quantile pays for (4.30 with 3 seeds against the normal 1.96)."""
    sides = [list(map(float, s)) for s in (a_seeds, b_seeds or ())]
    spread = [np.var(s, ddof=1) for s in sides if len(s) > 1]
    if not spread or math.isnan(estimate.value):
        return estimate
    shared = float(np.mean(spread))
    se2 = sum((np.var(s, ddof=1) if len(s) > 1 else shared) / max(len(s), 1)
              for s in (sides if b_seeds is not None else sides[:1]))
    freedom = sum(len(s) - 1 for s in sides if len(s) > 1)
    seed = float(t.ppf(1 - ALPHA / 2, freedom)) * math.sqrt(se2)
    seeds = f"{len(a_seeds)}" + (f" and {len(b_seeds)}" if b_seeds is not None else "")
    return Estimate(estimate.value, estimate.value - math.hypot(estimate.value - estimate.low, seed),
                    estimate.value + math.hypot(estimate.high - estimate.value, seed),
                    f"{estimate.how}; widened by the spread over {seeds} training seeds")


# -- run time -----------------------------------------------------------------------------------

def step_seconds(record: Mapping) -> list[float]:
    """The wall seconds of each optimizer step of a run (its probes included) from its log."""
    return [float(e.get("seconds", 0.0)) + float(e.get("probe_seconds", 0.0)) for e in record.get("log", [])]


def _resampled_totals(record: Mapping, rng: np.random.Generator, resamples: int) -> tuple[float, np.ndarray]:
    """A run's total seconds (training plus probes) and `resamples` totals redrawn from its own
    per-step times (moving blocks), each scaled to the recorded total (set-up and merging included)."""
    total = float(record["train_seconds"] + record["probe_seconds"])
    steps = np.asarray(step_seconds(record))
    if len(steps) < 2 or steps.sum() <= 0:
        return total, np.full(resamples, total)
    index = draw(rng, len(steps), resamples, block_length(len(steps)))
    return total, total * steps[index].sum(axis=1) / steps.sum()


def run_seconds(record: Mapping, *, resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """A run's wall time with the 95 % interval of a rerun under the same load: its per-step
    times resampled in blocks of consecutive steps (`_resampled_totals`)."""
    total, draws = _resampled_totals(record, np.random.default_rng(seed), resamples)
    low, high = np.quantile(draws, [ALPHA / 2, 1 - ALPHA / 2])
    return Estimate(total, min(float(low), total), max(float(high), total),
                    f"{len(step_seconds(record))} steps resampled in blocks, {resamples} resamples, seed {seed}")


def time_ratio(numerator: Mapping, denominator: Mapping, *, extra: tuple[float, float] = (0.0, 0.0),
               resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """(numerator's seconds + extra[0]) / (denominator's seconds + extra[1]) for two runs (records
    with per-step logs), each run's time resampled independently (`run_seconds`); `extra` adds
    fixed seconds (evaluations paid to find a checkpoint)."""
    rng = np.random.default_rng(seed)
    (a, a_draws), (b, b_draws) = (_resampled_totals(r, rng, resamples) for r in (numerator, denominator))
    point = (a + extra[0]) / max(b + extra[1], 1e-9)
    ratios = (a_draws + extra[0]) / np.maximum(b_draws + extra[1], 1e-9)
    low, high = np.quantile(ratios, [ALPHA / 2, 1 - ALPHA / 2])
    return Estimate(point, min(float(low), point), max(float(high), point),
                    f"each run's steps resampled in blocks, {resamples} resamples, seed {seed}")


def ratio_from_bars(numerator: tuple[float, float, float], denominator: tuple[float, float, float]) -> Estimate:
    """A ratio of two published times, each (mean, low, high) of its error bars: the mean ratio
    and the smallest and largest ratio the bars allow."""
    (a, a_lo, a_hi), (b, b_lo, b_hi) = numerator, denominator
    return Estimate(a / b, a_lo / b_hi, a_hi / b_lo, "the paper's error bars")
