"""A benchmark's metric suite on one model, cached by content hash (benchmarks.md s. 2).

`evaluate(benchmark, model_dir, data_dir, tokenizer_dir, oracle=...)` returns a flat dict of
metrics and writes it to `<model_dir>/metrics/<benchmark>-<key>.json`. The key hashes the
model's weights, every data file of the benchmark, the evaluation config, the metric code and
the oracle's metrics, so a changed model, data set, setting or metric never serves a stale
number (OpenUnlearning's `overwrite: false` pitfall) while an unchanged one is read back.

Metrics that compare against the retain-only oracle (TOFU forget quality, PrivLeak) need the
oracle's own metrics: evaluate the oracle first and pass its dict as `oracle`.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from unlearning.data import QA_PROMPT, encode_qa, encode_text, load_split
from unlearning.learning import file_hash
from unlearning.metrics import mia, tofu
from unlearning.metrics.choice import choice_accuracy
from unlearning.metrics.generation import QA_STOPS, greedy_generate, knowmem_prompt
from unlearning.metrics.likelihood import answer_nll, labelled_tokens
from unlearning.metrics.rouge import rouge_l_f1, rouge_l_recall
from unlearning.models import load_model, load_tokenizer
from unlearning.records import read_json, write_json

SUITES = ("tofu", "muse-news", "muse-books", "wmdp", "rwku")


@dataclass(frozen=True)
class EvalConfig:
    """Evaluation settings that change numbers (all recorded in the cache key)."""

    forget_split: str = "forget10"
    max_new_tokens: int = 32          # TOFU / KnowMem / RWKU answers
    verbmem_new_tokens: int = 64      # MUSE VerbMem continuations (our texts are short)
    min_k: float = 0.4                # Min-K% for PrivLeak
    stemmer: bool = True              # ROUGE stemming (OU: on; MUSE's code: off)
    batch_size: int = 32


def mean_of(values) -> float:
    """Mean of an iterable of numbers (NaN when empty)."""
    values = list(values)
    return float(sum(values) / len(values)) if values else float("nan")


def _qa(question: str) -> str:
    return QA_PROMPT.format(question=question)


def answer_probabilities(model, tokenizer, pairs: list[tuple[str, str]], batch_size: int) -> list[float]:
    """p-bar(answer | question) = exp(-NLL/|y|) for every (question, answer) pair, batched; the
    exponential in float64, as OU's numpy exp(-avg_loss), so a collapsed model's p underflows
    only far below float32's range."""
    nll, length = answer_nll(model, [encode_qa(tokenizer, q, a) for q, a in pairs], tokenizer.pad_token_id, batch_size)
    return (-nll.double() / length.clamp(min=1)).exp().tolist()


def _tofu_part(model, tokenizer, items: list[dict], config: EvalConfig, correct_key: str) -> dict:
    """Probabilities, ROUGE-L recall and truth-ratio inputs of one TOFU evaluation set."""
    pairs = [(it["question"], it["answer"]) for it in items]
    pairs += [(it["question"], it[correct_key]) for it in items] if correct_key != "answer" else []
    pairs += [(it["question"], p) for it in items for p in it["perturbed_answer"]]
    probs = answer_probabilities(model, tokenizer, pairs, config.batch_size)
    n = len(items)
    answer_p = probs[:n]
    correct_p = probs[n:2 * n] if correct_key != "answer" else answer_p
    rest = probs[2 * n:] if correct_key != "answer" else probs[n:]
    perturbed, start = [], 0
    for it in items:
        perturbed.append(rest[start:start + len(it["perturbed_answer"])])
        start += len(it["perturbed_answer"])
    generated = greedy_generate(model, tokenizer, [_qa(it["question"]) for it in items], config.max_new_tokens,
                                config.batch_size, QA_STOPS)
    return {"answer_p": answer_p, "correct_p": correct_p, "perturbed_p": perturbed,
            "rouge": rouge_l_recall(generated, [it["answer"] for it in items], config.stemmer)}


def _min_k_scores(model, tokenizer, texts: list[str], config: EvalConfig, examples=None) -> dict[str, list[float]]:
    """Member-likeness scores of texts, or of pre-encoded `examples` (TOFU's QA items, scored on
    their answer tokens, with `texts` the answers for zlib).

    Texts (MUSE, RWKU) are scored on their own tokens only, without the appended EOS, as MUSE's
    code scores them. QA items keep their EOS label for LOSS and zlib but drop it from the
    per-token scores (Min-K%, Min-K%++), as OpenUnlearning's `tokenwise_logprobs` does."""
    cut = slice(None) if examples is None else slice(0, -1)  # per-token scores: without the QA items' EOS
    examples = examples or [encode_text(tokenizer, t, eos=False) for t in texts]
    tokens = labelled_tokens(model, examples, tokenizer.pad_token_id, config.batch_size, with_moments=True)
    return {"min_k": [mia.min_k_score(lp[cut], config.min_k) for lp, *_ in tokens],
            "min_k_pp": [mia.min_k_plus_plus_score(lp[cut], mu[cut], var[cut], config.min_k)
                         for lp, _, _, mu, var in tokens],
            "loss": [mia.loss_score(lp) for lp, *_ in tokens],
            "zlib": [mia.zlib_score(lp, t) for (lp, *_), t in zip(tokens, texts)]}


