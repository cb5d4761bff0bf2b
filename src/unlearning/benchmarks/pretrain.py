"""The laboratory world's pretraining corpus (not a published benchmark): the texts base models
are pretrained on (`corpus`), the world's question-answer documents replayed in every
fine-tuning run (`replay`), and surface-form probes that tell verbatim from knowledge
memorisation (`probes`). Its gates judge the base models, which are also the WMDP and RWKU
targets.
"""

from __future__ import annotations

from pathlib import Path

from unlearning.benchmarks.base import Benchmark, read
from unlearning.benchmarks.common import mean_of
from unlearning.benchmarks.tofu import SCHEMAS as TOFU_SCHEMAS
from unlearning.benchmarks.tofu import option_items
from unlearning.benchmarks.wmdp import SCHEMAS as WMDP_SCHEMAS
from unlearning.metrics.choice import choice_accuracy, statement_accuracy

SCHEMAS = (
    (r"corpus|replay", ("text",)),
    (r"probes", ("source", "subject", "relation", "form", "trained", "choices", "answer")),
)


def gates(model, tokenizer, data_root: Path, name: str = "pretrain") -> dict:
    """Accuracy of the surface-form probes in trained vs held-out forms; four-choice accuracy on
    wmdp-bio, wmdp-cyber and MMLU (chance 25 %); choice accuracy on TOFU's real-author and
    world-fact questions (answer vs 3 perturbed, chance 25 %)."""
    data_root = Path(data_root)
    probes = read(data_root / "pretrain", "probes", SCHEMAS)
    correct = statement_accuracy(model, tokenizer, probes)
    values = {
        "probe_trained_form": mean_of(c for c, p in zip(correct, probes) if p["trained"]),
        "probe_held_out_form": mean_of(c for c, p in zip(correct, probes) if not p["trained"]),
    }
    for split in ("wmdp-bio", "wmdp-cyber", "mmlu"):
        values[f"{split}_accuracy"] = choice_accuracy(model, tokenizer, read(data_root / "wmdp", split, WMDP_SCHEMAS))
    for split, short in (("real_authors_perturbed", "real_authors"), ("world_facts_perturbed", "world_facts")):
        items = option_items(read(data_root / "tofu", split, TOFU_SCHEMAS))
        values[f"{short}_choice_accuracy"] = choice_accuracy(model, tokenizer, items, normalize=True)
    return values


PRETRAIN = Benchmark("pretrain", SCHEMAS, gates=gates)
