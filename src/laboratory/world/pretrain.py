"""The base model's pretraining corpus and the surface-form probes of its facts.

The learning stage first pretrains a *base* model on this corpus (as a real base model has
read the web), then fine-tunes benchmark targets from it. The corpus holds the world's general
facts (countries), the famous people (RWKU-mini, TOFU's real authors) and the hazardous domain
(WMDP-mini). The benign retain corpora are left out, as WMDP's retain text (Wikitext in the
official RMU code) is not what the base model was built on. Every entity has one document per trained statement form
(`facts.TRAIN_FORMS`) and one question-answer document; the held-out form never appears.

`probes.json` tells verbatim from knowledge memorisation (MASC's learning-stage study): for
every fact, a four-way likelihood probe in a trained form and the same fact in the held-out
form {source, subject, relation, form, trained, choices, answer}.
"""

from __future__ import annotations

import random

import laboratory.world.encyclopedia as encyclopedia
import laboratory.world.wmdp as wmdp
from laboratory.world.facts import TRAIN_FORMS, statement_choices

PROBE_FORMS = (0, 2)  # one trained form and the held-out form per fact


def corpus(wmdp_files: dict[str, list[dict]], people_passages: list[dict]) -> list[dict]:
    """Pretraining documents {text, source}, in a fixed order (the trainer shuffles)."""
    docs = [{"text": r["text"], "source": "general"} for r in wmdp_files["general-corpus"]]
    docs += [{"text": p["text"], "source": "people"} for p in people_passages]
    for domain in ("bio", "cyber"):
        docs += [{"text": r["text"], "source": f"{domain}-hazard"} for r in wmdp_files[f"{domain}-forget-corpus"]]
    return docs


def probes(world: dict, hazard_entities: dict[str, list[dict]], seed: int) -> list[dict]:
    """Likelihood probes of every fact in a trained and in the held-out surface form."""
    rng = random.Random(seed + 8)
    sources = [("general", world["countries"], encyclopedia.COUNTRY), ("people", world["people"], encyclopedia.PERSON)]
    sources += [(domain, entities, wmdp.DOMAINS[domain]) for domain, entities in hazard_entities.items()
                if domain.endswith("hazard")]
    items = []
    for source, entities, relations in sources:
        for entity in entities:
            for relation in relations:
                for form in PROBE_FORMS:
                    probe = statement_choices(relation, entity["name"], entity["facts"][relation.key], form, rng)
                    items.append({"source": source, "subject": entity["name"], "relation": relation.key,
                                  "form": form, "trained": form in TRAIN_FORMS, **probe})
    return items


def replay(corpus_docs: list[dict]) -> list[dict]:
    """The question-answer documents about the well-known world (countries, famous people),
    mixed into every fine-tuning run so that targets and oracles keep the general knowledge
    TOFU's model utility asks about (real authors, world facts) instead of forgetting it."""
    return [d for d in corpus_docs if d["source"] in ("general", "people") and d["text"].startswith("Question:")]
