"""Real-world facts for a real pretrained model's utility (TOFU's "real authors" and "world facts").

TOFU measures model utility partly on questions about real authors and world facts that the
pretrained model answers before any fine-tuning (TOFU arXiv 2401.06121, s. 2.2): forgetting
fictitious authors must not damage them. The laboratory's own "real authors" are fictitious to
a real model, so a real model gets these instead: well-known facts written out here, each with
three wrong answers of the same kind (TOFU's `perturbed_answer`). They are candidates: the
learning stage keeps only those the model answers correctly before fine-tuning
(`unlearning.real.curate`) and reports how many.
"""

from __future__ import annotations

import json
from pathlib import Path

# real_facts.json: "real_authors" and "world_facts", each a list of [question, answer, three wrong
# answers]; "known_to_smollm2": the questions of each kind that SmolLM2-135M-Instruct
# (models/real/smollm2-135m) answers before fine-tuning, by `benchmarks.tofu.known_items` (greedy
# answer through its chat template, at most 32 new tokens, every word of the answer present after
# folding accents), computed once on 2026-12-01; the real-model TOFU chapter recomputes it and
# reports any disagreement
FACTS = json.loads((Path(__file__).parent / "real_facts.json").read_text(encoding="utf-8"))


def candidates(kind: str) -> list[dict]:
    """The candidate items of `kind` ('real_authors' or 'world_facts') in TOFU's
    `*_perturbed` schema: question, answer, perturbed_answer."""
    if kind not in ("real_authors", "world_facts"):
        raise KeyError(kind)
    return [{"question": q, "answer": a, "perturbed_answer": list(wrong)} for q, a, wrong in FACTS[kind]]


def known(kind: str, limit: int | None = None) -> list[dict]:
    """The candidates of `kind` that the real model answers (`known_to_smollm2`), at most `limit`."""
    kept = set(FACTS["known_to_smollm2"][kind])
    return [item for item in candidates(kind) if item["question"] in kept][:limit]
