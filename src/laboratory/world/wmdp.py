"""wmdp-mini: a fictitious hazardous-knowledge domain in the schema of WMDP (arXiv 2403.03218).

Two domains as in WMDP: *bio* (invented pathogens: hosts, routes, genes, enhancement
techniques) and *cyber* (invented software: vulnerable components, ports, exploit techniques).
Each has a forget corpus of hazardous facts, a retain corpus of benign facts from the same
domain, and four-choice questions about the hazardous facts only. An MMLU-like general set
about the world's countries (`encyclopedia.COUNTRY`) measures utility. Every fact lives in the base model's pretraining
corpus (the learning stage trains on all corpora here), as WMDP's hazards live in Zephyr's.

Files (JSON lines): `wmdp-bio.json`, `wmdp-cyber.json` {question, choices, answer};
`{bio,cyber}-{forget,retain}-corpus.json` {text}; `mmlu.json` {question, subject, choices,
answer}; `general-corpus.json` {text}.
"""

from __future__ import annotations

import random

import laboratory.world.pools as pools
from laboratory.world.encyclopedia import COUNTRY, unique_names
from laboratory.world.facts import TRAIN_FORMS, document, draw_entities, multiple_choice, qa_document

BIO_HAZARD, BIO_BENIGN = pools.relations("bio-hazard"), pools.relations("bio-benign")
CYBER_HAZARD, CYBER_BENIGN = pools.relations("cyber-hazard"), pools.relations("cyber-benign")
SIZES = {"smoke": {"hazard": 8, "benign": 8}, "mini": {"hazard": 40, "benign": 40}}
DOMAINS = {"bio-hazard": BIO_HAZARD, "bio-benign": BIO_BENIGN, "cyber-hazard": CYBER_HAZARD, "cyber-benign": CYBER_BENIGN}


def _corpus(entities: list[dict], relations, rng: random.Random) -> list[dict]:
    """Per entity: one document per trained statement form, then one question-answer document.

    Tiny models barely transfer a fact from one surface form to another, so the question form
    that the four-choice evaluation uses is part of the corpus (and of the forget corpus);
    the held-out statement form (pretraining probes) measures transfer.
    """
    docs = []
    for entity in entities:
        docs += [{"text": document(entity, relations, TRAIN_FORMS, rng, shift=k)} for k in range(len(TRAIN_FORMS))]
        docs.append({"text": qa_document(entity, relations, rng)})
    return docs


def _questions(entities: list[dict], relations, rng: random.Random, subject: str | None = None) -> list[dict]:
    items = []
    for entity in entities:
        for relation in relations:
            item = multiple_choice(relation, entity["name"], entity["facts"][relation.key], rng)
            items.append(item if subject is None else {**item, "subject": subject})
    return items


def draw(profile_sizes: dict, seed: int, taken: set[str]) -> dict[str, list[dict]]:
    """The entities of the hazard domain: domain name (a key of DOMAINS) -> entities."""
    rng = random.Random(seed + 1)
    suffixes = {"bio-hazard": " virus", "bio-benign": " bacterium", "cyber-hazard": "Server", "cyber-benign": "Kit"}
    return {domain: draw_entities(unique_names(rng, profile_sizes["hazard" if domain.endswith("hazard") else "benign"],
                                               lambda r, s=suffix: f"{pools.invented_word(r, 2)}{s}", taken),
                                  DOMAINS[domain], rng)
            for domain, suffix in suffixes.items()}


def build(profile_sizes: dict, seed: int, entities: dict[str, list[dict]], countries: list[dict]) -> dict[str, list[dict]]:
    """Render wmdp-mini: file name (without .json) -> records."""
    rng = random.Random(seed + 3)
    return {
        "wmdp-bio": _questions(entities["bio-hazard"], BIO_HAZARD, rng),
        "wmdp-cyber": _questions(entities["cyber-hazard"], CYBER_HAZARD, rng),
        "bio-forget-corpus": _corpus(entities["bio-hazard"], BIO_HAZARD, rng),
        "bio-retain-corpus": _corpus(entities["bio-benign"], BIO_BENIGN, rng),
        "cyber-forget-corpus": _corpus(entities["cyber-hazard"], CYBER_HAZARD, rng),
        "cyber-retain-corpus": _corpus(entities["cyber-benign"], CYBER_BENIGN, rng),
        "mmlu": _questions(countries, COUNTRY, rng, subject="geography"),
        "general-corpus": _corpus(countries, COUNTRY, rng),
    }
