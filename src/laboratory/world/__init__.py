"""The laboratory world: a fictional world generated from a seed and rendered into the
exact schemas of the real unlearning benchmarks, so one loader serves mini and real data.

`generate(profile, out_root)` writes `<out_root>/<profile>/<benchmark>/<split>.json` (JSON
lines, sorted keys), byte-identical for the same profile. Sizes per profile live in
`WORLD_SIZES`; the profile name only picks a size, never behaviour.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

# the submodules by their full names (not `from laboratory.world import ...`, which names this very module)
import laboratory.world.encyclopedia as encyclopedia
import laboratory.world.muse as muse
import laboratory.world.pretrain as pretrain
import laboratory.world.real_facts as real_facts
import laboratory.world.rwku as rwku
import laboratory.world.tofu as tofu
import laboratory.world.wmdp as wmdp
from laboratory.world.reference import REAL_SPLIT_SIZES
from unlearning.data import load_split, read_jsonl, write_jsonl

WORLD_SIZES: dict[str, dict] = {
    profile: {"seed": 0, "tofu_authors": {"smoke": 20, "mini": 100}[profile],
              # the real model's TOFU: fewer authors (fine-tuning a 135M model costs minutes per
              # hundred answers) and real facts it knows for model utility
              "tofu_real_authors": {"smoke": 5, "mini": 15}[profile], "real_facts": {"smoke": 8, "mini": 20}[profile],
              "wmdp": wmdp.SIZES[profile],
              "encyclopedia": encyclopedia.SIZES[profile], "rwku": rwku.SIZES[profile], "muse": muse.SIZES[profile]}
    for profile in ("smoke", "mini")
}


# benchmarks whose data a real model builds (`laboratory rwku-real`), committed beside the world's
# files but never written by `generate`
MODEL_BUILT = ("rwku-real",)


def build(profile: str) -> dict[str, dict[str, list[dict]]]:
    """Every benchmark of `profile` in memory: benchmark -> split (file stem) -> records.

    Names are drawn from one shared set, so no entity appears in two roles.
    """
    if profile not in WORLD_SIZES:
        raise ValueError(f"profile must be one of {', '.join(WORLD_SIZES)}; got {profile!r}")
    sizes, seed, taken = WORLD_SIZES[profile], WORLD_SIZES[profile]["seed"], set()
    world = encyclopedia.build(sizes["encyclopedia"], seed, taken)
    people_passages = encyclopedia.passages(world["people"], seed)
    hazard_entities = wmdp.draw(sizes["wmdp"], seed, taken)
    wmdp_files = wmdp.build(sizes["wmdp"], seed, hazard_entities, world["countries"])
    corpus = pretrain.corpus(wmdp_files, people_passages)
    return {
        "tofu": tofu.build(sizes["tofu_authors"], seed, taken, world),
        "muse-news": muse.build_news(sizes["muse"], seed, taken),
        "muse-books": muse.build_books(sizes["muse"], seed, taken),
        "wmdp": wmdp_files,
        "rwku": rwku.build(world["people"], people_passages, sizes["rwku"]["targets"], seed),
        "pretrain": {"corpus": corpus, "replay": pretrain.replay(corpus),
                     "probes": pretrain.probes(world, hazard_entities, seed)},
        # last, so its names are drawn after every other benchmark's and change none of them
        "tofu-real": tofu_real(sizes["tofu_real_authors"], sizes["real_facts"], seed, taken),
    }


def tofu_real(n_authors: int, n_facts: int | None, seed: int, taken: set[str]) -> dict[str, list[dict]]:
    """TOFU for the real model: fictitious authors in TOFU's schema (their own draw, no name
    shared with any other role) and, for model utility, real authors and world facts that the
    real model answers before fine-tuning (`real_facts.known`)."""
    splits = tofu.build(n_authors, seed + 1, taken)
    splits["real_authors_perturbed"] = real_facts.known("real_authors", n_facts)
    splits["world_facts_perturbed"] = real_facts.known("world_facts", n_facts)
    return splits


def generate(profile: str, out_root: str | Path) -> dict[str, int]:
    """Render every benchmark of `profile` under `out_root/profile`; returns split sizes."""
    root = Path(out_root) / profile
    files = {(benchmark, split): records for benchmark, splits in build(profile).items()
             for split, records in splits.items()}
    # tofu/full.json last: it is the file `make` checks, so an interrupted run is redone
    for benchmark, split in sorted(files, key=lambda name: name == ("tofu", "full")):
        write_jsonl(root / benchmark / f"{split}.json", files[benchmark, split])
    return {f"{benchmark}/{split}": len(records) for (benchmark, split), records in files.items()}


def summary(root: str | Path) -> "pandas.DataFrame":  # noqa: F821
    """One row per split of a rendered world: benchmark, split, records, fields, an example.

    The table the book's world chapter shows next to the real schemas.
    """
    rows = []
    for path in sorted(Path(root).rglob("*.json")):
        records = read_jsonl(path)
        first = records[0]
        example = first.get("question") or first.get("query") or first.get("target") or first.get("prompt") or first.get("text") \
            or first.get("choices", [""])[0] or first.get("name", "")
        benchmark = path.relative_to(root).parts[0]
        split = str(path.relative_to(Path(root) / benchmark).with_suffix(""))
        rows.append({"benchmark": benchmark, "split": split, "records": len(records),
                     "real records": REAL_SPLIT_SIZES.get((benchmark, split)),
                     "fields": ", ".join(sorted(records[0])), "example": str(example)[:80]})
    return pd.DataFrame(rows).astype({"real records": "Int64"})


# one item of each kind the world chapter shows: (label, benchmark, split, which item)
SHOWCASE = (("tofu forget10_perturbed", "tofu", "forget10_perturbed", 0), ("muse-news verbmem/forget", "muse-news",
            "verbmem/forget", 0), ("muse-books knowmem/forget_qa", "muse-books", "knowmem/forget_qa", 0),
            ("wmdp wmdp-bio", "wmdp", "wmdp-bio", 0), ("rwku forget_level1", "rwku", "forget_level1", 0),
            ("rwku forget_level3", "rwku", "forget_level3", 0), ("pretrain probes (held out)", "pretrain", "probes", "held out"))


def showcase(root: str | Path) -> "pandas.DataFrame":  # noqa: F821
    """One item of each kind of a rendered world (`SHOWCASE`), a row per field (values cut at 160
    characters); the pretraining probe is the first one in a held-out surface form."""
    rows = []
    for label, benchmark, split, which in SHOWCASE:
        records = load_split(Path(root) / benchmark, split)
        item = next(r for r in records if not r["trained"]) if which == "held out" else records[which]
        rows += [{"split": label, "field": field, "value": str(value)[:160]} for field, value in item.items()]
    return pd.DataFrame(rows).set_index(["split", "field"])


def holdings(root: str | Path) -> dict[str, int]:
    """What a rendered world holds, counted: authors and question-answer pairs (TOFU), forget
    articles (MUSE News) and chapters (MUSE Books), hazardous questions (WMDP), RWKU targets and
    pretraining documents."""
    def count(benchmark: str, split: str) -> int:
        return len(load_split(Path(root) / benchmark, split, ()) if split == "authors" else
                   load_split(Path(root) / benchmark, split))

    return {"authors": count("tofu", "authors"), "qa_pairs": count("tofu", "full"),
            "articles": count("muse-news", "raw/forget"), "chapters": count("muse-books", "raw/forget"),
            "hazardous": count("wmdp", "wmdp-bio") + count("wmdp", "wmdp-cyber"),
            "rwku_targets": count("rwku", "forget_target"), "documents": count("pretrain", "corpus")}
