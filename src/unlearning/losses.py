"""Loss functions of every method in both papers, as pure functions of logits and labels.

`logits [B,T,V]` and `labels [B,T]` are aligned as in Hugging Face causal LMs: the functions
shift internally (logits[:, t] predicts labels[:, t+1]) and ignore labels equal to -100.
Everything is computed in float32. Formulas follow `shared/reference/benchmarks.md` section 3,
`masc.md` sections 6 and 9, and `sago.md` section 7.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from unlearning.margin import IGNORE_INDEX, continuation, shifted_margins, tau_from_rho


def token_logprobs(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability of each next label token: `(logprobs [B,T-1], mask [B,T-1])`.

    Masked positions hold 0, so sums over the row are sums over labelled tokens.
    """
    logits, targets = logits[:, :-1].float(), labels[:, 1:]
    mask = targets != IGNORE_INDEX
    safe = targets.masked_fill(~mask, 0).unsqueeze(-1)
    logprobs = logits.log_softmax(dim=-1).gather(-1, safe).squeeze(-1)
    return logprobs * mask, mask


def sequence_logprob(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """log pi(y | x) = sum of labelled-token log-probs, per sequence `[B]`."""
    logprobs, _ = token_logprobs(logits, labels)
    return logprobs.sum(dim=1)


def sequence_nll_and_length(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed NLL and number of labelled tokens per sequence, both `[B]`."""
    logprobs, mask = token_logprobs(logits, labels)
    return -logprobs.sum(dim=1), mask.sum(dim=1)


def nll_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Token-mean cross-entropy over all labelled tokens of the batch (= HF `outputs.loss`)."""
    logprobs, mask = token_logprobs(logits, labels)
    count = mask.sum()
    if count == 0:
        raise ValueError("nll_loss: the batch has no labelled token (all labels are -100)")
    return -logprobs.sum() / count


def ga_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Gradient ascent forget loss: -NLL (minimising it raises the forget NLL)."""
    return -nll_loss(logits, labels)


def npo_loss(logits: torch.Tensor, labels: torch.Tensor, ref_logprob: torch.Tensor, beta: float = 0.1) -> torch.Tensor:
    """NPO (arXiv 2404.05868): -(2/beta) * mean_i log sigmoid(-beta * (log pi_i - log pi_ref_i)).

    `ref_logprob [B]` is the summed log-prob of the frozen reference, so it can be cached
    once per forget example. beta -> 0 recovers gradient ascent on the summed log-prob.
    """
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    log_ratio = sequence_logprob(logits, labels) - ref_logprob.to(logits.device).float()
    return -(2.0 / beta) * F.logsigmoid(-beta * log_ratio).mean()


def simnpo_loss(logits: torch.Tensor, labels: torch.Tensor, beta: float = 4.5, gamma: float = 0.0) -> torch.Tensor:
    """SimNPO (arXiv 2410.07163): -(2/beta) * mean_i log sigmoid(beta * nll_i / len_i - gamma).

    Reference-free and length-normalised. `gamma` is the paper's reward margin; the official
    code's `delta` equals gamma / beta.
    """
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    nll, length = sequence_nll_and_length(logits, labels)
    if (length == 0).any():
        raise ValueError("simnpo_loss: a sequence has no labelled token")
    return -(2.0 / beta) * F.logsigmoid(beta * nll / length - gamma).mean()


def kl_to_reference(logits: torch.Tensor, ref_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Forward KL(p_ref || p_theta), summed over the vocabulary, averaged over labelled positions.

    Unlike OpenUnlearning's `batchmean` (benchmarks.md pitfall 4), padding and prompt
    positions do not dilute the average.
    """
    if logits.shape != ref_logits.shape:
        raise ValueError(f"ref_logits shape {tuple(ref_logits.shape)} != logits shape {tuple(logits.shape)}")
    mask = labels[:, 1:] != IGNORE_INDEX
    if mask.sum() == 0:
        raise ValueError("kl_to_reference: the batch has no labelled token")
    logp = logits[:, :-1].float().log_softmax(dim=-1)
    logq = ref_logits[:, :-1].float().log_softmax(dim=-1)
    per_position = (logq.exp() * (logq - logp)).sum(dim=-1)  # [B,T-1]
    return per_position[mask].mean()


def masc_loss(margins: torch.Tensor, mask: torch.Tensor, tau: float, eta: float) -> torch.Tensor:
    """MASC buffered hinge (section 6): mean over masked positions of relu(m - (tau - eta)) / eta.

    Zero while m <= tau - eta; above tau every term exceeds 1, so the loss upper-bounds the
    violation indicator. A flat token-level mean over the batch's active positions; a batch
    with no active position gives 0 with a zero gradient, as in the official code.
    """
    if not eta > 0:
        raise ValueError(f"eta must be > 0, got {eta!r}")
    mask = mask.bool()
    hinge = torch.relu(margins.float() - (tau - eta)) / eta
    active = hinge[mask]
    return active.mean() if active.numel() else active.sum()  # the sum of nothing: 0, still in the graph


def masc_objective(logits: torch.Tensor, labels: torch.Tensor, hp: dict, teacher_logits: torch.Tensor | None = None,
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """MASC's forget loss of one batch (sections 2-6): the restricted margin of every labelled next
    token against its top-k rivals (chosen from `logits`, or from `teacher_logits` in teacher mode),
    kept on a freshly cut continuation region (`generator` draws the cut), then the buffered hinge
    with tau = logit(rho). `hp` holds MASC's settings (`methods.MASC_DEFAULTS`'s keys). The engine's
    MASC objective and the Hugging Face drop-in (`unlearning.hf`) both call this one function."""
    margins, mask = shifted_margins(logits, labels, hp["k"], hp["beta"], teacher_logits, hp.get("delta"))
    return masc_loss(margins, continuation(mask, hp, generator), tau_from_rho(hp["rho"]), hp["eta"])


def rmu_forget_loss(activations: torch.Tensor, control: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """RMU forget term: MSE between layer activations `[B,T,H]` and the control vector c*u `[H]`.

    Averaged over batch, tokens (those in `mask [B,T]` if given) and hidden dimensions.
    """
    error = (activations.float() - control.float()).pow(2).mean(dim=-1)  # [B,T]
    return error.mean() if mask is None else error[mask.bool()].mean()


def rmu_retain_loss(activations: torch.Tensor, frozen: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """RMU retain term: MSE between current and frozen-model activations `[B,T,H]`."""
    error = (activations.float() - frozen.float()).pow(2).mean(dim=-1)
    return error.mean() if mask is None else error[mask.bool()].mean()
