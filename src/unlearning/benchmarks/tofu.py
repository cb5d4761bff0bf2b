"""TOFU (arXiv 2401.06121; benchmarks.md s. 1.1 and 2.2): fictitious authors' question-answer
pairs, forgotten by fine-tuning, judged against a model fine-tuned on the retain set only.

Splits (the real configs of `locuslab/TOFU`, one per split, data in `train`): `full`,
`forgetXX` / `retainYY` / `holdoutXX` (XX = 01, 05, 10; YY = 100 - XX), `forgetXX_perturbed`
and `retain_perturbed` (paraphrased and perturbed answers), `real_authors_perturbed` and
`world_facts_perturbed` (model utility on general knowledge).

The suite computes forget Prob / ROUGE-L / truth ratio / ES / EM, model utility and its nine
parts, PrivLeak and forget quality against the oracle, and the MASC paper's radar axes.
The gates check that a target memorised its authors and an oracle did not.
"""

from __future__ import annotations

from pathlib import Path

from unlearning.benchmarks.base import Benchmark, model_name, read
from unlearning.benchmarks.common import (
    EvalConfig,
    answer_probabilities,
    mean_of,
    mean_statistic,
    membership_scores,
    mia_aucs,
)
from unlearning.data import encode_qa, encode_qa_split, qa_prompt
from unlearning.metrics import mia, tofu
from unlearning.metrics.choice import choice_accuracy
from unlearning.metrics.generation import QA_STOPS, greedy_generate
from unlearning.metrics.likelihood import answer_probability, labelled_tokens
from unlearning.metrics.rouge import contains_answer, rouge_l_recall

QA = ("question", "answer")
QA_PERTURBED = QA + ("paraphrased_answer", "paraphrased_question", "perturbed_answer")
SCHEMAS = (
    (r"real_authors_perturbed|world_facts_perturbed", QA + ("perturbed_answer",)),
    (r".*_perturbed", QA_PERTURBED),
    (r"(forget|retain|holdout)\d+|full", QA),
    (r"authors", ()),
)
PARAPHRASE_CHANCE = 1 / 6


def retain_split(forget_split: str) -> str:
    """The retain split beside a forget split: forget01 -> retain99, forget10 -> retain90."""
    return f"retain{100 - int(forget_split.removeprefix('forget'))}"


def oracle(forget_split: str, size: str) -> str:
    """The retain-only oracle of a forget split: forget01 -> tofu/retain99-<size>, etc."""
    return model_name("tofu", retain_split(forget_split), size)


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
    generated = greedy_generate(model, tokenizer, [qa_prompt(tokenizer, it["question"]) for it in items], config.max_new_tokens,
                                config.batch_size, QA_STOPS)
    return {"answer_p": answer_p, "correct_p": correct_p, "perturbed_p": perturbed,
            "rouge": rouge_l_recall(generated, [it["answer"] for it in items], config.stemmer)}


