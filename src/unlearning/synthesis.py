"""Gradient synthesis: how the forget and retain task gradients become one update.

PCGrad / SAGO (arXiv 2604.14808), sections 3-4; `shared/reference/sago.md` sections 3-4.
alpha weighs the retain gradient g_r and gamma the forget gradient g_f *inside the combiner*.
A "module" is one parameter tensor, as in the official code.

    sum            alpha*g_r + gamma*g_f                               (GradDiff, NPO+GD, ...)
    pcgrad         per tensor: if <g_f,g_r> < 0, g_f <- g_f - <g_f,g_r>/(|g_r|^2+eps) g_r
    pcgrad_global  the same with one dot product and one norm over all tensors
    sago           per coordinate: alpha*g_r where sign(g_f)*sign(g_r) < 0, gamma*g_f elsewhere (official)
    sago_additive  per coordinate: alpha*g_r + gamma*g_f where the signs agree, alpha*g_r elsewhere

A coordinate conflicts when the *signs* of g_f and g_r differ (`conflicts`), as in the official
`_detect_conflicts`: the float product g_f*g_r underflows to -0.0 for tiny coordinates (1e-30
and -1e-30 in float32) and would count them as aligned. The rules combine in float32 whatever
the gradient dtype, and every dot product and norm accumulates in float64 (`_dot`; a documented
deviation from the bf16 arithmetic of the official code, and more accurate than its float32).
Exact zeros count as aligned in both SAGO variants, as in the official code.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from unlearning.choices import RULES

PCGRAD_EPS = 1e-10
# `conflicts` uses the sign product up to SIGN_PRODUCT_UP_TO coordinates and comparisons above (a
# real model's embedding): a speed choice only, the values are equal either way (tests/unlearning/test_synthesis.py)
SIGN_PRODUCT_UP_TO = 1 << 22


def _check(forget_grads: Sequence[torch.Tensor], retain_grads: Sequence[torch.Tensor], rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    if len(forget_grads) != len(retain_grads):
        raise ValueError(f"got {len(forget_grads)} forget gradients but {len(retain_grads)} retain gradients")
    for i, (g_f, g_r) in enumerate(zip(forget_grads, retain_grads)):
        if g_f.shape != g_r.shape:
            raise ValueError(f"gradient {i}: forget shape {tuple(g_f.shape)} != retain shape {tuple(g_r.shape)}")


def conflicts(g_f: torch.Tensor, g_r: torch.Tensor) -> torch.Tensor:
    """Coordinates where forget and retain gradients point in opposite directions: the
    official sign test sign(g_f) * sign(g_r) < 0 (bool, shape of the inputs). Zeros never
    conflict; a product of signs cannot underflow as g_f * g_r would on tiny coordinates.
    Up to SIGN_PRODUCT_UP_TO coordinates it is computed as written (three kernels); above, with
    comparisons (one strictly negative, the other strictly positive: five kernels on one-byte
    masks, which move less memory). Both give the same answer on every input, NaN and infinities included."""
    if g_f.numel() <= SIGN_PRODUCT_UP_TO:
        return torch.sign(g_f).mul_(torch.sign(g_r)) < 0
    return ((g_f < 0) & (g_r > 0)) | ((g_f > 0) & (g_r < 0))


def _scaled(g: torch.Tensor, weight: float) -> torch.Tensor:
    """weight * g, without a pass over memory when the weight is 1 (the default)."""
    return g if weight == 1 else g * weight


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """<a, b> of two tensors of one shape, accumulated in float64 (a 0-dim float64 tensor).

    torch.dot on float32 inputs accumulates in float32 on the CPU: issue 36 measured a PCGrad
    update on SmolLM2-135M's gradients 1.1e-5 relative from a float64 evaluation of the same
    formula that way (the official code's `(f * r).sum()`: 6e-8). Every dot product and squared
    norm of this module goes through here."""
    return torch.dot(a.reshape(-1).double(), b.reshape(-1).double())


def _pcgrad_update(g_f: torch.Tensor, g_r: torch.Tensor, dot: torch.Tensor, norm_sq: torch.Tensor,
                   alpha: float, gamma: float) -> torch.Tensor:
    """alpha*g_r + gamma*g_f', with g_f' = g_f minus its component along g_r when they conflict
    (one-sided PCGrad: dot < 0), i.e. gamma*g_f + (alpha - gamma*c)*g_r in one fused pass."""
    coefficient = torch.where(dot < 0, dot / (norm_sq + PCGRAD_EPS), torch.zeros_like(dot))
    return torch.addcmul(_scaled(g_f, gamma), g_r, alpha - gamma * coefficient)


def combine(
    forget_grads: Sequence[torch.Tensor],
    retain_grads: Sequence[torch.Tensor],
    rule: str,
    alpha: float = 1.0,
    gamma: float = 1.0,
) -> list[torch.Tensor]:
    """Combine per-parameter forget and retain gradients into the final update direction.

    Inputs are not modified; one new float32 tensor per parameter is returned (cast it to
    the parameter dtype when writing it into `.grad`).
    """
    _check(forget_grads, retain_grads, rule)
    f = [g.float() for g in forget_grads]
    r = [g.float() for g in retain_grads]
    if rule == "sum":
        return [torch.add(_scaled(g_f, gamma), g_r, alpha=alpha) for g_f, g_r in zip(f, r)]
    if rule == "pcgrad":
        return [_pcgrad_update(g_f, g_r, _dot(g_f, g_r), _dot(g_r, g_r), alpha, gamma) for g_f, g_r in zip(f, r)]
    if rule == "pcgrad_global":
        dot = sum(_dot(g_f, g_r) for g_f, g_r in zip(f, r))
        norm_sq = sum(_dot(g_r, g_r) for g_r in r)
        return [_pcgrad_update(g_f, g_r, dot, norm_sq, alpha, gamma) for g_f, g_r in zip(f, r)]
    if rule == "sago":
        return [torch.where(conflicts(g_f, g_r), _scaled(g_r, alpha), _scaled(g_f, gamma)) for g_f, g_r in zip(f, r)]
    # sago_additive
    return [torch.add(_scaled(g_r, alpha), torch.where(conflicts(g_f, g_r), 0.0, g_f), alpha=gamma) for g_f, g_r in zip(f, r)]


def _cosine(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> float:
    dot = sum(float(_dot(x.float(), y.float())) for x, y in zip(a, b))
    norm_a = sum(float(_dot(x.float(), x.float())) for x in a) ** 0.5
    norm_b = sum(float(_dot(y.float(), y.float())) for y in b) ** 0.5
    return dot / (norm_a * norm_b) if norm_a > 0 and norm_b > 0 else 0.0


def module_group(name: str) -> str:
    """The kind of a parameter tensor, for per-module statistics: 'q_proj', 'down_proj',
    'input_layernorm', 'embed_tokens', ... (the layer index dropped)."""
    parts = name.split(".")
    return parts[-2] if parts[-1] in ("weight", "bias") and len(parts) > 1 else parts[-1]


# the rules compared on the same gradients at every logged step (chapter 10's honest test)
COMPARED_RULES = ("sum", "pcgrad_global", "pcgrad", "sago")


def update_geometry(update: Sequence[torch.Tensor], forget_grads: Sequence[torch.Tensor],
                    retain_grads: Sequence[torch.Tensor]) -> dict[str, float]:
    """How the optimiser's actual step moved against each task (issue 31; the empirical question
    beside the SAGO paper's guarantee, which is about g_final, not the step): cos(update, -g_r) and
    cos(update, -g_f), with `update` the change of the parameters over one optimizer step. Positive:
    the step descends that task's loss to first order; negative: it opposes it. Under SGD the
    update is -lr * g_final (plus weight decay), so cos(update, -g_r) keeps the rule's guarantee;
    under AdamW every coordinate is rescaled by its own second moment, and it need not."""
    return {"cos_update_retain": -_cosine(update, retain_grads), "cos_update_forget": -_cosine(update, forget_grads)}


def geometry(
    forget_grads: Sequence[torch.Tensor],
    retain_grads: Sequence[torch.Tensor],
    final: Sequence[torch.Tensor],
    names: Sequence[str] | None = None,
    alpha: float = 1.0,
    gamma: float = 1.0,
) -> dict[str, float]:
    """Gradient-geometry diagnostics of one step (SAGO paper, section 11 of sago.md).

    Global cosines forget-retain, final-retain and final-forget; the fraction of coordinates
    whose signs conflict (`conflicts`); the fraction of modules (tensors) with <g_f, g_r> < 0; for every rule of
    `COMPARED_RULES`, the cosine with g_r that the rule would give on these same gradients
    (`cos_retain_<rule>`); with `names`, the conflicting-coordinate fraction per module kind
    (`conflict_<kind>`).
    """
    signs = [conflicts(g_f, g_r) for g_f, g_r in zip(forget_grads, retain_grads)]
    conflicting = sum(int(c.sum()) for c in signs)
    total = sum(g.numel() for g in forget_grads)
    modules = sum(float(_dot(g_f.float(), g_r.float())) < 0 for g_f, g_r in zip(forget_grads, retain_grads))
    out = {
        "cos_forget_retain": _cosine(forget_grads, retain_grads),
        "cos_final_retain": _cosine(final, retain_grads),
        "cos_final_forget": _cosine(final, forget_grads),
        "conflict_coordinates": conflicting / max(total, 1),
        "conflict_modules": modules / max(len(forget_grads), 1),
    }
    for rule in COMPARED_RULES:
        out[f"cos_retain_{rule}"] = _cosine(combine(forget_grads, retain_grads, rule, alpha, gamma), retain_grads)
    if names is not None:
        counts: dict[str, list[int]] = {}
        for name, conflicting_coordinates in zip(names, signs):
            tally = counts.setdefault(module_group(name), [0, 0])
            tally[0] += int(conflicting_coordinates.sum())
            tally[1] += conflicting_coordinates.numel()
        out.update({f"conflict_{kind}": bad / max(n, 1) for kind, (bad, n) in counts.items()})
    return out
