"""Where our formulas must agree with the official code (issue: every formula equal to the
official code's). Each test pins one difference found by running the released code of the SAGO
and MASC papers, OpenUnlearning (OU) and MUSE side by side with ours, on values computed by hand;
the deliberate differences that remain are listed in the book's metrics appendix."""

import math
import zlib

import pytest
import torch

from unlearning.data import encode_qa, encode_text
from unlearning.benchmarks.common import EvalConfig, membership_scores as _min_k_scores
from unlearning.losses import masc_loss
from unlearning.margin import suffix_mask
from unlearning.metrics import mia, tofu
from unlearning.synthesis import combine, conflicts, geometry


# 1. SAGO: the conflict test is on signs, not on the float product
def test_sago_conflict_is_a_sign_test_that_tiny_coordinates_do_not_escape():
    g_f = [torch.tensor([1e-30, 2.0, 0.0], dtype=torch.float32)]
    g_r = [torch.tensor([-1e-30, 3.0, -1.0], dtype=torch.float32)]
    product = g_f[0] * g_r[0]
    assert product[0] == 0 and not bool(product[0] < 0)  # the product underflows: it would count as aligned
    assert conflicts(g_f[0], g_r[0]).tolist() == [True, False, False]  # a zero never conflicts
    # sago: alpha * g_r where the signs conflict, gamma * g_f elsewhere (the zero takes g_f = 0)
    assert combine(g_f, g_r, "sago")[0].tolist() == [pytest.approx(-1e-30, rel=1e-6), 2.0, 0.0]
    assert combine(g_f, g_r, "sago", alpha=2.0, gamma=0.5)[0].tolist() == [pytest.approx(-2e-30, rel=1e-6), 1.0, 0.0]
    # sago_additive: alpha * g_r everywhere plus gamma * g_f where the signs agree
    assert combine(g_f, g_r, "sago_additive")[0].tolist() == [pytest.approx(-1e-30, rel=1e-6), 5.0, -1.0]
    # the update never opposes g_r on the tiny coordinate
    assert float(combine(g_f, g_r, "sago")[0][0]) * float(g_r[0][0]) > 0
    geo = geometry(g_f, g_r, combine(g_f, g_r, "sago"), names=["model.layers.0.mlp.up_proj.weight"])
    assert geo["conflict_coordinates"] == pytest.approx(1 / 3) and geo["conflict_up_proj"] == pytest.approx(1 / 3)


# 2. the truth-ratio family carries OU's 1e-10 and never divides by zero
def test_truth_ratio_family_uses_ous_epsilon():
    # an ordinary item: geometric mean of (0.2, 0.05) = 0.1, TR = 0.1 / 0.5 = 0.2
    assert tofu.truth_ratio(0.5, [0.2, 0.05]) == pytest.approx(0.2, rel=1e-9)
    assert tofu.aggregate_truth_ratio([0.5], [[0.2, 0.05]], "closer_to_1_better") == pytest.approx(0.2, rel=1e-9)
    assert tofu.aggregate_truth_ratio([0.5], [[0.2, 0.05]], "true_better") == pytest.approx(0.8, rel=1e-9)
    assert tofu.aggregate_truth_ratio([0.5], [[0.2, 0.05]], "prob_mean") == pytest.approx(0.5 / 0.6, rel=1e-9)
    # a collapsed model: p = 1e-12 for every answer; exactly TR = 1, with the eps 1e-12 / 1.01e-10
    assert tofu.truth_ratio(1e-12, [1e-12]) == pytest.approx(1 / 101, rel=1e-9)
    assert tofu.aggregate_truth_ratio([1e-12], [[1e-12]], "prob_mean") == pytest.approx(1e-12 / (2e-12 + 1e-10), rel=1e-9)
    assert tofu.probability_normalised(1e-12, [1e-12, 1e-12]) == pytest.approx(1e-12 / (3e-12 + 1e-10), rel=1e-9)


def test_underflowed_probabilities_give_numbers_not_zero_division():
    # p_correct underflowed to 0: TR = 1e-3 / 1e-10 = 1e7
    assert tofu.truth_ratio(0.0, [1e-3, 1e-3]) == pytest.approx(1e7, rel=1e-9)
    assert tofu.aggregate_truth_ratio([0.0], [[1e-3, 1e-3]], "closer_to_1_better") == pytest.approx(1e-7, rel=1e-9)
    assert tofu.aggregate_truth_ratio([0.0], [[1e-3, 1e-3]], "true_better") == 0.0
    assert tofu.aggregate_truth_ratio([0.0], [[1e-3, 1e-3]], "prob_mean") == 0.0
    # a perturbed answer underflowed to 0: its geometric mean is 0 (OU: exp(-inf))
    assert tofu.geometric_mean([0.0, 0.1]) == 0.0
    assert tofu.aggregate_truth_ratio([0.0], [[0.0, 0.1]], "closer_to_1_better") == 0.0
    assert tofu.probability_normalised(0.0, [0.0, 0.0]) == 0.0
    assert tofu.forget_quality([1e7, 0.0], [1.0, 0.5]) == pytest.approx(1.0)  # KS on ranks: still a p-value
    with pytest.raises(ValueError, match=">= 0"):
        tofu.geometric_mean([-0.1])


# 3 and 4: which tokens the PrivLeak scores see
def _token_logprobs(model, example):
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([example.input_ids])).logits[0].double()
    logprobs = torch.log_softmax(logits[:-1], dim=-1)
    return [float(logprobs[t, y]) for t, y in enumerate(example.labels[1:]) if y != -100]