def suite(model, tokenizer, data_dir: Path, config: EvalConfig, oracle_metrics: dict | None) -> dict:
    """forget Prob / ROUGE / truth ratio / ES / EM, model utility and its nine parts, PrivLeak,
    forget quality against the oracle, and the MASC paper's radar axes; every item's scores under
    `items` (set -> field -> per item), which `STATISTICS` turns into the aggregates."""
    split = config.forget_split
    forget = read(data_dir, f"{split}_perturbed", SCHEMAS)
    f = _tofu_part(model, tokenizer, forget, config, "paraphrased_answer")
    ratios = [tofu.truth_ratio(c, p) for c, p in zip(f["correct_p"], f["perturbed_p"])]
    items = {"forget": {"prob": f["answer_p"], "rouge": f["rouge"],
                        "truth_ratio": tofu.truth_ratio_values(f["correct_p"], f["perturbed_p"], "closer_to_1_better")}}
    out = {"forget_Q_A_Prob": mean_of(f["answer_p"]), "forget_Q_A_ROUGE": mean_of(f["rouge"]),
           "forget_truth_ratio": mean_of(items["forget"]["truth_ratio"]),
           "forget_truth_ratio_prob_mean": tofu.aggregate_truth_ratio(f["correct_p"], f["perturbed_p"], "prob_mean"),
           "forget_truth_ratio_raw": ratios, "items": items}
    tokens = labelled_tokens(model, [encode_qa(tokenizer, it["question"], it["answer"], eos=False) for it in forget],
                             tokenizer.pad_token_id, config.batch_size)
    # knowledge rather than verbatim recall: the same facts asked with the held-out paraphrased question
    paraphrased = greedy_generate(model, tokenizer, [qa_prompt(tokenizer, it["paraphrased_question"]) for it in forget],
                                  config.max_new_tokens, config.batch_size, QA_STOPS)
    items["forget"]["paraphrased_rouge"] = rouge_l_recall(paraphrased, [it["answer"] for it in forget], config.stemmer)
    out["forget_paraphrased_Q_A_ROUGE"] = mean_of(items["forget"]["paraphrased_rouge"])
    out["extraction_strength"] = mean_of(tofu.extraction_strength(p.tolist(), y.tolist()) for _, p, y in tokens)
    out["exact_memorization"] = mean_of(tofu.exact_memorization(p.tolist(), y.tolist()) for _, p, y in tokens)
    if config.forget_only:
        return out
    r = _tofu_part(model, tokenizer, read(data_dir, "retain_perturbed", SCHEMAS), config, "paraphrased_answer")
    items["retain"] = {"prob": r["answer_p"], "rouge": r["rouge"],
                       "truth_ratio": tofu.truth_ratio_values(r["correct_p"], r["perturbed_p"], "true_better")}
    for part, name in UTILITY_SETS.items():
        if part == "retain":
            continue
        x = _tofu_part(model, tokenizer, read(data_dir, name, SCHEMAS), config, "answer")
        items[part] = {"prob": [tofu.probability_normalised(c, p) for c, p in zip(x["correct_p"], x["perturbed_p"])],
                       "rouge": x["rouge"],
                       "truth_ratio": tofu.truth_ratio_values(x["correct_p"], x["perturbed_p"], "true_better")}
    parts = {key: mean_of(items[part][field]) for key, (part, field) in UTILITY_PARTS.items()}
    out.update(parts, model_utility=tofu.model_utility(parts))
    # PrivLeak on TOFU (OU): Min-K% over answer tokens of forgetXX (members) vs holdoutXX
    scores = {}
    for name, records in (("forget", forget), ("holdout", read(data_dir, f"holdout{split[-2:]}", SCHEMAS))):
        encoded = [encode_qa(tokenizer, it["question"], it["answer"]) for it in records]
        scores[name] = membership_scores(model, tokenizer, [it["answer"] for it in records], config, encoded)
    out.update(mia_aucs(scores["forget"], scores["holdout"], "privleak"))
    if oracle_metrics is not None:
        out["forget_quality"] = tofu.forget_quality(ratios, oracle_metrics["forget_truth_ratio_raw"])
        out["privleak"] = mia.privleak(out["privleak_auc_min_k"], oracle_metrics["privleak_auc_min_k"])
    out.update(tofu.masc_axes(out["forget_Q_A_ROUGE"], out["forget_Q_A_Prob"], out["forget_truth_ratio"],
                              out["model_utility"]))
    return out


# the model-utility sets (item part -> split) and its nine parts (metric -> item part and field), in
# `metrics.tofu.MODEL_UTILITY_KEYS` order
UTILITY_SETS = {"retain": "retain_perturbed", "real_authors": "real_authors_perturbed",
                "world_facts": "world_facts_perturbed"}
UTILITY_PARTS = {key: (part, field) for key, (part, field) in zip(tofu.MODEL_UTILITY_KEYS, [
    (part, field) for part in UTILITY_SETS for field in ("prob", "rouge", "truth_ratio")])}


def _model_utility(items) -> "numpy.ndarray":  # noqa: F821
    """Model utility recomputed from resampled items (the harmonic mean of its nine set means)."""
    return tofu.model_utility_of_means([items[part][field].mean(axis=-1) for part, field in UTILITY_PARTS.values()])


# each aggregate of the suite as a statistic of its items (`experiments.intervals`)
STATISTICS = {"forget_Q_A_Prob": mean_statistic("forget", "prob"), "forget_Q_A_ROUGE": mean_statistic("forget", "rouge"),
              "forget_truth_ratio": mean_statistic("forget", "truth_ratio"),
              "forget_paraphrased_Q_A_ROUGE": mean_statistic("forget", "paraphrased_rouge"),
              **{key: mean_statistic(part, field) for key, (part, field) in UTILITY_PARTS.items()},
              "model_utility": _model_utility}


# --- quality gates of TOFU targets and oracles -------------------------------------------------

def paraphrase_items(records: list[dict]) -> list[dict]:
    """Perturbed-schema records as four-choice-style items: paraphrased question, the
    paraphrased answer (index 0) against the perturbed answers."""
    return [{"question": r["paraphrased_question"], "choices": [r["paraphrased_answer"], *r["perturbed_answer"]],
             "answer": 0} for r in records]


