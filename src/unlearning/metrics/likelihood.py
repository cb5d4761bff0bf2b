"""Likelihood primitives shared by the TOFU, MUSE and MIA metrics (benchmarks.md s. 2.1).

    avg_loss(y | x) = NLL(y | x) / |y|          (token-mean NLL over answer tokens)
    prob(y | x)     = exp(-avg_loss)             (length-normalised probability p-bar)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from unlearning.data import Encoded, batches, on_device
from unlearning.margin import IGNORE_INDEX

# decoder families whose logits are exactly their output layer applied to the last hidden states
# (no soft-capping or scaling of the logits): for them `labelled_logits` runs that layer on the
# labelled positions only
HEAD_ON_HIDDEN = frozenset({"llama", "qwen2", "qwen3", "mistral"})


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
    inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"], "use_cache": False}
    head = model.get_output_embeddings() if getattr(model.config, "model_type", None) in HEAD_ON_HIDDEN else None
    if head is not None:
        hidden = model.get_decoder()(**inputs).last_hidden_state[:, :-1]  # [B, T-1, H]
        logits = head(hidden[keep])  # [N, V]
    else:
        logits = model(**inputs).logits[:, :-1][keep]
    return logits.float(), targets[keep], keep.nonzero()[:, 0]


@torch.no_grad()
def answer_nll(model, examples: Sequence[Encoded], pad_token_id: int, batch_size: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed answer NLL and answer length of every example, both `[N]`, in eval mode."""
    was_training = model.training
    model.eval()
    nlls, lengths = [], []
    for batch in batches(examples, batch_size, pad_token_id):
        batch = on_device(batch, model)
        logits, labels, rows = labelled_logits(model, batch)
        token_nll = -logits.log_softmax(dim=-1).gather(-1, labels[:, None]).squeeze(-1)  # [N]
        size = batch["labels"].shape[0]
        nlls.append(torch.zeros(size, device=token_nll.device).index_add_(0, rows, token_nll).cpu())
        lengths.append(torch.bincount(rows, minlength=size).cpu())
    model.train(was_training)
    return torch.cat(nlls), torch.cat(lengths)


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
