"""MASC's forget objective for any `compute_loss`: the restricted-margin hinge as a plain function.

MASC (arXiv 2606.02920), sections 2-6: for each labelled next token in a freshly cut continuation
region, the margin of the gold token over the log-sum-exp of its top-k rivals (self or teacher),
and the buffered hinge relu(m - (tau - eta)) / eta with tau = logit(rho). The one implementation is
`losses.masc_objective`, which our engine's MASC calls too.
"""

from __future__ import annotations

import torch

from unlearning.losses import masc_objective
from unlearning.methods import MASC_DEFAULTS, get_method


def masc_settings(hparams: dict | None = None, **overrides) -> dict:
    """MASC's settings: its defaults (`methods.MASC_DEFAULTS`, the TOFU recipe's margin), updated by a
    recipe run's `hparams` and then by `overrides`, each value validated here, once. `gamma` and
    `alpha` are the recipe's weights of the hinge and of the retain term: they are kept for the caller
    (a `compute_loss` multiplies by them) and the hinge itself ignores them."""
    return get_method("MASC").hparams(**{**(hparams or {}), **overrides})


def masc_forget_loss(outputs, batch: dict, settings: dict, *, teacher_outputs=None,
                     generator: torch.Generator | None = None) -> torch.Tensor:
    """MASC's hinge of one forget batch from a causal LM's `outputs` (anything with `.logits
    [B, T, V]`) and the `batch` it was called on (`labels [B, T]`, -100 where no loss is taken).

    `settings` come from `masc_settings`; in teacher mode `teacher_outputs` are the frozen original
    model's outputs on the same batch. `generator` draws the continuation cut (give the run's own,
    seeded, for a reproducible run). Unweighted: multiply by the recipe's `gamma` yourself."""
    missing = sorted(set(MASC_DEFAULTS) - set(settings))
    if missing:
        raise ValueError(f"MASC settings lack {', '.join(missing)}: build them with masc_settings(...)")
    teacher = None
    if settings["competitors"] == "teacher":
        if teacher_outputs is None:
            raise ValueError("MASC with teacher competitors needs teacher_outputs (the frozen model's outputs)")
        teacher = teacher_outputs.logits
    return masc_objective(outputs.logits, batch["labels"], settings, teacher, generator)
