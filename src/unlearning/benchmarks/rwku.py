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
from unlearning.benchmarks.common import EvalConfig, mean_of, mean_statistic, membership_scores, mia_aucs
from unlearning.data import qa_prompt, uses_chat_template
from unlearning.metrics.generation import QA_STOPS, greedy_generate
from unlearning.metrics.rouge import rouge_l_recall

PROBE = ("subject", "query", "answer", "level", "type")
SCHEMAS = (
    (r"(forget|neighbor)_level\d", PROBE),
    (r"forget_target", ("target", "intro")),
    (r"mia_.*|train_original_passage", ("text", "subject")),
)
PROBE_SPLITS = ("forget_level1", "forget_level2", "forget_level3", "neighbor_level1", "neighbor_level2")
FORGET_METRICS = tuple(f"forget_level{i}_rougeL_recall" for i in (1, 2, 3))
NEIGHBOUR_METRICS = tuple(f"neighbor_level{i}_rougeL_recall" for i in (1, 2))
TABLE_COLUMNS = {"forget_level1_rougeL_recall": "forget L1", "forget_level2_rougeL_recall": "forget L2",
                 "forget_level3_rougeL_recall": "forget L3", "neighbor_level1_rougeL_recall": "neighbour L1",
                 "neighbor_level2_rougeL_recall": "neighbour L2", "mia_auc_min_k": "MIA AUC (Min-K)"}


def locate(repository: str, split: str) -> tuple[str, str, str]:
    """One config per split; the `train_*` corpora in `train`, the probes in `test`."""
    return repository, split, "train" if split.startswith("train_") else "test"


# RWKU's official prompts as the SAGO code renders them (sago.md s. 10), for checkpoints with a chat
# template: fill in the blank (level 1) or answer briefly (levels 2-3), in the user turn
FILL_IN_THE_BLANK = "Please complete the blank in the following question.\nQuestion: {query}\nAnswer:"
BRIEF_ANSWER = "Please briefly answer the following question.\nQuestion: {query}\nAnswer:"


def probe_prompt(tokenizer, item: dict) -> str:
    """The prompt of a probe. A checkpoint with a chat template gets RWKU's instructions in its
    user turn (level 3: the in-context-learning type without the "Question:" prefix, the
    affirmative-suffix type without "Answer:", as in the SAGO code). The laboratory's models have
    none: level 1 is then a cloze completed from its trailing blank, levels 2-3 are questions."""
    if uses_chat_template(tokenizer):
        text = (FILL_IN_THE_BLANK if item["level"] == 1 else BRIEF_ANSWER).format(query=item["query"])
        if item.get("type") == "in-context learning":
            text = text.replace("Question: ", "")
        elif item.get("type") == "affirmative suffix":
            text = text.removesuffix("\nAnswer:")
        return tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                             add_generation_prompt=True)
    if item["level"] == 1:
        return item["query"].removesuffix("___.").rstrip()
    return qa_prompt(tokenizer, item["query"])


def summarise(metrics) -> dict:
    """The two numbers of the SAGO paper's Fig. 4: forget (mean ROUGE-L recall over forget levels
    1-3, lower is better) and neighbour (mean over neighbour levels 1-2, higher is better)."""
    return {"forget": sum(metrics[k] for k in FORGET_METRICS) / len(FORGET_METRICS),
            "neighbour": sum(metrics[k] for k in NEIGHBOUR_METRICS) / len(NEIGHBOUR_METRICS)}


def suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle_metrics: dict | None) -> dict:
    """ROUGE-L recall on forget levels 1-3 and neighbour levels 1-2 (every probe's under `items`);
    MIA scores on the forget and retain passages (RWKU reports the raw mean scores; we add the AUC)."""
    out, items = {}, {}
    for split in PROBE_SPLITS:
        probes = read(data_dir, split, SCHEMAS)
        answers = greedy_generate(model, tokenizer, [probe_prompt(tokenizer, it) for it in probes], config.max_new_tokens,
                                  config.batch_size, QA_STOPS + (".",))
        items[split] = {"recall": rouge_l_recall(answers, [it["answer"] for it in probes], config.stemmer)}
        out[f"{split}_rougeL_recall"] = mean_of(items[split]["recall"])
    forget = membership_scores(model, tokenizer, [r["text"] for r in read(data_dir, "mia_forget", SCHEMAS)], config)
    retain = membership_scores(model, tokenizer, [r["text"] for r in read(data_dir, "mia_retain", SCHEMAS)], config)
    for name in ("loss", "zlib", "min_k", "min_k_pp"):
        out[f"mia_forget_{name}"], out[f"mia_retain_{name}"] = mean_of(forget[name]), mean_of(retain[name])
    out.update(mia_aucs(forget, retain, "mia"))
    out["items"] = items
    return out


def _summary_statistic(splits):
    """A summary of `summarise` recomputed from resampled probes: the mean of its levels' means."""
    return lambda items: sum(items[split]["recall"].mean(axis=-1) for split in splits) / len(splits)


STATISTICS = {**{f"{split}_rougeL_recall": mean_statistic(split, "recall") for split in PROBE_SPLITS},
              "forget": _summary_statistic([m.removesuffix("_rougeL_recall") for m in FORGET_METRICS]),
              "neighbour": _summary_statistic([m.removesuffix("_rougeL_recall") for m in NEIGHBOUR_METRICS])}


RWKU = Benchmark("rwku", SCHEMAS, hub="jinzhuoran/RWKU", locate=locate, kind="text", forget="train_original_passage",
                 retain="mia_retain", suite=suite, statistics=STATISTICS)
# RWKU on the real pretrained model: probes it answers, a corpus it wrote (`world.rwku_real`)
RWKU_REAL = Benchmark("rwku-real", SCHEMAS, kind="text", forget="train_original_passage", retain="mia_retain",
                      suite=suite, statistics=STATISTICS)
