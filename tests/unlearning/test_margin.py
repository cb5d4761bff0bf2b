"""Restricted margin, tau, violation statistics and the suffix region against hand values."""

import math

import pytest
import torch

from unlearning.margin import (
    exact_reproduction_bound,
    restricted_margin,
    shifted_margins,
    suffix_mask,
    tau_from_rho,
    violation_fractions,
    violation_rate,
)


def slow_margin(z, y, k, beta, selector=None, delta=None):
    """Loop-based reference for one position: sort non-gold ids by selector, take k, filter."""
    selector = z if selector is None else selector
    others = sorted((j for j in range(len(z)) if j != y), key=lambda j: -float(selector[j]))[:k]
    if delta is not None:
        best = float(selector[others[0]])
        others = [j for j in others if float(selector[j]) >= best - delta]
    return beta * float(z[y]) - math.log(sum(math.exp(beta * float(z[j])) for j in others))


def test_tau_from_rho_hand_values():
    assert tau_from_rho(0.7) == pytest.approx(0.8472978603872037)
    assert tau_from_rho(0.5) == 0.0
    assert tau_from_rho(0.2) == pytest.approx(math.log(0.25))


@pytest.mark.parametrize("rho", [0.0, 1.0, -0.1, 1.5])
def test_tau_from_rho_rejects_outside_open_interval(rho):
    with pytest.raises(ValueError, match="rho"):
        tau_from_rho(rho)


def test_margin_hand_example_k2():
    # z = [3, 1, 2, 0], gold 0: competitors {2, 1}; m = 3 - log(e^2 + e^1)
    z = torch.tensor([3.0, 1.0, 2.0, 0.0])
    m = restricted_margin(z, torch.tensor(0), k=2)
    assert float(m) == pytest.approx(3 - math.log(math.exp(2) + math.exp(1)))


def test_margin_beta1_is_renormalised_gold_probability():
    torch.manual_seed(0)
    z = torch.randn(50)
    m = restricted_margin(z, torch.tensor(7), k=5)
    others = z.clone()
    others[7] = -float("inf")
    top = others.topk(5).indices
    restricted = torch.cat([z[7:8], z[top]]).softmax(0)[0]
    assert float(torch.sigmoid(m)) == pytest.approx(float(restricted), rel=1e-5)


@pytest.mark.parametrize("k,beta,delta", [(1, 1.0, None), (3, 1.0, None), (5, 5.0, None), (4, 2.0, 0.5), (6, 1.0, 0.0)])
def test_margin_matches_loop_reference(k, beta, delta):
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(2, 3, 12, generator=g) * 3
    targets = torch.randint(0, 12, (2, 3), generator=g)
    m = restricted_margin(logits, targets, k=k, beta=beta, delta=delta)
    for b in range(2):
        for t in range(3):
            ref = slow_margin(logits[b, t], int(targets[b, t]), k, beta, delta=delta)
            assert float(m[b, t]) == pytest.approx(ref, rel=1e-5, abs=1e-5)


def test_teacher_mode_uses_teacher_ids_but_current_logits():
    current = torch.tensor([0.0, 5.0, 1.0, 2.0, 3.0])
    teacher = torch.tensor([0.0, -9.0, 8.0, 7.0, -9.0])  # teacher's top-2 non-gold ids: 2, 3
    m = restricted_margin(current, torch.tensor(0), k=2, competitor_logits=teacher)
    assert float(m) == pytest.approx(0.0 - math.log(math.exp(1.0) + math.exp(2.0)))
    # self mode would pick ids 1 and 4 instead
    m_self = restricted_margin(current, torch.tensor(0), k=2)
    assert float(m_self) == pytest.approx(0.0 - math.log(math.exp(5.0) + math.exp(3.0)))


def test_delta_filter_drops_weak_competitors():
    teacher = torch.tensor([9.0, 4.0, 3.8, 2.0])  # best non-gold 4.0; 3.8 kept at delta .5, 2.0 dropped
    current = torch.tensor([1.0, 0.5, 0.2, 3.0])
    m = restricted_margin(current, torch.tensor(0), k=3, competitor_logits=teacher, delta=0.5)
    assert float(m) == pytest.approx(1.0 - math.log(math.exp(0.5) + math.exp(0.2)))


def test_margin_gradient_flows_through_values_not_selection():
    z = torch.tensor([3.0, 1.0, 2.0, 0.0], requires_grad=True)
    restricted_margin(z, torch.tensor(0), k=2).backward()
    w = torch.tensor([math.exp(1), math.exp(2)]) / (math.exp(1) + math.exp(2))
    expected = torch.tensor([1.0, -float(w[0]), -float(w[1]), 0.0])
    assert torch.allclose(z.grad, expected, atol=1e-6)


def test_margin_computes_in_float32():
    z = torch.randn(2, 4, 16).to(torch.bfloat16)
    assert restricted_margin(z, torch.zeros(2, 4, dtype=torch.long), k=3).dtype == torch.float32


@pytest.mark.parametrize("kwargs,name", [({"k": 0}, "k"), ({"k": 16}, "k"), ({"beta": 0.0}, "beta"), ({"beta": -1.0}, "beta")])
def test_margin_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        restricted_margin(torch.randn(3, 16), torch.zeros(3, dtype=torch.long), **kwargs)


