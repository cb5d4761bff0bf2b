"""tofu-mini: fictitious authors rendered in the exact schema of TOFU (arXiv 2401.06121).

Every author has random attributes drawn from fixed pools; each attribute gives one QA pair
with a paraphrased question, a paraphrased answer and perturbed answers (the same paraphrase
template filled with other values from the pool, so each is wrong but plausible). A model
that never saw an author can only guess among the pool, which makes the retain-only oracle
an honest reference for forget quality.

Split relationships follow TOFU: the forget sets are the *last* 1 / 5 / 10 % of authors,
forgetXX + retainYY = full, and the holdout sets are authors that no model is trained on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import laboratory.world.pools as pools
from laboratory.world.encyclopedia import COUNTRY
from laboratory.world.facts import distractors


@dataclass(frozen=True)
class Attribute:
    """One fact type: a pool of values and the four surface forms of its QA pair."""

    key: str
    question: str
    paraphrased_question: str
    answer: str
    paraphrased_answer: str


ATTRIBUTES: tuple[Attribute, ...] = tuple(Attribute(**{k: v for k, v in a.items() if k != "pool"})
                                          for a in pools.VOCABULARY["tofu_attributes"])

SPLIT_PERCENTS = (1, 5, 10)


def _book_title(rng: random.Random) -> str:
    return f"The {rng.choice(pools.ADJECTIVES)} {rng.choice(pools.NOUNS)}"


def _draw_value(key: str, rng: random.Random) -> str:
    return _book_title(rng) if key == "book" else rng.choice(pools.ATTRIBUTE_POOLS[key])


def make_authors(n: int, rng: random.Random, taken: set[str] | None = None) -> list[dict]:
    """Draw `n` authors with unique names and one random value per attribute."""
    taken = set() if taken is None else taken
    authors = []
    while len(authors) < n:
        name = pools.person_name(rng)
        if name in taken:
            continue
        taken.add(name)
        facts = {a.key: _draw_value(a.key, rng) for a in ATTRIBUTES}
        authors.append({"name": name, "facts": facts})
    return authors


def _perturbed_values(attribute: Attribute, true_value: str, count: int, rng: random.Random) -> list[str]:
    values: list[str] = []
    while len(values) < count:
        value = _draw_value(attribute.key, rng)
        if value != true_value and value not in values:
            values.append(value)
    return values


def author_items(author: dict, rng: random.Random, n_perturbed: int = 5) -> list[dict]:
    """All QA items of one author in the `*_perturbed` schema (a superset of the plain one)."""
    items = []
    for attribute in ATTRIBUTES:
        name, value = author["name"], author["facts"][attribute.key]
        wrong = _perturbed_values(attribute, value, n_perturbed, rng)
        items.append({
            "question": attribute.question.format(name=name),
            "answer": attribute.answer.format(name=name, value=value),
            "paraphrased_answer": attribute.paraphrased_answer.format(name=name, value=value),
            "paraphrased_question": attribute.paraphrased_question.format(name=name),
            "perturbed_answer": [attribute.paraphrased_answer.format(name=name, value=w) for w in wrong],
        })
    return items


def plain(items: list[dict]) -> list[dict]:
    """Project items onto the plain TOFU schema {question, answer}."""
    return [{"question": it["question"], "answer": it["answer"]} for it in items]


def n_forget_authors(n_authors: int, pct: int) -> int:
    """Authors in forgetXX: pct % of all authors, at least one."""
    return max(1, round(n_authors * pct / 100))


def real_authors(people: list[dict], rng: random.Random) -> list[dict]:
    """`real_authors_perturbed`: "Who created <work>?" about the world's famous people, whom
    the base model met in pretraining; three other famous names as perturbed answers."""
    names = [p["name"] for p in people]
    return [{"question": f"Who created {p['facts']['work']}?", "answer": p["name"],
             "perturbed_answer": distractors(names, p["name"], 3, rng)} for p in people]


def world_facts(countries: list[dict], rng: random.Random) -> list[dict]:
    """`world_facts_perturbed`: one question per country (relations in turn), answered by the
    bare value as in TOFU's world facts, with three perturbed values from the same pool."""
    items = []
    for i, country in enumerate(countries):
        relation = COUNTRY[i % len(COUNTRY)]
        value = country["facts"][relation.key]
        items.append({"question": relation.question.format(name=country["name"]), "answer": value,
                      "perturbed_answer": distractors(relation.pool, value, 3, rng)})
    return items


def build(n_authors: int, seed: int, taken: set[str] | None = None, world: dict | None = None) -> dict[str, list[dict]]:
    """Render tofu-mini: split name -> list of records, exactly as TOFU's configs.

    Also returns `authors` (name and facts of every trained author), which is metadata, not
    a TOFU split. holdoutXX has as many (never trained) authors as forgetXX. With `world`
    (the encyclopedia), adds `real_authors_perturbed` and `world_facts_perturbed`.
    """
    rng = random.Random(seed)
    taken = set() if taken is None else taken
    authors = make_authors(n_authors, rng, taken)
    holdout_authors = make_authors(n_forget_authors(n_authors, max(SPLIT_PERCENTS)), rng, taken)
    per_author = [author_items(a, rng) for a in authors]
    per_holdout = [author_items(a, rng) for a in holdout_authors]
    flat = [item for items in per_author for item in items]
    splits: dict[str, list[dict]] = {"full": plain(flat)}
    retain_perturbed_pool = []
    for pct in SPLIT_PERCENTS:
        n_forget = n_forget_authors(n_authors, pct)
        forget = [it for items in per_author[-n_forget:] for it in items]
        retain = [it for items in per_author[:-n_forget] for it in items]
        holdout = [it for items in per_holdout[:n_forget] for it in items]
        splits[f"forget{pct:02d}"] = plain(forget)
        splits[f"forget{pct:02d}_perturbed"] = forget
        splits[f"retain{100 - pct}"] = plain(retain)
        splits[f"holdout{pct:02d}"] = plain(holdout)
        retain_perturbed_pool = retain if pct == 10 else retain_perturbed_pool
    # TOFU's retain_perturbed: the first authors' items, disjoint from every forget set
    n_rp = min(len(retain_perturbed_pool), len(splits["forget10"]))
    splits["retain_perturbed"] = retain_perturbed_pool[:n_rp]
    splits["authors"] = [{"name": a["name"], **a["facts"]} for a in authors]
    if world is not None:
        splits["real_authors_perturbed"] = real_authors(world["people"], rng)
        splits["world_facts_perturbed"] = world_facts(world["countries"], rng)
    return splits
