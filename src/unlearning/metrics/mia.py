"""Membership inference: per-text scores and AUCs (benchmarks.md s. 2.2-2.3).

Scores here are *member-likeness* (higher = looks more like training data):
- LOSS: -mean token NLL;
- zlib: -(summed NLL) / zlib-compressed byte length of the text (Carlini et al. 2021);
- Min-K%: mean of the lowest k fraction of token log-probs (k = 0.4 for PrivLeak);
- Min-K%++ (Zhang et al. 2024, one of RWKU's MIA scores): the same over token log-probs
  standardised by the model's own next-token distribution, (log p(x_t) - mu_t) / sigma_t.
AUC(members, non-members) = P(score(non-member) > score(member)) (+ half the ties), MUSE's
orientation: a model that still remembers the forget texts gets AUC near 0, the retrained
model about 0.5. PrivLeak = (AUC_model - AUC_oracle) / AUC_oracle x 100, so the target is
strongly negative, the oracle 0, and over-unlearning positive.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import torch


def loss_score(token_logprobs: torch.Tensor) -> float:
    """-mean NLL = mean token log-prob of one text `[T]`."""
    return float(token_logprobs.mean())


def zlib_score(token_logprobs: torch.Tensor, text: str) -> float:
    """Summed log-prob divided by the zlib-compressed length of the text in bytes."""
    return float(token_logprobs.sum()) / len(zlib.compress(text.encode("utf-8")))


def min_k_score(token_logprobs: torch.Tensor, k: float = 0.4) -> float:
    """Mean of the lowest ceil(k * T) token log-probs of one text `[T]`."""
    if not 0 < k <= 1:
        raise ValueError(f"k must lie in (0, 1], got {k}")
    n = max(1, math.ceil(k * token_logprobs.numel()))
    return float(torch.sort(token_logprobs.float()).values[:n].mean())


def min_k_plus_plus_score(token_logprobs: torch.Tensor, mean: torch.Tensor, std: torch.Tensor,
                          k: float = 0.4) -> float:
    """Min-K%++: mean of the lowest ceil(k * T) of (log p(x_t) - mu_t) / sigma_t, where mu_t and
    sigma_t are the mean and standard deviation of log p(z), z ~ p(. | x_<t). A position whose
    distribution is flat (sigma_t = 0) scores 0."""
    standardised = torch.where(std > 0, (token_logprobs.float() - mean.float()) / std.float().clamp(min=1e-12),
                               torch.zeros_like(std, dtype=torch.float32))
    return min_k_score(standardised, k)


def auc(member_scores: Sequence[float], nonmember_scores: Sequence[float]) -> float:
    """P(non-member score > member score) over all pairs, ties counting one half."""
    if not member_scores or not nonmember_scores:
        raise ValueError("auc needs scores of both groups")
    members = torch.tensor(list(member_scores), dtype=torch.float64)
    others = torch.tensor(list(nonmember_scores), dtype=torch.float64)
    greater = (others[:, None] > members[None, :]).double().sum()
    ties = (others[:, None] == members[None, :]).double().sum()
    return float((greater + 0.5 * ties) / (members.numel() * others.numel()))


def privleak(auc_model: float, auc_oracle: float) -> float:
    """(AUC_model - AUC_oracle) / AUC_oracle x 100 (MUSE; 0 is ideal, << 0 under-unlearned)."""
    if auc_oracle <= 0:
        raise ValueError(f"the oracle's AUC must be > 0, got {auc_oracle}")
    return (auc_model - auc_oracle) / auc_oracle * 100
