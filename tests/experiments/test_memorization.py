"""MASC's Proposition 1 on every sequence and the margins of whole example sets
(`experiments.memorization`, chapter 4's tables): the measured probability of reproducing a
continuation never exceeds the bound rho^((1 - v) L), and batched margins equal margins computed
one example at a time."""

import math

import pytest
import torch

from experiments.memorization import proposition1_rows, sequence_margins
from unlearning.data import collate
from unlearning.margin import shifted_margins
from unlearning.methods import MASC_DEFAULTS


def test_proposition1_measured_never_exceeds_the_bound(target, tokenizer, splits):
    hparams = {**MASC_DEFAULTS, "min_prefix": 2, "min_suffix": 2}
    batch = collate(splits["forget10"][:8], tokenizer.pad_token_id)
    rows = proposition1_rows(target, batch, hparams, torch.Generator().manual_seed(0))
    assert rows
    for row in rows:
        assert row["log10_measured"] <= row["log10_bound"] + 1e-6
        assert row["log10_bound"] == pytest.approx((1 - row["violation_fraction"]) * row["length"] * math.log10(0.7))


def test_sequence_margins_match_one_example_at_a_time(target, tokenizer, splits):
    examples = splits["forget10"][:5]
    margins, mask = sequence_margins(target, examples, tokenizer.pad_token_id, k=3, beta=1.0, batch_size=2)
    for i, example in enumerate(examples):
        batch = collate([example], tokenizer.pad_token_id)
        with torch.no_grad():
            alone, alone_mask = shifted_margins(target(input_ids=batch["input_ids"]).logits, batch["labels"], 3, 1.0)
        assert torch.allclose(margins[i][mask[i]], alone[0][alone_mask[0]], atol=1e-4)
