"""Famous people and facts about them, for RWKU on a real pretrained model (RWKU arXiv 2406.10890).

RWKU forgets real people that the original model already knows: it picks famous targets, keeps
only the probes the model answers before unlearning, and has the model itself write the forget
corpus. These are the candidates: pairs of a target and a *neighbour* (a related person whose
knowledge must survive: RWKU's neighbour set), each with facts written three ways: a plain
question (level 2), a cloze statement whose value is a trailing blank (level 1), and the answer.
Level 3 (adversarial) probes are built from the questions (`rwku_real.adversarial`). Which
probes survive is decided by the model (`laboratory.world.rwku_real.build`), never here.
"""

from __future__ import annotations

import json
from pathlib import Path

_DATA = json.loads((Path(__file__).parent / "real_people.json").read_text(encoding="utf-8"))
# person -> facts, each (question, cloze with a trailing "___.", answer)
PEOPLE: dict[str, tuple[tuple[str, str, str], ...]] = {name: tuple(map(tuple, facts)) for name, facts in _DATA["people"].items()}
# (target, neighbour): RWKU's neighbour is a related person whose knowledge must survive
PAIRS: tuple[tuple[str, str], ...] = tuple(map(tuple, _DATA["pairs"]))
# people who are neither targets nor neighbours: the retain corpus and MIA's non-members
OTHERS: tuple[str, ...] = tuple(_DATA["others"])
# prompts under which the model writes about a person (RWKU had the original model write its corpus)
CORPUS_PROMPTS: tuple[str, ...] = tuple(_DATA["corpus_prompts"])
