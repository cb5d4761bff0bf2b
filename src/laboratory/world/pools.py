"""Value pools of the laboratory world: names, places and other attribute values.

The words are data, in `vocabulary.json` beside this module: the syllables of invented names,
the named value pools, TOFU's attributes and every other fact type (`Relation`) with its surface
forms. This module reads them and derives the pools that follow a rule (years, titles, counts).
Pools are fixed lists so that every fact is a uniform draw from a known set: a model that never
saw a fact has a chance accuracy of 1 / len(pool) for it, which the book reports.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from laboratory.world.facts import Relation

VOCABULARY = json.loads(Path(__file__).with_name("vocabulary.json").read_text(encoding="utf-8"))
_ONSETS, _VOWELS, _CODAS = (tuple(VOCABULARY["syllables"][part]) for part in ("onsets", "vowels", "codas"))
_NAMED = {name: tuple(values) for name, values in VOCABULARY["pools"].items()}
ADJECTIVES, NOUNS = _NAMED["adjectives"], _NAMED["nouns"]
POOLS: dict[str, tuple[str, ...]] = {
    **_NAMED,
    "author_birth_years": tuple(str(y) for y in range(1931, 1996)),  # TOFU-mini's authors
    "birth_years": tuple(str(y) for y in range(1780, 1900)),  # the encyclopedia's famous people
    "works": tuple(f"The {a} {n}" for a in ADJECTIVES for n in NOUNS),
    "head_counts": tuple(str(n) for n in range(20, 1000, 10)),
    "homes": tuple(f"the {a} {n}" for a in ADJECTIVES[:8] for n in _NAMED["home_places"]),
    "national_animals": _NAMED["pets"] + _NAMED["wild_animals"],
}
# TOFU-mini's attribute -> its pool (the book title follows a rule of its own: `tofu._book_title`)
ATTRIBUTE_POOLS = {a["key"]: POOLS[a["pool"]] for a in VOCABULARY["tofu_attributes"] if a["pool"] is not None}


def relations(table: str, cast: tuple[str, ...] = ()) -> tuple[Relation, ...]:
    """The fact types of one table of `vocabulary.json` ('country', 'person', 'bio-hazard', 'news',
    ...): a pool given by name is looked up in `POOLS`, 'cast' is the names drawn for the corpus."""
    def pool(spec) -> tuple[str, ...]:
        return tuple(spec) if isinstance(spec, list) else tuple(cast) if spec == "cast" else POOLS[spec]

    return tuple(Relation(r["key"], pool(r["pool"]), tuple(r["statements"]), r["question"])
                 for r in VOCABULARY["relations"][table])


def _syllable(rng: random.Random) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def invented_word(rng: random.Random, syllables: int = 2) -> str:
    """A pronounceable capitalised word that belongs to no language."""
    return "".join(_syllable(rng) for _ in range(syllables)).capitalize()


def person_name(rng: random.Random) -> str:
    """A fictitious first and last name, e.g. 'Brenal Thouvik'."""
    return f"{invented_word(rng, rng.choice((2, 2, 3)))} {invented_word(rng, rng.choice((2, 3)))}"
