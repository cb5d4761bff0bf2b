"""Every loss against a loop-based reference or a value derived by hand."""

import math

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from unlearning.losses import (
    ga_loss,
    kl_to_reference,
    masc_loss,
    nll_loss,
    npo_loss,
    rmu_forget_loss,
    sequence_logprob,
    simnpo_loss,
)
from unlearning.margin import tau_from_rho


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 6, 11, generator=g) * 2
    labels = torch.randint(0, 11, (3, 6), generator=g)
    labels[:, :2] = -100  # prompt
    labels[2, 4:] = -100  # padding
    return logits, labels


def slow_seq_logprobs(logits, labels):
    """Per sequence: list of log p(label_{t+1} | logits_t) over labelled targets."""
    out = []
    for b in range(logits.shape[0]):
        terms = []
        for t in range(logits.shape[1] - 1):
            y = int(labels[b, t + 1])
            if y == -100:
                continue
            z = logits[b, t].double()
            terms.append(float(z[y] - torch.logsumexp(z, 0)))
        out.append(terms)
    return out


def test_sequence_logprob_and_nll(batch):
    logits, labels = batch
    ref = slow_seq_logprobs(logits, labels)
    assert sequence_logprob(logits, labels).tolist() == pytest.approx([sum(r) for r in ref], rel=1e-5)
    flat = [x for r in ref for x in r]
    assert float(nll_loss(logits, labels)) == pytest.approx(-sum(flat) / len(flat), rel=1e-5)
    assert float(ga_loss(logits, labels)) == pytest.approx(sum(flat) / len(flat), rel=1e-5)


def test_nll_equals_hf_model_loss():
    config = Qwen2Config(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=16)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config).eval()
    ids = torch.randint(0, 32, (2, 7))
    labels = ids.clone()
    labels[:, :3] = -100
    with torch.no_grad():
        out = model(input_ids=ids, labels=labels)
    assert float(nll_loss(out.logits, labels)) == pytest.approx(out.loss.item(), rel=1e-5)


def test_npo_loss_matches_formula_and_is_log2_scaled_at_reference(batch):
    logits, labels = batch
    beta = 0.1
    lp = [sum(r) for r in slow_seq_logprobs(logits, labels)]
    ref = torch.tensor([lp[0] + 1.0, lp[1] - 2.0, lp[2]])
    expected = sum((2 / beta) * math.log(1 + math.exp(beta * (lp_i - r))) for lp_i, r in zip(lp, ref.tolist())) / 3
    assert float(npo_loss(logits, labels, ref, beta)) == pytest.approx(expected, rel=1e-5)
    # at the reference the loss is (2/beta) log 2 whatever the logits
    at_ref = npo_loss(logits, labels, torch.tensor(lp), beta)
    assert float(at_ref) == pytest.approx((2 / beta) * math.log(2), rel=1e-5)


def test_npo_small_beta_gradient_approaches_ga_on_summed_logprob(batch):
    logits, labels = batch
    logits = logits.clone().requires_grad_(True)
    ref = sequence_logprob(logits, labels).detach()
    npo_loss(logits, labels, ref, beta=1e-4).backward()
    npo_grad = logits.grad.clone()
    logits.grad = None
    # at the reference, d/dtheta NPO = (2/2) * d logp / 3 (mean over 3 sequences): GA on summed logp
    (sequence_logprob(logits, labels).sum() / 3).backward()
    assert torch.allclose(npo_grad, logits.grad, atol=1e-4)


def test_simnpo_loss_matches_formula(batch):
    logits, labels = batch
    beta, gamma = 4.5, 0.3
    total = 0.0
    for r in slow_seq_logprobs(logits, labels):
        z = beta * (-sum(r)) / len(r) - gamma
        total += -(2 / beta) * math.log(1 / (1 + math.exp(-z)))
    assert float(simnpo_loss(logits, labels, beta, gamma)) == pytest.approx(total / 3, rel=1e-5)


def test_kl_to_reference_averages_labelled_positions_only(batch):
    logits, labels = batch
    g = torch.Generator().manual_seed(5)
    ref_logits = torch.randn(logits.shape, generator=g)
    terms = []
    for b in range(3):
        for t in range(5):
            if int(labels[b, t + 1]) == -100:
                continue
            p = ref_logits[b, t].double().softmax(0)
            q = logits[b, t].double().softmax(0)
            terms.append(float((p * (p.log() - q.log())).sum()))
    assert float(kl_to_reference(logits, ref_logits, labels)) == pytest.approx(sum(terms) / len(terms), rel=1e-5)
    assert float(kl_to_reference(logits, logits, labels)) == pytest.approx(0.0, abs=1e-6)


def test_masc_hinge_zero_below_buffer_and_above_one_past_tau():
    tau, eta = tau_from_rho(0.7), 0.25
    margins = torch.tensor([[tau - eta - 0.1, tau - eta, tau - 0.1, tau + 1e-3, tau + 2.0]])
    per_position = [masc_loss(margins[:, i:i + 1], torch.ones(1, 1, dtype=torch.bool), tau, eta) for i in range(5)]
    assert float(per_position[0]) == 0.0 and float(per_position[1]) == 0.0
    assert float(per_position[2]) == pytest.approx(0.15 / 0.25, rel=1e-5)
    assert float(per_position[3]) > 1.0 and float(per_position[4]) == pytest.approx(2.25 / 0.25, rel=1e-5)


def test_masc_loss_is_flat_mean_over_active_positions():
    tau, eta = 0.0, 0.5
    margins = torch.tensor([[1.0, -2.0, 3.0], [0.5, 9.0, 9.0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]], dtype=torch.bool)
    # active: 1.0 -> 3.0, -2.0 -> 0, 0.5 -> 2.0 ; mean = 5/3 (inactive 3.0 and 9.0 ignored)
    assert float(masc_loss(margins, mask, tau, eta)) == pytest.approx(5 / 3)
    with pytest.raises(ValueError, match="eta"):
        masc_loss(margins, mask, tau, 0.0)


def test_rmu_forget_loss_hand_value():
    acts = torch.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    control = torch.tensor([1.0, 0.0])
    # per token mean squared error: (0 + 4)/2 = 2 and (4 + 16)/2 = 10 -> mean 6
    assert float(rmu_forget_loss(acts, control)) == pytest.approx(6.0)
    assert float(rmu_forget_loss(acts, control, torch.tensor([[True, False]]))) == pytest.approx(2.0)


def test_losses_reject_bad_arguments(batch):
    logits, labels = batch
    with pytest.raises(ValueError, match="beta"):
        npo_loss(logits, labels, torch.zeros(3), beta=0.0)
    with pytest.raises(ValueError, match="beta"):
        simnpo_loss(logits, labels, beta=-1.0)
    with pytest.raises(ValueError, match="labelled"):
        nll_loss(logits, torch.full_like(labels, -100))
