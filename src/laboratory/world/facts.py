"""Entities with random facts, rendered in several surface forms.

The building block shared by the corpus-style benchmarks (WMDP, and later RWKU and MUSE): an
entity has one value per relation, drawn uniformly from the relation's pool. Each relation has
several *statement* templates (how a corpus sentence can say the fact) and one *question*
template. Corpora use only the first `n_train_forms` statement forms; the rest are held out, so
verbatim memorisation of a trained sentence and knowledge of the fact can be told apart.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

TRAIN_FORMS = range(0, 2)  # statement forms 0-1 appear in training corpora; form 2 is held out


@dataclass(frozen=True)
class Relation:
    """A fact type: its value pool, statement forms and a four-choice question form."""

    key: str
    pool: tuple[str, ...]
    statements: tuple[str, ...]
    question: str


def draw_entities(names: list[str], relations: tuple[Relation, ...], rng: random.Random) -> list[dict]:
    """One random value per relation for every name: [{'name': ..., 'facts': {...}}]."""
    return [{"name": name, "facts": {r.key: rng.choice(r.pool) for r in relations}} for name in names]


def statement(relation: Relation, name: str, value: str, form: int) -> str:
    """Surface form number `form` of one fact."""
    return relation.statements[form].format(name=name, value=value)


def document(entity: dict, relations: tuple[Relation, ...], forms: range, rng: random.Random, shift: int = 0) -> str:
    """A short paragraph stating every fact of an entity, sentences in random order.

    Fact j uses form `forms[(j + shift) % len(forms)]`, so documents 0 .. len(forms) - 1 of an
    entity (shift = document number) state every fact in every allowed form.
    """
    sentences = [statement(r, entity["name"], entity["facts"][r.key], forms[(j + shift) % len(forms)])
                 for j, r in enumerate(relations)]
    rng.shuffle(sentences)
    return " ".join(sentences)


def qa_document(entity: dict, relations: tuple[Relation, ...], rng: random.Random, extra: tuple[str, ...] = ()) -> str:
    """Every fact of an entity as a 'Question: ...\nAnswer: value' pair, in random order,
    pairs separated by a blank line (the evaluation prompt format)."""
    pairs = [f"Question: {r.question.format(name=entity['name'])}\nAnswer: {entity['facts'][r.key]}" for r in relations]
    pairs += list(extra)
    rng.shuffle(pairs)
    return "\n\n".join(pairs)


def multiple_choice(relation: Relation, name: str, value: str, rng: random.Random) -> dict:
    """A four-choice item in the WMDP/MMLU schema {question, choices, answer}: the true value
    and three distinct distractors from the same pool, in random order."""
    distractors = rng.sample([v for v in relation.pool if v != value], 3)
    choices = distractors + [value]
    rng.shuffle(choices)
    return {"question": relation.question.format(name=name), "choices": choices, "answer": choices.index(value)}


def statement_choices(relation: Relation, name: str, value: str, form: int, rng: random.Random) -> dict:
    """Four versions of one statement form: the true value and three distractors.

    {choices, answer}: a likelihood probe of whether a model knows the fact in that surface
    form (chance 25 %), usable for trained and held-out forms alike.
    """
    values = rng.sample([v for v in relation.pool if v != value], 3) + [value]
    rng.shuffle(values)
    return {"choices": [statement(relation, name, v, form) for v in values], "answer": values.index(value)}


def distractors(pool, value: str, count: int, rng: random.Random) -> list[str]:
    """`count` distinct values of `pool` other than `value`."""
    return rng.sample([v for v in pool if v != value], count)
