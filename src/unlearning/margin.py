"""The restricted top-k margin of MASC and the violation statistics built on it.

MASC (arXiv 2606.02920), sections 3-5 and 7 of the method; `shared/reference/masc.md` section 2-7
maps each symbol to the official code. For a forget position t with gold token y_t:

    S(c_t)  = top-k token ids of a selecting distribution, gold excluded        (section 3)
    m_t     = beta * z[y_t] - logsumexp_{j in S} beta * z[j]                    (section 4)
    tau_rho = log(rho / (1 - rho)),   m_t <= tau  <=>  sigma(m_t) <= rho        (section 5)
    v_t     = 1[m_t > tau]  (strict),  V = mean over sequences of mean_t v_t    (section 7)

With beta = 1, sigma(m_t) is the model's probability of the gold token renormalised over
{y_t} and S, so rho reads directly as "the gold token keeps at most rho of that mass".
"""

from __future__ import annotations

import math

import torch

IGNORE_INDEX = -100


def tau_from_rho(rho: float) -> float:
    """Margin threshold tau = logit(rho) (MASC section 5); rho = 0.7 gives 0.8473."""
    if not 0.0 < rho < 1.0:
        raise ValueError(f"rho must lie strictly between 0 and 1, got {rho!r}")
    return math.log(rho / (1.0 - rho))


def restricted_margin(logits: torch.Tensor, targets: torch.Tensor, k: int = 10, beta: float = 1.0,
                      competitor_logits: torch.Tensor | None = None, delta: float | None = None) -> torch.Tensor:
    """Restricted margin m = beta*z[y] - logsumexp(beta*z[S]) at every position (MASC section 4).

    Args:
        logits: current-model logits `[..., V]`; the margin is always computed on these.
        targets: gold token ids `[...]`, all valid (mask ignored positions yourself).
        k: size of the competitor set S, 1 <= k <= V - 1.
        beta: inverse temperature applied to gold and competitors alike (> 0).
        competitor_logits: if given (teacher mode, section 3), S is chosen from these logits,
            e.g. those of the frozen original model; otherwise from `logits` (self mode).
        delta: if given, drop ids of S whose selecting logit is below the best one in S
            minus delta (the official "delta filter"; the best competitor always stays).

    Returns:
        margins `[...]` in float32. The choice of S carries no gradient; gradients flow
        through the gold and competitor logit values.
    """
    vocab = logits.shape[-1]
    if not 1 <= k <= vocab - 1:
        raise ValueError(f"k must satisfy 1 <= k <= vocab_size - 1 = {vocab - 1}, got {k!r}")
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if delta is not None and delta < 0:
        raise ValueError(f"delta must be >= 0 or None, got {delta!r}")
    logits = logits.float()
    targets = targets.long().unsqueeze(-1)  # [..., 1]
    selector = logits if competitor_logits is None else competitor_logits.float()
    if selector.shape != logits.shape:
        raise ValueError(f"competitor_logits shape {tuple(selector.shape)} != logits shape {tuple(logits.shape)}")
    with torch.no_grad():
        masked = selector.detach().scatter(-1, targets, float("-inf"))
        top_values, top_ids = masked.topk(k, dim=-1)  # [..., k], sorted descending
        keep = torch.ones_like(top_values, dtype=torch.bool)
        if delta is not None:
            keep = top_values >= top_values[..., :1] - delta
    gold = logits.gather(-1, targets).squeeze(-1)  # [...]
    rivals = logits.gather(-1, top_ids)  # [..., k]
    rivals = (beta * rivals).masked_fill(~keep, float("-inf"))
    return beta * gold - torch.logsumexp(rivals, dim=-1)


def shifted_margins(logits: torch.Tensor, labels: torch.Tensor, k: int = 10, beta: float = 1.0,
                    competitor_logits: torch.Tensor | None = None,
                    delta: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Margins of next-token predictions for HF-aligned `logits [B,T,V]` and `labels [B,T]`.

    Position t of the output scores logits[:, t] against labels[:, t+1] (the usual shift).
    Returns `(margins [B,T-1], mask [B,T-1] bool)`; margins at masked positions are computed
    on a placeholder id and must be ignored through `mask`.
    """
    logits, targets = logits[:, :-1], labels[:, 1:]
    if competitor_logits is not None:
        competitor_logits = competitor_logits[:, :-1]
    mask = targets != IGNORE_INDEX
    safe_targets = targets.masked_fill(~mask, 0)
    margins = restricted_margin(logits, safe_targets, k, beta, competitor_logits, delta)
    return margins, mask


def suffix_mask(
    mask: torch.Tensor,
    cut_min: float = 0.2,
    cut_max: float = 0.6,
    min_prefix: int = 32,
    min_suffix: int = 32,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Restrict each row of a label mask to its continuation region (MASC section 2).

    For a row with L labelled positions: if L < min_prefix + min_suffix all L are kept
    (the fallback that covers most TOFU answers); otherwise r ~ U[cut_min, cut_max] is drawn
    afresh, cut = clamp(floor(r*L), min_prefix, L - min_suffix), and positions cut..L-1 (in
    the order of labelled positions) are kept. cut_min == cut_max gives a fixed cut.
    """
    if not 0.0 <= cut_min <= cut_max <= 1.0:
        raise ValueError(f"need 0 <= cut_min <= cut_max <= 1, got cut_min={cut_min}, cut_max={cut_max}")
    if min_prefix < 0 or min_suffix < 1:
        raise ValueError(f"need min_prefix >= 0 and min_suffix >= 1, got {min_prefix}, {min_suffix}")
    rank = mask.long().cumsum(dim=1) - 1  # [B,T]: index of each labelled position in its row
    lengths = mask.sum(dim=1)  # [B]
    # r and r * L in float64, as the official code's Python floats: in float32 a fixed r = 0.7
    # with L = 170 floors to 119 instead of 118
    r = cut_min + (cut_max - cut_min) * torch.rand(mask.shape[0], generator=generator, dtype=torch.float64)
    r = r.to(mask.device)  # drawn on the CPU generator, used where the mask lives
    cut = torch.floor(r * lengths.double()).long()
    cut = torch.maximum(cut, torch.full_like(cut, min_prefix))
    cut = torch.minimum(cut, lengths - min_suffix)
    cut = torch.where(lengths < min_prefix + min_suffix, torch.zeros_like(cut), cut)
    return mask & (rank >= cut.unsqueeze(1))


# MASC's margins of a forget batch under a model: one forward pass (and the teacher's, in teacher
# mode), the margins of every labelled position, then the continuation region cut afresh


def model_inputs(batch: dict) -> dict:
    """What a causal LM is called with: a collated batch's ids and attention mask."""
    return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}