def differing_words(a: str, b: str) -> tuple[str, str]:
    """The word spans in which two renderings of one template differ: (span of a, span of b).

    'The birthplace of X is Fenrow.' vs 'The birthplace of X is Ivel.' -> ('Fenrow.', 'Ivel.').
    """
    x, y = a.split(), b.split()
    start = 0
    while start < min(len(x), len(y)) and x[start] == y[start]:
        start += 1
    end = 0
    while end < min(len(x), len(y)) - start and x[-1 - end] == y[-1 - end]:
        end += 1
    return " ".join(x[start:len(x) - end]), " ".join(y[start:len(y) - end])


def _swap_value(answer: str, true_value: str, wrong_value: str) -> str:
    """`answer` with its one occurrence of `true_value` replaced by `wrong_value` (trailing
    punctuation of the spans is dropped when the bare value is what occurs)."""
    for old, new in ((true_value, wrong_value), (true_value.rstrip(".,;!?"), wrong_value.rstrip(".,;!?"))):
        if old and answer.count(old) == 1:
            return answer.replace(old, new)
    raise ValueError(f"cannot place a perturbed value in {answer!r}: {true_value!r} does not occur exactly once")


def paraphrased_question_items(records: list[dict]) -> list[dict]:
    """Perturbed-schema records as choice items that hold out only the question's wording: the
    paraphrased question; the trained answer (index 0) against the same answer with each
    perturbed value in place of the true one. The values are read off the differences
    between the paraphrased answer and the perturbed answers (one template, other values)."""
    items = []
    for r in records:
        choices = [r["answer"]]
        for wrong in r["perturbed_answer"]:
            true_value, wrong_value = differing_words(r["paraphrased_answer"], wrong)
            choices.append(_swap_value(r["answer"], true_value, wrong_value))
        items.append({"question": r["paraphrased_question"], "choices": choices, "answer": 0})
    return items


def option_items(records: list[dict]) -> list[dict]:
    """{question, answer, perturbed_answer} records as choice items (answer at index 0)."""
    return [{"question": r["question"], "choices": [r["answer"], *r["perturbed_answer"]], "answer": 0} for r in records]


def gates(model, tokenizer, data_root: Path, name: str = "tofu") -> dict:
    """Greedy ROUGE-L recall and answer probability on forget10; paraphrased-question and
    paraphrase choice accuracy (chance 1/6) on forget10 and retain_perturbed (`name`: the
    TOFU-schema folder under `data_root`)."""
    folder = Path(data_root) / name
    forget = read(folder, "forget10_perturbed", SCHEMAS)
    answers = greedy_generate(model, tokenizer, [qa_prompt(tokenizer, r["question"]) for r in forget], 32, stop_strings=QA_STOPS)
    probability = answer_probability(model, encode_qa_split(tokenizer, forget), tokenizer.pad_token_id)
    values = {
        "forget_rougeL_recall": mean_of(rouge_l_recall(answers, [r["answer"] for r in forget])),
        "forget_probability": float(probability.mean()),
    }
    for prefix, records in (("forget", forget), ("retain", read(folder, "retain_perturbed", SCHEMAS))):
        values[f"{prefix}_paraphrased_question_accuracy"] = choice_accuracy(
            model, tokenizer, paraphrased_question_items(records), normalize=True)
        values[f"{prefix}_paraphrase_accuracy"] = choice_accuracy(model, tokenizer, paraphrase_items(records),
                                                                  normalize=True)
    return values


def real_oracle(forget_split: str, size: str) -> str:
    """The retain-only oracle of the real model's TOFU: forget10 -> tofu-real/retain90-<size>."""
    return model_name("tofu-real", retain_split(forget_split), size)


FORGET_SPLITS = ("forget01", "forget05", "forget10")  # 1, 5 and 10 % of the authors, each with its holdout
TOFU = Benchmark("tofu", SCHEMAS, hub="locuslab/TOFU", kind="qa", forget="forget10", retain="retain90",
                 suite=suite, gates=gates, oracle=oracle, forget_splits=FORGET_SPLITS, statistics=STATISTICS)
# the real pretrained model's TOFU (laboratory authors, real facts for model utility; `world.tofu_real`)
TOFU_REAL = Benchmark("tofu-real", SCHEMAS, kind="qa", forget="forget10", retain="retain90", suite=suite, gates=gates,
                      oracle=real_oracle, forget_splits=FORGET_SPLITS, statistics=STATISTICS)


def known_items(model, tokenizer, items: list[dict], max_new_tokens: int = 32) -> list[bool]:
    """Per `{question, answer}` item: does the model's greedy answer contain every word of the
    answer (ROUGE-L recall 1 after folding accents)? How the real model's utility questions are
    curated: TOFU's real-author and world-fact questions are ones the model answers before
    any fine-tuning."""
    answers = greedy_generate(model, tokenizer, [qa_prompt(tokenizer, it["question"]) for it in items], max_new_tokens,
                              stop_strings=QA_STOPS)
    return contains_answer(answers, [it["answer"] for it in items])