def _mia_aucs(members: dict, nonmembers: dict, prefix: str) -> dict:
    return {f"{prefix}_auc_{name}": mia.auc(members[name], nonmembers[name]) for name in ("min_k", "min_k_pp", "loss", "zlib")}


def tofu_suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle: dict | None) -> dict:
    """forget Prob / ROUGE / truth ratio / ES / EM, model utility and its nine parts, PrivLeak,
    forget quality against the oracle, and the MASC paper's radar axes."""
    split = config.forget_split
    forget = load_split(data_dir, f"{split}_perturbed")
    f = _tofu_part(model, tokenizer, forget, config, "paraphrased_answer")
    ratios = [tofu.truth_ratio(c, p) for c, p in zip(f["correct_p"], f["perturbed_p"])]
    out = {"forget_Q_A_Prob": mean_of(f["answer_p"]), "forget_Q_A_ROUGE": mean_of(f["rouge"]),
           "forget_truth_ratio": tofu.aggregate_truth_ratio(f["correct_p"], f["perturbed_p"], "closer_to_1_better"),
           "forget_truth_ratio_prob_mean": tofu.aggregate_truth_ratio(f["correct_p"], f["perturbed_p"], "prob_mean"),
           "forget_truth_ratio_raw": ratios}
    tokens = labelled_tokens(model, [encode_qa(tokenizer, it["question"], it["answer"], eos=False) for it in forget],
                             tokenizer.pad_token_id, config.batch_size)
    # knowledge rather than verbatim recall: the same facts asked with the held-out paraphrased question
    paraphrased = greedy_generate(model, tokenizer, [_qa(it["paraphrased_question"]) for it in forget],
                                  config.max_new_tokens, config.batch_size, QA_STOPS)
    out["forget_paraphrased_Q_A_ROUGE"] = mean_of(rouge_l_recall(paraphrased, [it["answer"] for it in forget],
                                                               config.stemmer))
    out["extraction_strength"] = mean_of(tofu.extraction_strength(p.tolist(), y.tolist()) for _, p, y in tokens)
    out["exact_memorization"] = mean_of(tofu.exact_memorization(p.tolist(), y.tolist()) for _, p, y in tokens)
    r = _tofu_part(model, tokenizer, load_split(data_dir, "retain_perturbed"), config, "paraphrased_answer")
    parts = {"retain_Q_A_Prob": mean_of(r["answer_p"]), "retain_Q_A_ROUGE": mean_of(r["rouge"]),
             "retain_Truth_Ratio": tofu.aggregate_truth_ratio(r["correct_p"], r["perturbed_p"], "true_better")}
    for short, name in (("ra", "real_authors_perturbed"), ("wf", "world_facts_perturbed")):
        x = _tofu_part(model, tokenizer, load_split(data_dir, name), config, "answer")
        parts[f"{short}_Q_A_Prob_normalised"] = mean_of(
            tofu.probability_normalised(c, p) for c, p in zip(x["correct_p"], x["perturbed_p"]))
        parts[f"{short}_Q_A_ROUGE"] = mean_of(x["rouge"])
        parts[f"{short}_Truth_Ratio"] = tofu.aggregate_truth_ratio(x["correct_p"], x["perturbed_p"], "true_better")
    out.update(parts, model_utility=tofu.model_utility(parts))
    # PrivLeak on TOFU (OU): Min-K% over answer tokens of forgetXX (members) vs holdoutXX
    scores = {}
    for name, items in (("forget", forget), ("holdout", load_split(data_dir, f"holdout{split[-2:]}"))):
        encoded = [encode_qa(tokenizer, it["question"], it["answer"]) for it in items]
        scores[name] = _min_k_scores(model, tokenizer, [it["answer"] for it in items], config, encoded)
    out.update(_mia_aucs(scores["forget"], scores["holdout"], "privleak"))
    if oracle is not None:
        out["forget_quality"] = tofu.forget_quality(ratios, oracle["forget_truth_ratio_raw"])
        out["privleak"] = mia.privleak(out["privleak_auc_min_k"], oracle["privleak_auc_min_k"])
    out.update(tofu.masc_axes(out["forget_Q_A_ROUGE"], out["forget_Q_A_Prob"], out["forget_truth_ratio"],
                              out["model_utility"]))
    return out


