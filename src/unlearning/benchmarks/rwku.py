"""RWKU (arXiv 2406.10890; benchmarks.md s. 1.4): real-world knowledge of famous people to
forget from a base model, probed at three levels (cloze, question, adversarial) against
neighbour probes about related people that must survive, plus membership inference.

Splits (`jinzhuoran/RWKU`, one config per split, `test`; the `train_*` corpora in `train`):
`forget_target`, `forget_level{1,2,3}`, `neighbor_level{1,2}`, `mia_forget`, `mia_retain`,
`train_original_passage`. RWKU gives no retain corpus: unlearning retains on passages about
people who are neither targets nor neighbours (`mia_retain`).
"""

from __future__ import annotations

from pathlib import Path

from unlearning.benchmarks.base import Benchmark, read
from unlearning.benchmarks.common import EvalConfig, mean_of, membership_scores, mia_aucs
from unlearning.data import qa_prompt
from unlearning.metrics.generation import QA_STOPS, greedy_generate
from unlearning.metrics.rouge import rouge_l_recall

PROBE = ("subject", "query", "answer", "level", "type")
SCHEMAS = (
    (r"(forget|neighbor)_level\d", PROBE),
    (r"forget_target", ("target", "intro")),
    (r"mia_.*|train_original_passage", ("text", "subject")),
)
PROBE_SPLITS = ("forget_level1", "forget_level2", "forget_level3", "neighbor_level1", "neighbor_level2")


def locate(repository: str, split: str) -> tuple[str, str, str]:
    """One config per split; the `train_*` corpora in `train`, the probes in `test`."""
    return repository, split, "train" if split.startswith("train_") else "test"


def probe_prompt(tokenizer, item: dict) -> str:
    """Level 1 is a cloze with a trailing blank (complete the sentence); levels 2-3 are questions."""
    if item["level"] == 1:
        return item["query"].removesuffix("___.").rstrip()
    return qa_prompt(tokenizer, item["query"])


def suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle_metrics: dict | None) -> dict:
    """ROUGE-L recall on forget levels 1-3 and neighbour levels 1-2; MIA scores on the forget
    and retain passages (RWKU reports the raw mean scores; we add the AUC)."""
    out = {}
    for split in PROBE_SPLITS:
        items = read(data_dir, split, SCHEMAS)
        answers = greedy_generate(model, tokenizer, [probe_prompt(tokenizer, it) for it in items], config.max_new_tokens,
                                  config.batch_size, QA_STOPS + (".",))
        out[f"{split}_rougeL_recall"] = mean_of(rouge_l_recall(answers, [it["answer"] for it in items], config.stemmer))
    forget = membership_scores(model, tokenizer, [r["text"] for r in read(data_dir, "mia_forget", SCHEMAS)], config)
    retain = membership_scores(model, tokenizer, [r["text"] for r in read(data_dir, "mia_retain", SCHEMAS)], config)
    for name in ("loss", "zlib", "min_k", "min_k_pp"):
        out[f"mia_forget_{name}"], out[f"mia_retain_{name}"] = mean_of(forget[name]), mean_of(retain[name])
    out.update(mia_aucs(forget, retain, "mia"))
    return out


RWKU = Benchmark("rwku", SCHEMAS, hub="jinzhuoran/RWKU", locate=locate, kind="text", forget="train_original_passage",
                 retain="mia_retain", suite=suite)