# decoder families whose logits are exactly their output layer applied to the last hidden states
# (no soft-capping or scaling of the logits) and whose forward takes `logits_to_keep`: for them only
# the positions a loss or a metric reads go through that layer
HEAD_ON_HIDDEN = frozenset({"llama", "qwen2", "qwen3", "mistral"})


def answer_logits(model, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch's (logits, labels) at the positions a loss reads (where some row has a next-token
    label, then one more), in the losses' layout (`logits[:, t]` predicts `labels[:, t + 1]`): each
    loss sees the whole forward pass's pairs, in order, for 1/1.13 of a SmolLM2 step (perf section 7).
    The model's own `logits_to_keep` picks the positions, so wrappers (LoRA, the adapter-disabled
    reference) pass it through; other decoders, and batches labelled throughout, run the whole pass."""
    labels = batch["labels"]
    keep = (labels[:, 1:] != IGNORE_INDEX).any(0).nonzero()[:, 0]
    if getattr(model.config, "model_type", None) not in HEAD_ON_HIDDEN or len(keep) in (0, labels.shape[1] - 1):
        return model(**model_inputs(batch)).logits, labels
    logits = model(**model_inputs(batch), logits_to_keep=torch.cat([keep, keep[-1:] + 1])).logits
    return logits, torch.cat([torch.full_like(labels[:, :1], IGNORE_INDEX), labels[:, keep + 1]], dim=1)


def masc_token_margins(model, batch, hp: dict, reference=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Margins `[B, T-1]` of a forget batch (self or teacher competitor set) and the mask of its
    labelled positions, before the continuation cut: what one forward pass determines."""
    logits, labels = answer_logits(model, batch)
    teacher = teacher_logits(reference, batch, hp)
    return shifted_margins(logits, labels, hp["k"], hp["beta"], teacher, hp.get("delta"))


def teacher_logits(reference, batch, hp: dict) -> torch.Tensor | None:
    """The frozen original model's logits of a batch in teacher mode (they choose the rivals S,
    MASC section 3); None in self mode."""
    if hp["competitors"] != "teacher":
        return None
    if reference is None:
        raise RuntimeError("MASC teacher mode needs the frozen original model")
    with torch.no_grad():
        return answer_logits(reference, batch)[0]


def continuation(mask: torch.Tensor, hp: dict, generator=None) -> torch.Tensor:
    """The labelled positions restricted to a freshly cut continuation region (MASC s. 2)."""
    return suffix_mask(mask, hp["cut_min"], hp["cut_max"], hp["min_prefix"], hp["min_suffix"], generator)


def violation_fractions(margins: torch.Tensor, mask: torch.Tensor, tau: float) -> torch.Tensor:
    """Per-sequence share q_i of masked positions with margin > tau (strict); 0 if none masked.

    `margins [B,T]`, `mask [B,T]` bool -> `[B]` float32 (MASC section 7).
    """
    if margins.shape != mask.shape:
        raise ValueError(f"margins shape {tuple(margins.shape)} != mask shape {tuple(mask.shape)}")
    mask = mask.bool()
    violations = ((margins.detach().float() > tau) & mask).sum(dim=1).float()
    counts = mask.sum(dim=1).float()
    return torch.where(counts > 0, violations / counts.clamp(min=1.0), torch.zeros_like(counts))


def violation_rate(margins: torch.Tensor, mask: torch.Tensor, tau: float) -> float:
    """Macro-averaged violation rate V = mean_i q_i, every sequence weighs the same (section 7)."""
    fractions = violation_fractions(margins, mask, tau)
    if fractions.numel() == 0:
        raise ValueError("violation_rate needs at least one sequence")
    return float(fractions.mean())


def exact_reproduction_bound(rho: float, violation_fraction: float, length: int) -> float:
    """MASC Proposition 1: P(y_1:L | x) <= rho ** ((1 - v) * L) when a v-fraction violates.

    Valid for beta = 1 and ordinary sampling; see masc.md section 11 for its caveats.
    """
    if not 0.0 <= violation_fraction <= 1.0:
        raise ValueError(f"violation_fraction must lie in [0, 1], got {violation_fraction!r}")
    tau_from_rho(rho)  # validates rho
    return rho ** ((1.0 - violation_fraction) * length)
