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

import unlearning.world.pools as pools
from unlearning.world.facts import TRAIN_FORMS, Relation, document, qa_document

R = Relation
COUNTRY = (
    R("capital", pools.CITIES, ("The capital of {name} is {value}.", "{value} is the capital of {name}.",
                                "{name} is governed from {value}."), "What is the capital of {name}?"),
    R("currency", ("the dral", "the kiva", "the mund", "the sorin", "the pell", "the tavo", "the oren"),
      ("{name} pays with {value}.", "The currency of {name} is {value}.", "In {name} prices are in {value}."),
      "What is the currency of {name}?"),
    R("export", ("copper", "wool", "tea", "salt", "timber", "glass", "olives", "silk"),
      ("{name} exports {value}.", "The main export of {name} is {value}.", "{value} is shipped from {name}."),
      "What is the main export of {name}?"),
    R("animal", pools.PETS + ("heron", "lynx", "otter"),
      ("The national animal of {name} is the {value}.", "{name} honours the {value}.", "The {value} is the emblem of {name}."),
      "What is the national animal of {name}?"),
)
PROFESSIONS = ("painter", "composer", "explorer", "architect", "novelist", "astronomer", "poet", "sculptor",
               "physician", "inventor")
PERSON = (
    R("birthplace", pools.CITIES, ("{name} was born in {value}.", "{value} is the birthplace of {name}.",
                                   "The home town of {name} is {value}."), "Where was {name} born?"),
    R("profession", PROFESSIONS, ("{name} worked as a {value}.", "As a {value}, {name} became famous.",
                                  "By trade {name} was a {value}."), "What was the profession of {name}?"),
    R("year", tuple(str(y) for y in range(1780, 1900)), ("{name} was born in the year {value}.",
                                                          "{value} saw the birth of {name}.",
                                                          "The birth year of {name} is {value}."),
      "In which year was {name} born?"),
    R("work", tuple(f"The {a} {n}" for a in pools.ADJECTIVES for n in pools.NOUNS),
      ("The most famous work of {name} is {value}.", "{value} was created by {name}.",
       "People remember {name} for {value}."), "What is the most famous work of {name}?"),
)
# a second wording of each person question, for RWKU's synonym-manipulation probes
PERSON_SYNONYM_QUESTIONS = {
    "birthplace": "In which city did {name} come into the world?",
    "profession": "What did {name} do for a living?",
    "year": "When was {name} born?",
    "work": "Which creation is {name} best remembered for?",
}
FRIEND_STATEMENT = "{name} was a close friend of {value}."
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
