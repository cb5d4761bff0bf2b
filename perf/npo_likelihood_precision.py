"""How accurately the summed answer NLL of NPO and SimNPO is computed in float32, in two layouts, each
against float64: OpenUnlearning's (`CrossEntropyLoss` on logits transposed to [B, V, T], as its NPO and
SimNPO trainers compute it) and ours (`log_softmax` over the vocabulary, the [B*T, V] layout), on
SmolLM2-135M-Instruct's TOFU-real forget answers (data/mini). The metrics appendix quotes its output.

    .venv/bin/python perf/npo_likelihood_precision.py      (needs `make real-model`)
"""

from pathlib import Path

import torch
import torch.nn.functional as F

from unlearning.benchmarks import get_benchmark
from unlearning.data import collate, encode_qa_split
from unlearning.models import load_model, load_tokenizer

CHECKPOINT = Path("models/real/smollm2-135m")


def main() -> None:
    model, tokenizer = load_model(CHECKPOINT).eval(), load_tokenizer(CHECKPOINT)
    records = get_benchmark("tofu-real").load(Path("data/mini/tofu-real"), "forget10")
    batch = collate(encode_qa_split(tokenizer, records), tokenizer.pad_token_id)
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
    labels = batch["labels"][:, 1:]
    mask = labels != -100
    flat = logits.double().reshape(-1, logits.shape[-1])
    reference = F.cross_entropy(flat, labels.reshape(-1), ignore_index=-100, reduction="none").view(labels.shape).sum(1)
    openunlearning = torch.nn.CrossEntropyLoss(ignore_index=-100, reduction="none")(
        logits.float().transpose(-1, -2), labels).sum(-1)
    ours = -(logits.float().log_softmax(-1).gather(-1, labels.clamp(min=0)[..., None]).squeeze(-1) * mask).sum(1)
    print(f"{len(records)} answers, {float(mask.sum(1).float().mean()):.1f} tokens each")
    for name, value in (("OpenUnlearning, [B, V, T]", openunlearning), ("ours, [B*T, V]", ours)):
        print(f"{name}: largest |error| of the summed answer NLL against float64, "
              f"{float((value.double() - reference).abs().max()):.2e} nats")


if __name__ == "__main__":
    main()
