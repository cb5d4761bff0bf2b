"""The batches the drop-ins read: tokenised examples, and OpenUnlearning's forget-retain pairs.

OpenUnlearning's `ForgetRetainDataset` pairs every forget item with a retain item drawn at random
and its collator pads each side on its own, so `compute_loss` reads `inputs["forget"]` and
`inputs["retain"]`; `forget_retain_pairs` and `ForgetRetainCollator` build the same, with our
padding (`data.collate`: right-padded to the batch's longest sequence, labels -100 there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from unlearning.data import Encoded, collate


def as_encoded(item) -> Encoded:
    """An `Encoded` example from an `Encoded` or a mapping with `input_ids` and `labels` (lists or
    1-d tensors of one length)."""
    if isinstance(item, Encoded):
        return item
    if not isinstance(item, Mapping) or "input_ids" not in item or "labels" not in item:
        raise ValueError(f"an example needs 'input_ids' and 'labels'; got {type(item).__name__}")
    ids, labels = (list(map(int, item[key])) for key in ("input_ids", "labels"))
    if len(ids) != len(labels):
        raise ValueError(f"an example's input_ids ({len(ids)}) and labels ({len(labels)}) differ in length")
    return Encoded(ids, labels)


def forget_retain_pairs(forget: Sequence, retain: Sequence, seed: int = 0) -> list[dict]:
    """One item per forget example, each with a retain example drawn uniformly at random (with a
    seeded generator): OpenUnlearning's `ForgetRetainDataset` with its forget anchor."""
    if not forget or not retain:
        raise ValueError(f"forget-retain pairs need both sets; got {len(forget)} forget and {len(retain)} retain examples")
    draws = torch.randint(len(retain), (len(forget),), generator=torch.Generator().manual_seed(seed)).tolist()
    return [{"forget": as_encoded(f), "retain": as_encoded(retain[j])} for f, j in zip(forget, draws)]


class EncodedCollator:
    """The Trainer's `data_collator` for one set of examples: `input_ids`, `attention_mask` and
    `labels` `[B, T]`, padded to the batch's longest."""

    def __init__(self, pad_token_id: int) -> None:
        self.pad_token_id = pad_token_id

    def __call__(self, items: Sequence) -> dict[str, torch.Tensor]:
        return collate([as_encoded(item) for item in items], self.pad_token_id)


class ForgetRetainCollator(EncodedCollator):
    """The Trainer's `data_collator` for forget-retain pairs: `{"forget": batch, "retain": batch}`."""

    def __call__(self, items: Sequence[Mapping]) -> dict[str, dict[str, torch.Tensor]]:
        missing = [key for key in ("forget", "retain") if any(key not in item for item in items)]
        if missing:
            raise ValueError(f"a forget-retain item needs 'forget' and 'retain'; one has no {missing[0]!r}")
        return {key: super(ForgetRetainCollator, self).__call__([item[key] for item in items]) for key in ("forget", "retain")}


def engine_order(n: int, batch_size: int, draws: int, seed: int) -> list[int]:
    """The example indices our engine's shuffled, cycling loader visits (`engine.unlearn`: one
    `randperm` per epoch from a generator seeded `seed`), `draws` of them. Items in this order, read by
    the Trainer sequentially (`train_sampling_strategy="sequential"`), form the engine's batches, so
    the two can be compared step by step; the batch size must divide the set (whole batches only)."""
    if n % batch_size:
        raise ValueError(f"a batch of {batch_size} does not divide {n} examples: the engine's last batch of an epoch "
                         "would be short and the Trainer's would not")
    generator, order = torch.Generator().manual_seed(seed), []
    while len(order) < draws:
        order += torch.randperm(n, generator=generator).tolist()
    return order[:draws]


def engine_pairs(forget: Sequence, retain: Sequence, batch_size: int, micro_batches: int, seed: int = 0) -> list[dict]:
    """Forget-retain items in the order of the engine's two loaders (forget seeded `seed`, retain
    `seed + 7`), enough for `micro_batches` micro-batches of `batch_size`."""
    draws = batch_size * micro_batches
    f = engine_order(len(forget), batch_size, draws, seed)
    r = engine_order(len(retain), batch_size, draws, seed + 7)
    return [{"forget": as_encoded(forget[i]), "retain": as_encoded(retain[j])} for i, j in zip(f, r)]
