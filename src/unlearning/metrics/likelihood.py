"""Likelihood primitives shared by the TOFU, MUSE and MIA metrics (benchmarks.md s. 2.1).

    avg_loss(y | x) = NLL(y | x) / |y|          (token-mean NLL over answer tokens)
    prob(y | x)     = exp(-avg_loss)             (length-normalised probability p-bar)
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch

from unlearning.data import Encoded, batches, collate, on_device
from unlearning.margin import HEAD_ON_HIDDEN, IGNORE_INDEX


def labelled_logits(model, batch: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The logits of the positions that predict a label, in float32: `(logits [N, V], labels [N],
    rows [N])`, the N labelled tokens of the batch in row-major order (position t predicts
    `labels[:, t + 1]`), `rows` the example each belongs to.

    For the decoders of `HEAD_ON_HIDDEN` only these N positions go through the output layer:
    an answer is short next to its prompt, and on SmolLM2-135M the output layer (576 x 49,152)
    over every position, with its softmax, was about a quarter of a TOFU evaluation. The values
    are those of the whole forward pass at the same positions (a test checks it)."""
    targets = batch["labels"][:, 1:]
    keep = targets != IGNORE_INDEX  # [B, T-1]
    inputs = {key: batch[key] for key in ("input_ids", "attention_mask", "position_ids", "cache", "past_key_values")
              if key in batch}
    inputs["use_cache"] = False
    head = model.get_output_embeddings() if getattr(model.config, "model_type", None) in HEAD_ON_HIDDEN else None
    if head is not None:
        hidden = model.get_decoder()(**inputs).last_hidden_state[:, :-1]  # [B, T-1, H]
        logits = head(hidden[keep])  # [N, V]
    else:
        logits = model(**inputs).logits[:, :-1][keep]
    return logits.float(), targets[keep], keep.nonzero()[:, 0]


def _prompt_length(example: Encoded) -> int:
    """The number of leading positions without a label: the prompt."""
    return next((i for i, label in enumerate(example.labels) if label != IGNORE_INDEX), len(example.labels))


