"""Every metric against hand-computed values or a slow reference, and the cached suite."""

import math

import numpy as np
import pytest
import torch

from unlearning.metrics import mia, tofu


def test_truth_ratio_and_its_aggregations_by_hand():
    # p_correct 0.5, perturbed 0.2 and 0.05: geometric mean 0.1, TR = 0.2
    assert tofu.geometric_mean([0.2, 0.05]) == pytest.approx(0.1)
    assert tofu.truth_ratio(0.5, [0.2, 0.05]) == pytest.approx(0.2)
    pc, pp = [0.5, 0.1], [[0.2, 0.05], [0.2, 0.2]]  # TRs 0.2 and 2.0
    assert tofu.aggregate_truth_ratio(pc, pp, "closer_to_1_better") == pytest.approx((0.2 + 0.5) / 2)
    assert tofu.aggregate_truth_ratio(pc, pp, "true_better") == pytest.approx((0.8 + 0.0) / 2)
    assert tofu.aggregate_truth_ratio(pc, pp, "prob_mean") == pytest.approx((0.5 / 0.6 + 0.1 / 0.3) / 2)
    with pytest.raises(ValueError, match="aggregation"):
        tofu.aggregate_truth_ratio(pc, pp, "median")


def test_normalised_probability_forget_quality_and_utility():
    assert tofu.probability_normalised(0.6, [0.1, 0.1, 0.2]) == pytest.approx(0.6)
    values = [0.3, 1.2, 0.8, 2.0]
    assert tofu.forget_quality(values, values) == pytest.approx(1.0)
    assert tofu.forget_quality([10.0] * 30, [0.1] * 30) < 1e-10
    with pytest.raises(ValueError, match="oracle"):
        tofu.forget_quality(values, [])
    parts = {k: 0.5 for k in tofu.MODEL_UTILITY_KEYS}
    parts["ra_Q_A_ROUGE"] = 0.25
    assert tofu.model_utility(parts) == pytest.approx(9 / (8 / 0.5 + 1 / 0.25))
    assert tofu.model_utility({**parts, "wf_Truth_Ratio": 0.0}) == 0.0
    with pytest.raises(ValueError, match="lacks"):
        tofu.model_utility({"retain_Q_A_Prob": 1.0})


@pytest.mark.parametrize(("predictions", "labels", "strength", "exact"), [
    ([1, 2, 3, 4], [1, 2, 3, 4], 1.0, 1.0),
    ([9, 2, 3, 4], [1, 2, 3, 4], 0.75, 0.75),   # k* = 1
    ([1, 2, 3, 9], [1, 2, 3, 4], 0.0, 0.75),    # the last token is wrong: nothing extractable
    ([1, 9, 3, 4], [1, 2, 3, 4], 0.5, 0.75),
])
def test_extraction_strength_and_exact_memorization(predictions, labels, strength, exact):
    assert tofu.extraction_strength(predictions, labels) == pytest.approx(strength)
    assert tofu.exact_memorization(predictions, labels) == pytest.approx(exact)


def test_mia_scores_auc_and_privleak_by_hand():
    logprobs = torch.tensor([-0.1, -2.0, -0.5, -4.0, -1.0])
    assert mia.min_k_score(logprobs, 0.4) == pytest.approx((-4.0 - 2.0) / 2)  # floor(0.4*5) = 2 lowest
    assert mia.loss_score(logprobs) == pytest.approx(-7.6 / 5)
    import zlib

    assert mia.zlib_score(logprobs, "abc") == pytest.approx(-7.6 / 5 / len(zlib.compress(b"abc")))  # the mean
    # members score high (remembered): P(non-member > member) = 1 of 4 pairs plus a tie
    assert mia.auc([0.9, 0.5], [0.5, 0.1]) == pytest.approx(0.5 / 4)  # one tie (0.5, 0.5) of four pairs
    assert mia.auc([0.1], [0.9]) == 1.0 and mia.auc([0.9], [0.1]) == 0.0
    assert mia.privleak(0.0, 0.5) == pytest.approx(-100.0) and mia.privleak(0.5, 0.5) == 0.0
    assert mia.privleak(0.5, 0.0) == pytest.approx(0.5 / 1e-10 * 100)  # OU's eps: no division by zero


