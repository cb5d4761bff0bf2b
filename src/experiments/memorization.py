"""Exact vs knowledge memorisation, and MASC's Proposition 1 checked on every sequence (masc.md s. 7),
for chapter 4's tables (`experiments.tables`).

*Exact* (verbatim) memorisation: does the model reproduce a trained surface form (greedy
ROUGE-L of trained answers, teacher-forced exact match, the pretraining probes in a trained
form)? *Knowledge* memorisation: does it still know the fact when asked in a held-out form
(paraphrased questions and answers, the held-out statement form)?

Proposition 1: if on the continuation (suffix) of a sequence of length L a fraction v of the
positions still violates the margin (m > tau = logit(rho)), then on the other (1 - v) L
positions the true token's probability is below rho, so the probability of reproducing the
whole continuation is at most rho^((1 - v) L). `proposition1_rows` puts the measured
probability next to that bound for every forget sequence.
"""

from __future__ import annotations

import math

import torch

from unlearning.data import batches, on_device
from unlearning.margin import exact_reproduction_bound, shifted_margins, suffix_mask, tau_from_rho, violation_fractions


@torch.no_grad()
def sequence_margins(model, examples, pad_token_id: int, k: int = 10, beta: float = 1.0, batch_size: int = 32,
                     competitor_model=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Restricted margins of every labelled next-token position of `examples` (MASC s. 4).

    Returns `(margins [N, T], mask [N, T])` padded to the longest example, ready for
    `margin.violation_rate`; `competitor_model` (teacher mode) picks the top-k set.
    """
    was_training = model.training
    model.eval()
    rows, masks = [], []
    for batch in batches(examples, batch_size, pad_token_id):
        batch = on_device(batch, model)
        inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
        teacher = competitor_model(**inputs).logits if competitor_model is not None else None
        margins, mask = shifted_margins(model(**inputs).logits, batch["labels"], k, beta, teacher)
        rows += list(margins.masked_fill(~mask, 0.0).cpu())
        masks += list(mask.cpu())
    model.train(was_training)
    width = max(row.shape[0] for row in rows)
    pad = lambda t, value: torch.nn.functional.pad(t, (0, width - t.shape[0]), value=value)  # noqa: E731
    return torch.stack([pad(r, 0.0) for r in rows]), torch.stack([pad(m, False) for m in masks])


@torch.no_grad()
def proposition1_rows(model, batch: dict, hparams: dict, generator: torch.Generator | None = None) -> list[dict]:
    """Per sequence of a forget batch: violation fraction v on its continuation, the number L
    of continuation positions, log10 of the measured probability of reproducing exactly the
    continuation (teacher forcing), and log10 of the bound rho^((1 - v) L)."""
    was_training = model.training
    model.eval()
    device_batch = on_device(batch, model)
    logits = model(input_ids=device_batch["input_ids"], attention_mask=device_batch["attention_mask"]).logits.float().cpu()
    model.train(was_training)
    margins, mask = shifted_margins(logits, batch["labels"], hparams["k"], hparams["beta"], None, hparams.get("delta"))
    mask = suffix_mask(mask, hparams["cut_min"], hparams["cut_max"], hparams["min_prefix"], hparams["min_suffix"],
                       generator)
    fractions = violation_fractions(margins, mask, tau_from_rho(hparams["rho"]))
    targets = batch["labels"][:, 1:]
    token_logprobs = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, targets.clamp(min=0)[..., None]).squeeze(-1)
    rows = []
    for i in range(targets.shape[0]):
        positions = mask[i].bool()
        length = int(positions.sum())
        if length == 0:
            continue
        measured = float(token_logprobs[i][positions].sum()) / math.log(10)
        exact_reproduction_bound(hparams["rho"], float(fractions[i]), length)  # validates the inputs
        # log10 of rho ** ((1 - v) L), computed in log space so long sequences do not underflow
        log10_bound = (1 - float(fractions[i])) * length * math.log10(hparams["rho"])
        rows.append({"violation_fraction": float(fractions[i]), "length": length,
                     "log10_measured": measured, "log10_bound": log10_bound})
    return rows