def muse_suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle: dict | None) -> dict:
    """VerbMem, KnowMem forget / retain (ROUGE-L F1), Min-40% PrivLeak, LOSS and zlib AUCs."""
    verbmem = load_split(data_dir, "verbmem/forget")
    continuations = greedy_generate(model, tokenizer, [r["prompt"] for r in verbmem], config.verbmem_new_tokens,
                                    config.batch_size)
    out = {"verbmem_f": mean_of(rouge_l_f1(continuations, [r["gt"] for r in verbmem], config.stemmer))}
    for side, key in (("forget", "knowmem_f"), ("retain", "knowmem_r")):
        icl, items = load_split(data_dir, f"knowmem/{side}_qa_icl"), load_split(data_dir, f"knowmem/{side}_qa")
        answers = greedy_generate(model, tokenizer, [knowmem_prompt(icl, r["question"]) for r in items],
                                  config.max_new_tokens, config.batch_size, QA_STOPS)
        out[key] = mean_of(rouge_l_f1(answers, [r["answer"] for r in items], config.stemmer))
    forget = [r["text"] for r in load_split(data_dir, "privleak/forget")]
    holdout = [r["text"] for r in load_split(data_dir, "privleak/holdout")]
    out.update(_mia_aucs(_min_k_scores(model, tokenizer, forget, config),
                         _min_k_scores(model, tokenizer, holdout, config), "privleak"))
    if oracle is not None:
        out["privleak"] = mia.privleak(out["privleak_auc_min_k"], oracle["privleak_auc_min_k"])
    return out


def wmdp_suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle: dict | None) -> dict:
    """Four-choice accuracy on wmdp-bio, wmdp-cyber and the MMLU-like utility set."""
    return {f"{split}_accuracy": choice_accuracy(model, tokenizer, load_split(data_dir, split), batch_size=64)
            for split in ("wmdp-bio", "wmdp-cyber", "mmlu")}


def _rwku_prompt(item: dict) -> str:
    if item["level"] == 1:  # cloze with a trailing blank: complete the sentence
        return item["query"].removesuffix("___.").rstrip()
    return _qa(item["query"])


def rwku_suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle: dict | None) -> dict:
    """ROUGE-L recall on forget levels 1-3 and neighbour levels 1-2; MIA scores on the forget
    and retain passages (RWKU reports the raw mean scores; we add the AUC)."""
    out = {}
    for split in ("forget_level1", "forget_level2", "forget_level3", "neighbor_level1", "neighbor_level2"):
        items = load_split(data_dir, split)
        answers = greedy_generate(model, tokenizer, [_rwku_prompt(it) for it in items], config.max_new_tokens,
                                  config.batch_size, QA_STOPS + (".",))
        out[f"{split}_rougeL_recall"] = mean_of(rouge_l_recall(answers, [it["answer"] for it in items], config.stemmer))
    forget = _min_k_scores(model, tokenizer, [r["text"] for r in load_split(data_dir, "mia_forget")], config)
    retain = _min_k_scores(model, tokenizer, [r["text"] for r in load_split(data_dir, "mia_retain")], config)
    for name in ("loss", "zlib", "min_k", "min_k_pp"):
        out[f"mia_forget_{name}"], out[f"mia_retain_{name}"] = mean_of(forget[name]), mean_of(retain[name])
    out.update(_mia_aucs(forget, retain, "mia"))
    return out


SUITE_FUNCTIONS = {"tofu": tofu_suite, "muse-news": muse_suite, "muse-books": muse_suite, "wmdp": wmdp_suite,
                   "rwku": rwku_suite}


def metrics_version() -> str:
    """Hash of the metric code, part of every cache key."""
    root = Path(__file__).parent
    return file_hash(Path(__file__), root / "gates.py", *sorted((root / "metrics").glob("*.py")))


def cache_key(benchmark: str, model_dir: Path, data_dir: Path, config: EvalConfig, oracle: dict | None) -> str:
    weights = sorted(Path(model_dir).glob("*.safetensors"))
    if not weights:
        raise FileNotFoundError(f"model: no safetensors weights in {model_dir}")
    parts = {"benchmark": benchmark, "weights": file_hash(*weights),
             "data": file_hash(*sorted(Path(data_dir).rglob("*.json"))), "config": asdict(config),
             "code": metrics_version(), "oracle": oracle}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def evaluate(benchmark: str, model_dir: str | Path, data_dir: str | Path, tokenizer_dir: str | Path, *,
             config: EvalConfig = EvalConfig(), oracle: dict | None = None, log=None) -> dict:
    """Metrics of `benchmark` for the model in `model_dir`, read from the cache when the key
    matches, else computed and written atomically next to the model."""
    if benchmark not in SUITE_FUNCTIONS:
        raise ValueError(f"benchmark must be one of {', '.join(SUITES)}; got {benchmark!r}")
    model_dir, data_dir = Path(model_dir), Path(data_dir)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"data: folder not found: {data_dir}")
    key = cache_key(benchmark, model_dir, data_dir, config, oracle)
    path = model_dir / "metrics" / f"{benchmark}-{key[:16]}.json"
    if path.is_file():
        if log:
            log(f"cached: {path}")
        return read_json(path)["metrics"]
    start = time.perf_counter()
    model, tokenizer = load_model(model_dir), load_tokenizer(tokenizer_dir)
    metrics = SUITE_FUNCTIONS[benchmark](model, tokenizer, data_dir, config, oracle)
    metrics["eval_seconds"] = time.perf_counter() - start  # what one evaluation costs (checkpoint selection)
    write_json(path, {"key": key, "benchmark": benchmark, "config": asdict(config), "metrics": metrics})
    if log:
        log(f"wrote {path}")
    return metrics