def test_auc_equals_a_slow_pairwise_count():
    members, others = [0.3, 0.7, 0.7, 0.1], [0.7, 0.2, 0.9]
    slow = sum((o > m) + 0.5 * (o == m) for m in members for o in others) / (len(members) * len(others))
    assert mia.auc(members, others) == pytest.approx(slow)


def test_evaluate_caches_until_model_or_config_changes(world, target, tokenizer, tmp_path):
    from unlearning.evaluate import EvalConfig, evaluate
    from unlearning.models import save_model

    save_model(target, tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "tok")
    messages = []
    first = evaluate("tofu", tmp_path / "model", world / "tofu", tmp_path / "tok", log=messages.append)
    again = evaluate("tofu", tmp_path / "model", world / "tofu", tmp_path / "tok", log=messages.append)
    assert first == again and messages[0].startswith("wrote") and messages[1].startswith("cached")
    assert 0 <= first["model_utility"] <= 1 and 0 <= first["forget_Q_A_ROUGE"] <= 1
    # against itself forget quality is 1; against an oracle that cannot tell members (AUC 0.5)
    # the trained model leaks: its forget answers look like members, PrivLeak near -100
    oracle = {**first, "privleak_auc_min_k": 0.5}
    self_compared = evaluate("tofu", tmp_path / "model", world / "tofu", tmp_path / "tok", oracle=oracle)
    assert self_compared["forget_quality"] == pytest.approx(1.0) and self_compared["privleak"] < -50
    evaluate("tofu", tmp_path / "model", world / "tofu", tmp_path / "tok", config=EvalConfig(stemmer=False),
             log=messages.append)
    assert messages[-1].startswith("wrote")
    _statistics_reproduce("tofu", first)


def _statistics_reproduce(benchmark, metrics):
    """Every aggregate the benchmark names a statistic for, recomputed from the per-item scores the
    suite recorded, equals the suite's own number (the intervals resample what the tables show)."""
    from unlearning.benchmarks import get_benchmark
    from experiments.intervals import metric_value

    statistics = get_benchmark(benchmark).statistics
    assert statistics
    if benchmark == "rwku":  # RWKU's two summaries, as the SAGO chapters read them
        from unlearning.benchmarks.rwku import summarise

        metrics = {**metrics, **summarise(metrics)}
    for key, statistic in statistics.items():
        if key in metrics:
            assert metric_value(metrics, statistic, resamples=10).value == pytest.approx(metrics[key], abs=1e-9), key


def test_model_utility_of_means_is_model_utility_for_arrays():
    from unlearning.metrics.tofu import MODEL_UTILITY_KEYS, model_utility, model_utility_of_means

    rows = [[0.5, 0.4, 0.3, 0.6, 0.2, 0.9, 0.7, 0.55, 0.45], [0.5] * 8 + [0.0]]
    got = model_utility_of_means(np.array(rows).T)
    assert list(got) == pytest.approx([model_utility(dict(zip(MODEL_UTILITY_KEYS, r))) for r in rows])
    assert got[1] == 0.0  # any part at zero makes it 0, as `model_utility` says


@pytest.mark.parametrize("benchmark", ["muse-news", "wmdp", "rwku"])
def test_other_suites_return_their_metrics(world, target, tokenizer, tmp_path, benchmark):
    from unlearning.evaluate import evaluate
    from unlearning.models import save_model

    save_model(target, tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "tok")
    metrics = evaluate(benchmark, tmp_path / "model", world / benchmark, tmp_path / "tok")
    expected = {"muse-news": {"verbmem_f", "knowmem_f", "knowmem_r", "privleak_auc_min_k", "privleak_auc_zlib"},
                "wmdp": {"wmdp-bio_accuracy", "wmdp-cyber_accuracy", "mmlu_accuracy"},
                "rwku": {"forget_level3_rougeL_recall", "neighbor_level2_rougeL_recall", "mia_auc_loss", "mia_auc_min_k_pp",
                         "mia_forget_min_k_pp"}}[benchmark]
    assert expected <= set(metrics)
    assert all(math.isfinite(v) for v in metrics.values() if isinstance(v, float))
    _statistics_reproduce(benchmark, metrics)


def test_recovery_percent():
    from unlearning.metrics.choice import recovery_percent

    assert recovery_percent(0.45, 0.6) == pytest.approx(75.0)
    with pytest.raises(ValueError):
        recovery_percent(0.3, 0.0)
