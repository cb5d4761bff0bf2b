"""The statistical core of every verdict (`experiments.intervals`) against slow, obvious references:
exact enumeration of every resample of a handful of items, A/A comparisons whose false-resolution
rate must be the stated 5 %, and published numbers whose intervals are worked out by hand."""

import itertools
import math

import numpy as np
import pytest

from experiments import intervals as iv


def _mean(part, field="x"):
    return lambda items: items[part][field].mean(axis=-1)


def _exact_distribution(values):
    """Every one of the n^n equally likely bootstrap resamples of `values`, its mean: the slow reference."""
    values = np.asarray(values, float)
    return np.array([values[list(index)].mean() for index in itertools.product(range(len(values)), repeat=len(values))])


def test_the_bootstrap_interval_lies_where_exact_enumeration_puts_it():
    a, b = [0.9, 0.4, 0.7, 0.1, 0.55], [0.6, 0.5, 0.2, 0.0, 0.3]
    exact = _exact_distribution(np.subtract(a, b))  # the paired difference, resample by resample (3125 of them)
    got = iv.difference({"s": {"x": a}}, {"s": {"x": b}}, _mean("s"), resamples=20000)
    assert got.value == pytest.approx(np.mean(a) - np.mean(b))
    assert np.quantile(exact, 0.015) <= got.low <= np.quantile(exact, 0.035)
    assert np.quantile(exact, 0.965) <= got.high <= np.quantile(exact, 0.985)


def test_a_difference_resamples_the_items_jointly():
    a, b = {"s": {"x": [3.0, 1.0, 4.0, 1.0, 5.0, 9.0]}}, {"s": {"x": [2.0, 7.0, 1.0, 8.0, 2.0, 8.0]}}
    paired = iv.difference(a, b, _mean("s"))
    d = {"s": {"x": list(np.subtract(a["s"]["x"], b["s"]["x"]))}}
    alone = iv.value(d, _mean("s"))  # the same draws of indices: identical numbers only if the pairs stay together
    assert (paired.low, paired.value, paired.high) == pytest.approx((alone.low, alone.value, alone.high))
    with pytest.raises(ValueError, match="not paired"):
        iv.difference(a, {"s": {"x": [1.0, 2.0]}}, _mean("s"))


def test_a_model_compared_with_itself_cannot_tell():
    items = {"s": {"x": list(np.random.default_rng(1).random(30))}}
    same = iv.difference(items, items, _mean("s"))
    assert (same.low, same.value, same.high) == (0.0, 0.0, 0.0) and not same.resolved


def test_two_seeds_of_one_method_are_resolved_at_the_stated_rate():
    # item noise only (each run answers each item with its own noise): the paired item bootstrap alone
    rng, n, trials = np.random.default_rng(7), 60, 300
    truth = rng.random(n)
    resolved = 0
    for trial in range(trials):
        runs = [{"s": {"x": list(truth + rng.normal(0, 0.2, n))}} for _ in range(2)]
        resolved += iv.difference(*runs, _mean("s"), resamples=1000, seed=trial).resolved
    assert 0.01 <= resolved / trials <= 0.09  # 5 % nominal; the percentile bootstrap is slightly liberal at n = 60


def test_with_seeds_adds_the_training_noise_items_cannot_see():
    # a shift shared by every item of a run (a seed's global luck): invisible to the items, seen by the seeds
    rng, n, trials, seeds = np.random.default_rng(3), 40, 200, 3
    truth = rng.random(n)
    plain = widened = 0
    for trial in range(trials):
        def run():
            return {"s": {"x": list(truth + rng.normal(0, 0.1) + rng.normal(0, 0.05, n))}}

        a, b = [run() for _ in range(seeds)], [run() for _ in range(seeds)]
        d = iv.difference(iv.mean_items(a), iv.mean_items(b), _mean("s"), resamples=500, seed=trial)
        plain += d.resolved
        stat = [float(np.mean(r["s"]["x"])) for r in a], [float(np.mean(r["s"]["x"])) for r in b]
        widened += iv.with_seeds(d, *stat).resolved
    assert plain / trials > 0.3        # items alone call most A/A pairs different
    assert widened / trials <= 0.08    # the seed spread brings it back to about 5 %