def prompt_groups(examples: Sequence[Encoded]) -> list[list[int]] | None:
    """The examples' indices grouped by identical prompts, in order of first appearance; None when
    no two examples share a prompt or a prompt is shorter than two tokens (nothing to share)."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for index, example in enumerate(examples):
        start = _prompt_length(example)
        if start < 2:
            return None
        groups.setdefault(tuple(example.input_ids[:start]), []).append(index)
    return list(groups.values()) if len(groups) < len(examples) else None


def _group_batches(groups: list[list[int]], batch_size: int):
    """The groups, each split into pieces of at most `batch_size` members, packed in order into
    batches of at most `batch_size` members (a batch: a list of pieces)."""
    batch: list[list[int]] = []
    members = 0
    for group in groups:
        for piece in (group[i:i + batch_size] for i in range(0, len(group), batch_size)):
            if batch and members + len(piece) > batch_size:
                yield batch
                batch, members = [], 0
            batch.append(piece)
            members += len(piece)
    if batch:
        yield batch


def _shared_prompt_batch(model, examples: Sequence[Encoded], pieces: list[list[int]], pad_token_id: int) -> dict:
    """One batch of `answer_nll`'s shared-prompt path: each piece's prompt but its last token goes
    through the decoder once; its key/value cache is copied to the piece's members, whose
    continuations (the prompt's last token, then the answer) follow it at their own positions. A
    collated batch with the cache (under `_cache_keyword`) and `position_ids`, for `labelled_logits`."""
    device = next(model.parameters()).device
    cut = [_prompt_length(examples[piece[0]]) - 1 for piece in pieces]
    prefix = on_device(collate([Encoded(examples[piece[0]].input_ids[:n], [IGNORE_INDEX] * n)
                                for piece, n in zip(pieces, cut)], pad_token_id), model)
    decoded = model.get_decoder()(input_ids=prefix["input_ids"], attention_mask=prefix["attention_mask"], use_cache=True)
    cache = getattr(decoded, "cache", None) or decoded.past_key_values  # transformers >= 5.25 names it `cache`
    owner = torch.tensor([g for g, piece in enumerate(pieces) for _ in piece], device=device)
    cache.batch_select_indices(owner)
    rest = on_device(collate([Encoded(examples[i].input_ids[cut[g]:], examples[i].labels[cut[g]:])
                              for g, piece in enumerate(pieces) for i in piece], pad_token_id), model)
    prefix_mask = prefix["attention_mask"][owner]
    positions = prefix_mask.sum(dim=1, keepdim=True) + torch.arange(rest["input_ids"].shape[1], device=device)
    return {**rest, "attention_mask": torch.cat([prefix_mask, rest["attention_mask"]], dim=1),
            "position_ids": positions, _cache_keyword(model): cache}


def _cache_keyword(model) -> str:
    """The decoder's keyword for a key/value cache: `cache` from transformers 5.25, `past_key_values` before."""
    return "cache" if "cache" in inspect.signature(model.get_decoder().forward).parameters else "past_key_values"


def _batch_nll(model, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed answer NLL and answer length of every row of a collated batch, on the CPU."""
    logits, labels, rows = labelled_logits(model, batch)
    token_nll = -logits.log_softmax(dim=-1).gather(-1, labels[:, None]).squeeze(-1)  # [N]
    size = batch["labels"].shape[0]
    return (torch.zeros(size, device=token_nll.device).index_add_(0, rows, token_nll).cpu(),
            torch.bincount(rows, minlength=size).cpu())


@torch.no_grad()
def answer_nll(model, examples: Sequence[Encoded], pad_token_id: int, batch_size: int = 32,
               share_prompts: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed answer NLL and answer length of every example, both `[N]`, in eval mode.

    Examples that share a prompt (TOFU's answer, paraphrase and perturbed answers of a question; a
    question's options) share its forward pass: the prompt runs once, its answers continue from its
    key/value cache. On SmolLM2's chat template the prompt is about 70 % of such an example's
    tokens. The values are the whole forward pass's up to float rounding (a test checks it);
    `share_prompts=False` runs that whole pass per example (`perf/bench.py` times both)."""
    was_training = model.training
    model.eval()
    groups = prompt_groups(examples) if share_prompts else None
    nll, length = torch.zeros(len(examples)), torch.zeros(len(examples), dtype=torch.long)
    if groups is None:
        for start, batch in zip(range(0, len(examples), batch_size), batches(examples, batch_size, pad_token_id)):
            nll[start:start + batch_size], length[start:start + batch_size] = _batch_nll(model, on_device(batch, model))
    else:
        for pieces in _group_batches(groups, batch_size):
            members = torch.tensor([i for piece in pieces for i in piece])
            nll[members], length[members] = _batch_nll(model, _shared_prompt_batch(model, examples, pieces, pad_token_id))
    model.train(was_training)
    return nll, length


def answer_probability(model, examples: Sequence[Encoded], pad_token_id: int, batch_size: int = 32) -> torch.Tensor:
    """Length-normalised answer probability exp(-NLL/|y|) of every example, `[N]`."""
    nll, length = answer_nll(model, examples, pad_token_id, batch_size)
    return torch.exp(-nll / length.clamp(min=1))


@torch.no_grad()
def labelled_tokens(model, examples: Sequence[Encoded], pad_token_id: int, batch_size: int = 32,
                    with_moments: bool = False) -> list[tuple[torch.Tensor, ...]]:
    """Per example, over its labelled (answer / text) positions: the token log-probs of the
    labels, the teacher-forced argmax predictions, and the labels, each `[n_labelled]`; with
    `with_moments`, also the mean and variance of log p(z) under the model's own next-token
    distribution z ~ p(. | prefix) (Min-K%++'s calibration; the variance is not clamped here).

    The primitive behind extraction strength, exact memorisation and the MIA scores.
    """
    was_training = model.training
    model.eval()
    out = []
    for batch in batches(examples, batch_size, pad_token_id):
        batch = on_device(batch, model)
        logits, labels, rows = labelled_logits(model, batch)  # [N, V], [N], [N]
        logprobs = torch.log_softmax(logits, dim=-1)
        columns = [logprobs.gather(-1, labels[:, None]).squeeze(-1), logits.argmax(dim=-1), labels]
        if with_moments:
            probs = logprobs.exp()
            mean = (probs * logprobs).sum(-1)
            columns += [mean, (probs * logprobs.pow(2)).sum(-1) - mean.pow(2)]
        counts = torch.bincount(rows, minlength=batch["labels"].shape[0]).tolist()
        pieces = [column.cpu().split(counts) for column in columns]  # per example, in row order
        out += [tuple(piece[i] for piece in pieces) for i in range(len(counts))]
    model.train(was_training)
    return out
