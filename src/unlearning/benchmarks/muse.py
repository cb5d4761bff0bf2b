"""MUSE News and Books (arXiv 2407.06460; benchmarks.md s. 1.2 and 2.3): news articles and book
chapters to forget, judged by verbatim memorisation (VerbMem), knowledge (KnowMem) and
privacy leakage (PrivLeak) against a model retrained without them.

Splits are our `<config>/<split>` names of `muse-bench/MUSE-News` and `MUSE-Books`:
`raw/{forget,retain1,retain2,holdout}`, `verbmem/forget`, `knowmem/{forget,retain}_qa` (+ `_icl`),
`privleak/{forget,retain,holdout}`.
"""

from __future__ import annotations

from pathlib import Path

from unlearning.benchmarks.base import Benchmark, model_name, read
from unlearning.benchmarks.common import EvalConfig, mean_of, mean_statistic, membership_scores, mia_aucs
from unlearning.data import DataError
from unlearning.metrics import mia
from unlearning.metrics.generation import QA_STOPS, greedy_generate, knowmem_prompt
from unlearning.metrics.rouge import rouge_l_f1

SCHEMAS = (
    (r"knowmem/.*", ("question", "answer")),
    (r"(raw|privleak)/.*", ("text",)),
    (r"verbmem/.*", ("prompt", "gt")),
)


def locate(repository: str, split: str) -> tuple[str, str, str]:
    """Our `<config>/<split>` (e.g. `knowmem/forget_qa`) is the hub's config and split."""
    if "/" not in split:
        raise DataError(f"{repository}: split must be '<config>/<split>' such as 'raw/forget'; got {split!r}")
    config, hub_split = split.split("/", 1)
    return repository, config, hub_split


def suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle_metrics: dict | None) -> dict:
    """VerbMem, KnowMem forget / retain (ROUGE-L F1; every item's under `items`), Min-40% PrivLeak,
    LOSS and zlib AUCs."""
    verbmem = read(data_dir, "verbmem/forget", SCHEMAS)
    continuations = greedy_generate(model, tokenizer, [r["prompt"] for r in verbmem], config.verbmem_new_tokens,
                                    config.batch_size)
    items = {"verbmem": {"rouge": rouge_l_f1(continuations, [r["gt"] for r in verbmem], config.stemmer)}}
    for side in ("forget", "retain"):
        icl, questions = read(data_dir, f"knowmem/{side}_qa_icl", SCHEMAS), read(data_dir, f"knowmem/{side}_qa", SCHEMAS)
        answers = greedy_generate(model, tokenizer, [knowmem_prompt(icl, r["question"]) for r in questions],
                                  config.max_new_tokens, config.batch_size, QA_STOPS)
        items[f"knowmem_{side}"] = {"rouge": rouge_l_f1(answers, [r["answer"] for r in questions], config.stemmer)}
    out = {key: mean_of(items[part]["rouge"]) for key, part in ITEM_PARTS.items()}
    forget = [r["text"] for r in read(data_dir, "privleak/forget", SCHEMAS)]
    holdout = [r["text"] for r in read(data_dir, "privleak/holdout", SCHEMAS)]
    out.update(mia_aucs(membership_scores(model, tokenizer, forget, config),
                        membership_scores(model, tokenizer, holdout, config), "privleak"))
    if oracle_metrics is not None:
        out["privleak"] = mia.privleak(out["privleak_auc_min_k"], oracle_metrics["privleak_auc_min_k"])
    out["items"] = items
    return out


ITEM_PARTS = {"verbmem_f": "verbmem", "knowmem_f": "knowmem_forget", "knowmem_r": "knowmem_retain"}
STATISTICS = {key: mean_statistic(part, "rouge") for key, part in ITEM_PARTS.items()}


def gates(model, tokenizer, data_root: Path, corpus: str) -> dict:
    """VerbMem and KnowMem of a MUSE target or retrained model (`corpus`: muse-news or
    muse-books): the suite's own numbers."""
    metrics = suite(model, tokenizer, Path(data_root) / corpus, EvalConfig(), None)
    return {f"{corpus}_verbmem": metrics["verbmem_f"], f"{corpus}_knowmem_forget": metrics["knowmem_f"],
            f"{corpus}_knowmem_retain": metrics["knowmem_r"]}


def _retrained(corpus: str):
    """A corpus's oracle rule: the model retrained without its forget set (`<corpus>/retain-<size>`),
    which PrivLeak compares against; MUSE has one forget set, so the split does not enter."""
    return lambda forget_split, size: model_name(corpus, "retain", size)


NEWS = Benchmark("muse-news", SCHEMAS, hub="muse-bench/MUSE-News", locate=locate, kind="text", forget="raw/forget",
                 retain="raw/retain1", suite=suite, gates=gates, oracle=_retrained("muse-news"),
                 statistics=STATISTICS)
BOOKS = Benchmark("muse-books", SCHEMAS, hub="muse-bench/MUSE-Books", locate=locate, kind="text", forget="raw/forget",
                  retain="raw/retain1", suite=suite, gates=gates, oracle=_retrained("muse-books"),
                  statistics=STATISTICS)
CORPORA = (NEWS.name, BOOKS.name)  # MUSE's two corpora, each its own benchmark