def test_with_seeds_by_hand():
    d = iv.Estimate(0.1, 0.08, 0.12)
    # seeds 0, 1, 2 on A (variance 1) and one run of B (borrows it): se = sqrt(1/3 + 1/1), t(0.975, 2) = 4.3027
    got = iv.with_seeds(d, [0.0, 1.0, 2.0], [5.0])
    seed = 4.302653 * math.sqrt(1 / 3 + 1)
    assert got.low == pytest.approx(0.1 - math.hypot(0.02, seed), rel=1e-5)
    assert got.high == pytest.approx(0.1 + math.hypot(0.02, seed), rel=1e-5)
    assert iv.with_seeds(d, [0.3]) == d  # one seed: nothing to add


def test_the_item_quantum_is_a_floor_not_the_interval():
    wide = iv.Estimate(0.2, 0.05, 0.4)
    assert iv.floored(wide, 0.025) == wide  # the sampling interval is wider than one item: kept
    narrow = iv.floored(iv.Estimate(0.01, 0.005, 0.012), 0.025)
    assert (narrow.low, narrow.high) == pytest.approx((-0.015, 0.035)) and not narrow.resolved
    # a difference of right/wrong answers with every item agreeing but one: never finer than one question
    a, b = {"q": {"c": [1.0] * 20}}, {"q": {"c": [1.0] * 19 + [0.0]}}
    one = iv.difference(a, b, _mean("q", "c"), quantum=1 / 20)
    assert one.value == pytest.approx(0.05) and one.low <= 0.0


def test_published_numbers_by_hand():
    # 0.5 accuracy over 400 questions: 1.96 sqrt(0.25 / 400) = 0.0490; two models: x sqrt(2) = 0.0693
    assert iv.binomial_half_width(0.5, 400, paired=False) == pytest.approx(0.0490, abs=1e-4)
    assert iv.binomial_half_width(0.5, 400) == pytest.approx(0.0693, abs=1e-4)
    from tests.experiments.test_verdicts import table_difference

    t = table_difference(iv.from_table(0.65, 0.03), iv.from_table(0.58, 0.03))
    assert (t.value, t.low, t.high) == pytest.approx((0.07, 0.07 - 0.03 * math.sqrt(2), 0.07 + 0.03 * math.sqrt(2)))
    r = iv.ratio_from_bars((545, 490, 595), (88, 64, 113))  # the MASC paper's SimNPO over MASC on TOFU
    assert (r.value, r.low, r.high) == pytest.approx((545 / 88, 490 / 113, 595 / 64))
    with pytest.raises(ValueError):
        iv.binomial_half_width(1.5, 10)
    with pytest.raises(ValueError):
        iv.Estimate(1.0, 2.0, 0.5)


def test_moving_blocks_are_runs_of_consecutive_steps():
    index = iv.draw(np.random.default_rng(0), 10, 50, block=3)
    assert index.shape == (50, 10) and index.min() >= 0 and index.max() <= 9
    for row in index:
        for start in range(0, 9, 3):  # every block of three is consecutive
            block = row[start:start + 3]
            assert list(block) == list(range(block[0], block[0] + len(block)))
    assert iv.block_length(1000) == 10 and iv.block_length(1) == 1


def _record(seconds, total=None):
    return {"train_seconds": total if total is not None else sum(seconds), "probe_seconds": 0.0,
            "log": [{"seconds": s} for s in seconds]}


def test_time_ratio_resamples_each_runs_steps():
    steady = iv.time_ratio(_record([2.0] * 50), _record([1.0] * 20))
    assert (steady.value, steady.low, steady.high) == pytest.approx((100 / 20,) * 3)  # no spread, no interval
    steps = list(1 + 2 * np.random.default_rng(0).random(50))  # a machine's load drifting from step to step
    noisy = iv.time_ratio(_record(steps), _record([1.0] * 20))
    assert noisy.value == pytest.approx(sum(steps) / 20) and noisy.low < noisy.value < noisy.high
    # the evaluations a baseline paid to find its checkpoint are fixed seconds added to its time
    assert iv.time_ratio(_record([1.0] * 10), _record([1.0] * 5), extra=(10.0, 0.0)).value == pytest.approx(4.0)
    assert iv.run_seconds(_record([1.0] * 8, total=12.0)).value == 12.0  # the recorded total, set-up included


def test_a_diverged_model_gives_no_interval():
    got = iv.difference({"s": {"x": [1.0]}}, None, _mean("s"))
    assert math.isnan(got.value) and not got.resolved and got.text() == "n/a"
