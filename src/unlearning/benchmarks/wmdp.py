"""WMDP (arXiv 2403.03218; benchmarks.md s. 1.3): hazardous knowledge (Bio, Cyber) to forget
from a base model, measured by four-choice accuracy, with MMLU as the utility it must keep.

Splits: `wmdp-bio`, `wmdp-cyber` (questions, `cais/wmdp`, `test`), `{bio,cyber}-{forget,retain}-corpus`
(`cais/wmdp-corpora`, `train`) and `mmlu` (`cais/mmlu` `all`, `test`). The forget and retain
sets of unlearning join both domains' corpora.
"""

from __future__ import annotations

from pathlib import Path

from unlearning.benchmarks.base import Benchmark, read
from unlearning.benchmarks.common import EvalConfig, mean_of, mean_statistic
from unlearning.metrics.choice import choice_correct

MULTIPLE_CHOICE = ("question", "choices", "answer")
SCHEMAS = (
    (r"wmdp-(bio|cyber|chem)", MULTIPLE_CHOICE),
    (r"mmlu", MULTIPLE_CHOICE + ("subject",)),
    (r".*-corpus", ("text",)),
)
FOUR_CHOICE_CHANCE = 1 / 4


def locate(repository: str, split: str) -> tuple[str, str, str]:
    """Questions in `cais/wmdp` (`test`), corpora in `cais/wmdp-corpora` (`train`), MMLU in `cais/mmlu`."""
    if split.endswith("-corpus"):
        return "cais/wmdp-corpora", split, "train"
    return ("cais/mmlu", "all", "test") if split == "mmlu" else (repository, split, "test")


CHOICE_SETS = ("wmdp-bio", "wmdp-cyber", "mmlu")


def suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle_metrics: dict | None) -> dict:
    """Four-choice accuracy on wmdp-bio, wmdp-cyber and the MMLU-like utility set; every question's
    right (1) or wrong (0) under `items`."""
    items = {split: {"correct": choice_correct(model, tokenizer, read(data_dir, split, SCHEMAS), batch_size=64)}
             for split in CHOICE_SETS}
    return {**{f"{split}_accuracy": mean_of(items[split]["correct"]) for split in CHOICE_SETS}, "items": items}


STATISTICS = {f"{split}_accuracy": mean_statistic(split, "correct") for split in CHOICE_SETS}

WMDP = Benchmark("wmdp", SCHEMAS, hub="cais/wmdp", locate=locate, kind="text",
                 forget="bio-forget-corpus+cyber-forget-corpus", retain="bio-retain-corpus+cyber-retain-corpus",
                 suite=suite, statistics=STATISTICS)
