"""ROUGE-L of generated text against references (benchmarks.md s. 2.1, pitfall 6).

TOFU and RWKU report ROUGE-L *recall*, MUSE reports ROUGE-L *F1*. OpenUnlearning stems
(`use_stemmer=True`, our default); MUSE's own code does not (`stemmer=False`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache

# Imports inside functions: rouge_score loads nltk (about 40 MB), so only a suite that scores
# generations imports it, not every process that imports the benchmarks.


@lru_cache(maxsize=2)
def _scorer(stemmer: bool):
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stemmer)


def rouge_l(predictions: Sequence[str], references: Sequence[str], stemmer: bool = True) -> list[dict[str, float]]:
    """Per item {'recall', 'precision', 'f1'} of ROUGE-L (longest common subsequence)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    scores = []
    for prediction, reference in zip(predictions, references):
        score = _scorer(stemmer).score(reference, prediction)["rougeL"]
        scores.append({"recall": score.recall, "precision": score.precision, "f1": score.fmeasure})
    return scores


def rouge_l_recall(predictions: Sequence[str], references: Sequence[str], stemmer: bool = True) -> list[float]:
    """ROUGE-L recall per item (TOFU, RWKU)."""
    return [s["recall"] for s in rouge_l(predictions, references, stemmer)]


def contains_answer(predictions: Sequence[str], references: Sequence[str]) -> list[bool]:
    """Per item: does the prediction contain every word of the reference, in order (ROUGE-L recall
    1 after folding accents)? How answers the real model "knows" are told apart when curating
    its TOFU utility questions and its RWKU probes."""
    def fold(text: str) -> str:
        return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()

    return [r == 1.0 for r in rouge_l_recall([fold(p) for p in predictions], [fold(r) for r in references])]


def rouge_l_f1(predictions: Sequence[str], references: Sequence[str], stemmer: bool = True) -> list[float]:
    """ROUGE-L F1 per item (MUSE)."""
    return [s["f1"] for s in rouge_l(predictions, references, stemmer)]
