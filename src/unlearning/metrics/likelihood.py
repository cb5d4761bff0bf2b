"""Likelihood primitives shared by the TOFU, MUSE and MIA metrics (benchmarks.md s. 2.1).

    avg_loss(y | x) = NLL(y | x) / |y|          (token-mean NLL over answer tokens)
    prob(y | x)     = exp(-avg_loss)             (length-normalised probability p-bar)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from unlearning.data import Encoded, batches, on_device
from unlearning.losses import sequence_nll_and_length


@torch.no_grad()
def answer_nll(model, examples: Sequence[Encoded], pad_token_id: int, batch_size: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed answer NLL and answer length of every example, both `[N]`, in eval mode."""
    was_training = model.training
    model.eval()
    nlls, lengths = [], []
    for batch in batches(examples, batch_size, pad_token_id):
        batch = on_device(batch, model)
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        nll, length = sequence_nll_and_length(logits, batch["labels"])
        nlls.append(nll.cpu()), lengths.append(length.cpu())
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
    from unlearning.margin import IGNORE_INDEX

    was_training = model.training
    model.eval()
    out = []
    for batch in batches(examples, batch_size, pad_token_id):
        batch = on_device(batch, model)
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1].float()
        targets = batch["labels"][:, 1:]
        logprobs = torch.log_softmax(logits, dim=-1)
        predictions = logits.argmax(dim=-1)
        if with_moments:
            probs = logprobs.exp()
            mean = (probs * logprobs).sum(-1)
            variance = (probs * logprobs.pow(2)).sum(-1) - mean.pow(2)
        for row in range(targets.shape[0]):
            keep = targets[row] != IGNORE_INDEX
            labels = targets[row][keep]
            item = (logprobs[row][keep].gather(-1, labels[:, None]).squeeze(-1), predictions[row][keep], labels)
            item += (mean[row][keep], variance[row][keep]) if with_moments else ()
            out.append(tuple(t.cpu() for t in item))
    model.train(was_training)
    return out
