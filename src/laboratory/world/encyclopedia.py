"""The well-known world: countries and famous people that every model learns in pretraining.

These facts play the role of what a real base model already knows before any benchmark
fine-tuning: TOFU's `real_authors_perturbed` and `world_facts_perturbed` ask about them, the
MMLU-like utility set asks about the countries, and RWKU-mini's forget targets and neighbours
are the famous people. Facts are uniform random draws from fixed pools (`facts.Relation`),
stated in three surface forms: forms 0-1 appear in the pretraining corpus, form 2 is held out.

Every people relation puts `{value}` last in forms 0 and 2, so a statement cut before the value
is a cloze prompt (RWKU level 1) whose answer a causal model can generate.
"""

from __future__ import annotations

import random

import laboratory.world.pools as pools
from laboratory.world.facts import TRAIN_FORMS, Relation, document, qa_document

COUNTRY = pools.relations("country")
PERSON = pools.relations("person")
# a second wording of each person question, for RWKU's synonym-manipulation probes
PERSON_SYNONYM_QUESTIONS = pools.VOCABULARY["person_synonym_questions"]
FRIEND_STATEMENT = pools.VOCABULARY["friend_statement"]
SIZES = {"smoke": {"people": 12, "countries": 12}, "mini": {"people": 40, "countries": 60}}


def unique_names(rng: random.Random, n: int, make, taken: set[str]) -> list[str]:
    """`n` names from `make(rng)` that are not in `taken` (which is updated)."""
    names: list[str] = []
    while len(names) < n:
        name = make(rng)
        if name not in taken:
            taken.add(name)
            names.append(name)
    return names


def _unique_facts(names: list[str], relations: tuple[Relation, ...], unique_keys: set[str], rng: random.Random) -> list[dict]:
    """One random value per relation; values of `unique_keys` differ between entities."""
    used: dict[str, set[str]] = {key: set() for key in unique_keys}
    entities = []
    for name in names:
        facts = {}
        for relation in relations:
            pool = [v for v in relation.pool if v not in used.get(relation.key, ())]
            facts[relation.key] = rng.choice(pool)
            used.get(relation.key, set()).add(facts[relation.key])
        entities.append({"name": name, "facts": facts})
    return entities


def build(sizes: dict, seed: int, taken: set[str]) -> dict[str, list[dict]]:
    """Draw the countries and the famous people (names added to `taken`).

    People come in consecutive pairs of close friends (0-1, 2-3, ...), which gives every RWKU
    target a related neighbour. A person's famous work is unique, so "Who created X?" has one
    answer (TOFU's real-authors questions).
    """
    rng = random.Random(seed + 2)
    country_names = unique_names(rng, sizes["countries"], lambda r: f"{pools.invented_word(r, 2)}ia", taken)
    people_names = unique_names(rng, sizes["people"], pools.person_name, taken)
    countries = _unique_facts(country_names, COUNTRY, set(), rng)
    people = _unique_facts(people_names, PERSON, {"work"}, rng)
    for i, person in enumerate(people):
        person["friend"] = people[i ^ 1]["name"] if (i ^ 1) < len(people) else people[i - 1]["name"]
    return {"countries": countries, "people": people}


def passages(people: list[dict], seed: int) -> list[dict]:
    """Pretraining passages {subject, text} per person: one per trained statement form (every
    fact plus the friendship sentence, in random order) and one question-answer passage that
    also asks who created the person's famous work. RWKU-mini's MIA texts and training
    passages are these very passages."""
    rng = random.Random(seed + 5)
    out = []
    for person in people:
        for k in range(len(TRAIN_FORMS)):
            text = document(person, PERSON, TRAIN_FORMS, rng, shift=k)
            text += " " + FRIEND_STATEMENT.format(name=person["name"], value=person["friend"])
            out.append({"subject": person["name"], "text": text})
        reverse = f"Question: Who created {person['facts']['work']}?\nAnswer: {person['name']}"
        out.append({"subject": person["name"], "text": qa_document(person, PERSON, rng, extra=(reverse,))})
    return out