def test_shifted_margins_align_with_next_token_and_mask():
    g = torch.Generator().manual_seed(2)
    logits = torch.randn(1, 4, 10, generator=g)
    labels = torch.tensor([[-100, 3, -100, 5]])
    margins, mask = shifted_margins(logits, labels, k=2)
    assert mask.tolist() == [[True, False, True]]
    assert float(margins[0, 0]) == pytest.approx(slow_margin(logits[0, 0], 3, 2, 1.0), rel=1e-5)
    assert float(margins[0, 2]) == pytest.approx(slow_margin(logits[0, 2], 5, 2, 1.0), rel=1e-5)


def test_violation_fractions_strict_and_empty_rows():
    tau = 0.5
    margins = torch.tensor([[0.5, 0.6, 2.0, 9.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 0, 0]], dtype=torch.bool)
    # row 0: 0.5 is not > 0.5, 0.6 and 2.0 are; 9.0 is masked -> 2/3; row 1 empty -> 0; row 2 -> 0
    fractions = violation_fractions(margins, mask, tau)
    assert fractions.tolist() == pytest.approx([2 / 3, 0.0, 0.0])
    assert violation_rate(margins, mask, tau) == pytest.approx((2 / 3) / 3)


def test_violation_rate_is_macro_not_token_pooled():
    margins = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, -1.0, -1.0]])
    mask = torch.tensor([[1, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    # per sequence: 1/1 and 1/4 -> macro 0.625 (token-pooled would be 2/5)
    assert violation_rate(margins, mask, 0.0) == pytest.approx(0.625)


def test_suffix_mask_fallback_keeps_short_rows_whole():
    mask = torch.zeros(1, 70, dtype=torch.bool)
    mask[0, 10:60] = True  # 50 labelled positions < 32 + 32
    assert torch.equal(suffix_mask(mask), mask)


def test_suffix_mask_fixed_cut_and_clamp():
    mask = torch.zeros(2, 300, dtype=torch.bool)
    mask[0, 5:205] = True  # L = 200: cut = floor(0.6*200) = 120 -> positions 125..204
    mask[1, 0:100] = True  # L = 100: floor(0.6*100)=60 -> clamp to L - 40 = 60 -> kept 60..99
    out = suffix_mask(mask, cut_min=0.6, cut_max=0.6, min_prefix=32, min_suffix=40)
    assert out[0].nonzero().squeeze(1).tolist() == list(range(125, 205))
    assert out[1].nonzero().squeeze(1).tolist() == list(range(60, 100))
    out = suffix_mask(mask, cut_min=0.1, cut_max=0.1, min_prefix=32, min_suffix=40)
    assert int(out[0].nonzero()[0]) == 5 + 32  # floor(0.1*200)=20 raised to min_prefix


def test_suffix_mask_random_cut_within_range():
    mask = torch.ones(64, 100, dtype=torch.bool)
    out = suffix_mask(mask, generator=torch.Generator().manual_seed(0))
    kept = out.sum(1)
    assert int(kept.min()) >= 100 - 60 and int(kept.max()) <= 100 - 32


def test_exact_reproduction_bound_values():
    assert exact_reproduction_bound(0.7, 0.475, 44.5) == pytest.approx(0.7 ** (0.525 * 44.5))
    assert exact_reproduction_bound(0.5, 0.2, 44) == pytest.approx(2.0 ** (-35.2))
    with pytest.raises(ValueError, match="violation_fraction"):
        exact_reproduction_bound(0.7, 1.5, 10)


@pytest.mark.parametrize("shape", ["qwen2", "llama", "whole forward"])
def test_answer_logits_give_every_loss_the_whole_forward_passes_values(target, tokenizer, splits, shape):
    """Each loss and margin of a right-padded batch of answers of different lengths, from the
    output layer at the positions a loss reads (`answer_logits`), against the whole forward pass:
    the same values and the same gradient; `whole forward` is a model type outside HEAD_ON_HIDDEN."""
    import copy

    from tests.unlearning.test_metrics_generation import _llama_shaped
    from unlearning import losses
    from unlearning.data import collate
    from unlearning.margin import answer_logits, shifted_margins

    model = _llama_shaped(len(tokenizer)) if shape == "llama" else copy.deepcopy(target)
    if shape == "whole forward":
        model.config.model_type = "some-other-decoder"
    reference = copy.deepcopy(model)
    with torch.no_grad():
        for p in reference.parameters():
            p.add_(0.05 * torch.randn_like(p))
    batch = collate(splits["forget10"][:6], tokenizer.pad_token_id)
    assert batch["labels"].shape[1] - 1 > int((batch["labels"][:, 1:] != -100).any(0).sum())  # positions to skip

    def every_loss(logits, labels, ref_logits):
        margins, mask = shifted_margins(logits, labels, 3, 1.0)
        return torch.stack([losses.nll_loss(logits, labels), losses.ga_loss(logits, labels),
                            *losses.sequence_logprob(logits, labels), losses.simnpo_loss(logits, labels, 2.5, 0.1),
                            losses.kl_to_reference(logits, ref_logits, labels), margins[mask].sum(), mask.sum()])

    whole = every_loss(model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits,
                       batch["labels"], reference(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits)
    logits, labels = answer_logits(model, batch)
    kept = every_loss(logits, labels, answer_logits(reference, batch)[0])
    assert (logits.shape[1] < batch["labels"].shape[1]) == (shape != "whole forward")
    assert torch.allclose(kept, whole, rtol=1e-5, atol=1e-5)
    grads = []
    for value in (whole[0], kept[0]):
        model.zero_grad()
        value.backward(retain_graph=True)
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    assert torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6)
