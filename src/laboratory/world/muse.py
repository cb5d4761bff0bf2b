"""muse-mini News and Books, in the schema of MUSE (arXiv 2407.06460).

*News*: short articles about invented events (floods, strikes, trials, ...), each with a place,
a month, a number of people affected, an outcome and a leader drawn from a small cast of
recurring public figures, who reappear across many articles with their roles.
*Books*: chapters of four invented sagas; each chapter follows one character (home, companion
creature, treasured object, order) and names the character's mentor from the same saga.

Both corpora are split the way MUSE's are: `raw` forget / retain1 / retain2 / holdout texts
(the target is trained on forget + retain1 + retain2, the retrained oracle on retain1 +
retain2, holdout is never trained); `verbmem/forget` {prompt, gt} cuts forget texts in two;
`knowmem` forget_qa / retain_qa ask about facts of forget / retain1 texts, with in-context
examples (`*_qa_icl`) about retain2; `privleak` forget / retain / holdout {text} are equal-size
samples of the forget, retain1 and holdout texts. Files live under `<config>/<split>.json`.
"""

from __future__ import annotations

import random

import laboratory.world.pools as pools
from laboratory.world.encyclopedia import unique_names
from laboratory.world.facts import TRAIN_FORMS, Relation, document

EVENT_KINDS, ROLES = pools.POOLS["event_kinds"], pools.POOLS["roles"]
SIZES = {
    "smoke": {"news": (6, 8, 8, 6), "cast": 6, "saga_characters": 4, "chapters": 2, "qa_per_text": 2, "icl": 3},
    "mini": {"news": (30, 40, 40, 30), "cast": 15, "saga_characters": 12, "chapters": 2, "qa_per_text": 2, "icl": 5},
}
SPLITS = ("forget", "retain1", "retain2", "holdout")


def _facts(names: list[str], relations: tuple[Relation, ...], rng: random.Random) -> list[dict]:
    entities = []
    for name in names:
        facts = {r.key: rng.choice([v for v in r.pool if v != name]) for r in relations}
        entities.append({"name": name, "facts": facts})
    return entities


def _article(event: dict, relations, roles: dict[str, str], rng: random.Random) -> str:
    leader = event["facts"]["leader"]
    body = document(event, relations, TRAIN_FORMS, rng)
    return f"The {event['name']} in {event['facts']['place']}. {body} {leader}, the {roles[leader]}, spoke to reporters."


def _chapter(character: dict, relations, number: int, rng: random.Random) -> str:
    body = document(character, relations, TRAIN_FORMS, rng)
    return f"Chapter {number}. {body} That night {character['name']} thought of {character['facts']['mentor']}."


def _verbmem(texts: list[str]) -> list[dict]:
    """Cut each text at half its words: prompt = first half, gt = the rest."""
    items = []
    for text in texts:
        words = text.split(" ")
        cut = len(words) // 2
        items.append({"prompt": " ".join(words[:cut]), "gt": " ".join(words[cut:])})
    return items


def _qa(entities: list[dict], relations, per_entity: int, rng: random.Random) -> list[dict]:
    items = []
    for entity in entities:
        for relation in rng.sample(relations, per_entity):
            items.append({"question": relation.question.format(name=entity["name"]),
                          "answer": entity["facts"][relation.key]})
    return items


def _render(split_entities: dict[str, list[dict]], texts: dict[str, list[str]], relations, sizes: dict,
            rng: random.Random) -> dict[str, list[dict]]:
    n_priv = min(len(texts["forget"]), len(texts["retain1"]), len(texts["holdout"]))
    icl = _qa(split_entities["retain2"], relations, sizes["qa_per_text"], rng)
    return {
        **{f"raw/{split}": [{"text": t} for t in texts[split]] for split in SPLITS},
        "verbmem/forget": _verbmem(texts["forget"]),
        "knowmem/forget_qa": _qa(split_entities["forget"], relations, sizes["qa_per_text"], rng),
        "knowmem/retain_qa": _qa(split_entities["retain1"], relations, sizes["qa_per_text"], rng),
        "knowmem/forget_qa_icl": icl[:sizes["icl"]],
        "knowmem/retain_qa_icl": icl[sizes["icl"]:2 * sizes["icl"]],
        "privleak/forget": [{"text": t} for t in texts["forget"][:n_priv]],
        "privleak/retain": [{"text": t} for t in texts["retain1"][:n_priv]],
        "privleak/holdout": [{"text": t} for t in texts["holdout"][:n_priv]],
    }


def build_news(sizes: dict, seed: int, taken: set[str]) -> dict[str, list[dict]]:
    """Render muse-mini News: '<config>/<split>' -> records."""
    rng = random.Random(seed + 6)
    cast = unique_names(rng, sizes["cast"], pools.person_name, taken)
    roles = {name: rng.choice(ROLES) for name in cast}
    relations = pools.relations("news", tuple(cast))  # the leader is one of the cast
    names = unique_names(rng, sum(sizes["news"]), lambda r: f"{pools.invented_word(r, 2)} {r.choice(EVENT_KINDS)}", taken)
    events = _facts(names, relations, rng)
    split_events, start = {}, 0
    for split, count in zip(SPLITS, sizes["news"]):
        split_events[split], start = events[start:start + count], start + count
    texts = {split: [_article(e, relations, roles, rng) for e in split_events[split]] for split in SPLITS}
    return _render(split_events, texts, relations, sizes, rng)


def build_books(sizes: dict, seed: int, taken: set[str]) -> dict[str, list[dict]]:
    """Render muse-mini Books: one saga per split; '<config>/<split>' -> records."""
    rng = random.Random(seed + 7)
    split_characters, texts = {}, {}
    for split in SPLITS:
        cast = unique_names(rng, sizes["saga_characters"], lambda r: pools.invented_word(r, 3), taken)
        relations = pools.relations("saga", tuple(cast))  # the mentor is one of the saga's cast
        split_characters[split] = _facts(cast, relations, rng)
        chapters = [(c, k) for k in range(sizes["chapters"]) for c in split_characters[split]]
        texts[split] = [_chapter(c, relations, i + 1, rng) for i, (c, _) in enumerate(chapters)]
    # every saga shares the relation templates; only the mentor pool differs, which _qa never reads
    return _render(split_characters, texts, pools.relations("saga"), sizes, rng)
