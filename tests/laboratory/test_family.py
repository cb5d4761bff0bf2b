"""The laboratory's model family (`laboratory.family`): its sizes span what the scale study needs,
a member is the same for the same seed, the learning stage's settings are checked, and its
length-bucketed batches hold every example once with less padding."""

from collections import Counter

import pytest
import torch

from laboratory.family import SIZES, TrainConfig, build_model, bucketed_batches
from unlearning.data import Encoded, batches
from unlearning.models import count_parameters


def _examples(lengths):
    return [Encoded([i] * n, [i] * n) for i, n in enumerate(lengths)]


def _firsts(batch) -> list[int]:
    return batch["input_ids"][:, 0].tolist()


def test_family_spans_at_least_16x(tokenizer):
    counts = [count_parameters(build_model(size, tokenizer)) for size in SIZES]
    assert counts == sorted(counts) and counts[-1] / counts[0] >= 16


def test_build_model_is_deterministic(tokenizer):
    a, b = build_model("s", tokenizer, seed=3), build_model("s", tokenizer, seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_train_config_rejects_nonsense():
    with pytest.raises(TypeError):
        TrainConfig(epoch=3)


@pytest.mark.parametrize("bad", [{"epochs": 0}, {"lr": -1.0}, {"batch_size": 0}, {"warmup_fraction": 1.0}])
def test_train_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        TrainConfig(**bad)


def test_bucketed_batches_cover_every_example_once_with_less_padding():
    lengths = [3, 17, 5, 9, 2, 30, 11, 4, 8, 21, 6, 13, 1, 25, 7, 16]
    examples = [Encoded(list(range(1, n + 1)), list(range(1, n + 1))) for n in lengths]
    out = list(bucketed_batches(examples, 4, 0, torch.Generator().manual_seed(0), pool=4))
    seen = sorted(int(b["attention_mask"][i].sum()) for b in out for i in range(b["input_ids"].shape[0]))
    assert seen == sorted(lengths)
    plain = list(batches(examples, 4, 0, torch.Generator().manual_seed(0)))
    assert sum(b["input_ids"].numel() for b in out) < sum(b["input_ids"].numel() for b in plain)
    again = list(bucketed_batches(examples, 4, 0, torch.Generator().manual_seed(0), pool=4))
    assert all(torch.equal(a["input_ids"], b["input_ids"]) for a, b in zip(out, again))


def test_bucketed_batches_hold_each_example_once_and_sort_within_a_pool():
    lengths = [7, 1, 5, 3, 8, 2, 6, 4, 9, 10, 11]
    examples = _examples(lengths)
    epoch = list(bucketed_batches(examples, 2, -1, torch.Generator().manual_seed(1), pool=2))
    seen = Counter(i for b in epoch for i in _firsts(b))
    assert seen == Counter(range(len(lengths)))
    # a pool of 2 batches is 4 examples sorted by length: no batch mixes lengths out of its pool's order
    for batch in epoch:
        widths = batch["attention_mask"].sum(1).tolist()
        assert widths == sorted(widths)
    with pytest.raises(ValueError, match="pool must be >= 1"):
        next(bucketed_batches(examples, 2, -1, torch.Generator(), pool=0))
