"""What the ungraded capstones need around a student's functions: the smoke laboratory's TOFU
target and oracle, a forget and a retain batch, next-token logits, task gradients and answer
probabilities. The student's own functions do the part the assignment is about."""

from __future__ import annotations

from pathlib import Path

import torch

from unlearning.benchmarks import get_benchmark
from unlearning.data import collate, encode_qa, encode_qa_split
from unlearning.metrics.likelihood import answer_probability
from unlearning.models import load_model, load_tokenizer

SMOKE = Path("models/smoke")


def smoke_models(root: Path | str = ".") -> dict:
    """The smoke laboratory's tokenizer, TOFU target and retain90 oracle, and its TOFU data; a
    FileNotFoundError saying how to build them (`make models PROFILE=smoke`) when absent."""
    root = Path(root)
    models, data = root / SMOKE, root / "data" / "smoke" / "tofu"
    if not (models / "tofu" / "target-xs").is_dir():
        raise FileNotFoundError(f"the smoke models are not built under {models}: run `make models PROFILE=smoke`")
    tokenizer = load_tokenizer(models / "tokenizer")
    return {"tokenizer": tokenizer, "target": models / "tofu" / "target-xs", "oracle": models / "tofu" / "retain90-xs",
            "data": data}


def qa_batch(lab: dict, split: str, n: int) -> dict[str, torch.Tensor]:
    """The first `n` items of a TOFU split, tokenised and padded (input_ids, attention_mask, labels)."""
    records = get_benchmark("tofu").load(lab["data"], split)[:n]
    return collate(encode_qa_split(lab["tokenizer"], records), lab["tokenizer"].pad_token_id)


def next_token(model, batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Shifted logits `[B, T-1, V]`, gold tokens `[B, T-1]` and the answer mask `[B, T-1]`."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    labels = batch["labels"][:, 1:]
    mask = labels != -100
    return logits[:, :-1], labels.masked_fill(~mask, 0), mask


def nll(model, batch) -> torch.Tensor:
    """Mean next-token negative log-likelihood over the answer tokens."""
    return model(**batch).loss


def task_gradients(model, forget, retain) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Per-parameter gradients of the forget task (gradient ascent: -NLL on the forget batch)
    and of the retain task (NLL on the retain batch), computed separately."""
    params = [p for p in model.parameters() if p.requires_grad]
    g_f = torch.autograd.grad(-nll(model, forget), params)
    g_r = torch.autograd.grad(nll(model, retain), params)
    return list(g_f), list(g_r)


def cosine(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    """Cosine between two gradients given as lists of tensors."""
    dot = sum(float((x.float() * y.float()).sum()) for x, y in zip(a, b))
    na = sum(float(x.float().pow(2).sum()) for x in a) ** 0.5
    nb = sum(float(y.float().pow(2).sum()) for y in b) ** 0.5
    return dot / (na * nb + 1e-30)


def option_probabilities(lab: dict, model_dir, split: str = "forget10_perturbed", n: int = 20) -> list[tuple[float, list[float]]]:
    """Per item of a TOFU perturbed split: the paraphrased answer's length-normalised probability
    and those of its perturbed answers (the inputs of the truth ratio)."""
    model = load_model(model_dir)
    tokenizer = lab["tokenizer"]
    items = get_benchmark("tofu").load(lab["data"], split)[:n]
    out = []
    for item in items:
        answers = [item["paraphrased_answer"], *item["perturbed_answer"]]
        encoded = [encode_qa(tokenizer, item["question"], answer, 128) for answer in answers]
        probs = answer_probability(model, encoded, tokenizer.pad_token_id).tolist()
        out.append((probs[0], probs[1:]))
    return out


def load(model_dir) -> torch.nn.Module:
    """A model for training (float32, train mode off: no dropout in these models)."""
    return load_model(model_dir)