def _slow_min_k(values, k=0.4):
    return sum(sorted(values)[:max(1, int(k * len(values)))]) / max(1, int(k * len(values)))


def test_tofu_privleak_scores_drop_the_eos_from_per_token_scores_only(target, tokenizer):
    question, answer = "Where was Ann born?", "Ann was born in Fenrow."
    example = encode_qa(tokenizer, question, answer)
    assert example.labels[-1] == tokenizer.eos_token_id
    logprobs = _token_logprobs(target, example)  # every answer token and the EOS
    scores = _min_k_scores(target, tokenizer, [answer], EvalConfig(), [example])
    assert scores["min_k"][0] == pytest.approx(_slow_min_k(logprobs[:-1]), abs=1e-5)  # without the EOS
    assert scores["loss"][0] == pytest.approx(sum(logprobs) / len(logprobs), abs=1e-5)  # with it
    zlib_len = len(zlib.compress(answer.encode()))
    assert scores["zlib"][0] == pytest.approx(sum(logprobs) / len(logprobs) / zlib_len, abs=1e-6)


def test_muse_privleak_scores_text_tokens_only(target, tokenizer):
    text = "Dentisia exports salt and its capital is Marrowdale."
    example = encode_text(tokenizer, text, eos=False)
    logprobs = _token_logprobs(target, example)
    assert len(logprobs) == len(tokenizer(text, add_special_tokens=False)["input_ids"])  # no EOS scored
    scores = _min_k_scores(target, tokenizer, [text], EvalConfig())
    assert scores["min_k"][0] == pytest.approx(_slow_min_k(logprobs), abs=1e-5)
    assert scores["loss"][0] == pytest.approx(sum(logprobs) / len(logprobs), abs=1e-5)


# 5. zlib divides the per-token average
def test_zlib_score_divides_the_mean_log_prob():
    size = len(zlib.compress(b"ab"))
    assert mia.zlib_score(torch.tensor([-1.0, -3.0]), "ab") == pytest.approx(-2.0 / size)
    # the same average over twice the tokens: the same score (a sum would double it)
    assert mia.zlib_score(torch.tensor([-1.0, -3.0, -1.0, -3.0]), "ab") == pytest.approx(-2.0 / size)


# 6. Min-K% keeps max(1, floor(k T)) tokens
def test_min_k_keeps_floor_of_k_t_with_a_minimum_of_one():
    lp = torch.tensor([-1.0, -2.0, -3.0, -4.0])
    assert mia.min_k_count(4, 0.4) == 1 and mia.min_k_score(lp, 0.4) == -4.0  # floor(1.6) = 1 (ceil: 2, -3.5)
    assert mia.min_k_count(2, 0.4) == 1  # floor(0.8) = 0, raised to 1
    assert mia.min_k_count(5, 0.4) == 2 and mia.min_k_score(torch.tensor([-1.0, -2.0, -3.0, -4.0, -5.0]), 0.4) == -4.5
    assert mia.min_k_count(10, 0.7) == 7


# 7. Min-K%++ clamps the variance at 1e-6
def test_min_k_plus_plus_clamps_the_variance():
    # a confident position: variance 1e-10 -> clamped to 1e-6, sigma = 1e-3, z = -0.005 / 1e-3 = -5
    assert mia.min_k_plus_plus_score(torch.tensor([-0.01]), torch.tensor([-0.005]), torch.tensor([1e-10]), 1.0) \
        == pytest.approx(-5.0, rel=1e-5)
    # an ordinary one: variance 0.25, sigma 0.5; z = (-1, 1, 0, -5); lowest floor(0.5 * 4) = 2: mean -3
    lp, mu = torch.tensor([-2.0, -1.0, -1.5, -4.0]), torch.full((4,), -1.5)
    assert mia.min_k_plus_plus_score(lp, mu, torch.full((4,), 0.25), 0.5) == pytest.approx(-3.0)


# 8. the continuation cut floors r * L in float64
def test_continuation_cut_is_computed_in_float64():
    assert math.floor(0.7 * 170) == 118
    assert int(torch.floor(torch.tensor(0.7) * torch.tensor(170.0))) == 119  # what float32 gives
    mask = torch.ones(1, 171, dtype=torch.bool)
    mask[0, 0] = False  # 170 labelled positions
    kept = suffix_mask(mask, cut_min=0.7, cut_max=0.7, min_prefix=0, min_suffix=1)
    assert int(kept.sum()) == 170 - 118


# 9. the MASC hinge of a batch without an active position is 0 with a zero gradient
def test_masc_loss_without_active_positions_is_zero_with_zero_gradient():
    margins = torch.tensor([[3.0, 4.0]], requires_grad=True)
    loss = masc_loss(margins, torch.zeros(1, 2, dtype=torch.bool), tau=0.0, eta=0.5)
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert margins.grad.tolist() == [[0.0, 0.0]]


# 10. extraction strength keeps the definition (OU reports 1/|y| when the last token is wrong)
def test_extraction_strength_is_zero_when_the_last_token_is_wrong():
    assert tofu.extraction_strength([1, 2, 3], [1, 2, 4]) == 0.0
    assert tofu.extraction_strength([9, 2, 4], [1, 2, 4]) == pytest.approx(2 / 3)
    assert tofu.extraction_strength([1, 2, 4], [1, 2, 4]) == 1.0
