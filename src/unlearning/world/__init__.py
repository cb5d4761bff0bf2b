"""The laboratory world: a fictional world generated from a seed and rendered into the
exact schemas of the real unlearning benchmarks, so one loader serves mini and real data.

`generate(profile, out_root)` writes `<out_root>/<profile>/<benchmark>/<split>.json` (JSON
lines, sorted keys), byte-identical for the same profile. Sizes per profile live in
`WORLD_SIZES`; the profile name only picks a size, never behaviour.
"""

from __future__ import annotations

from pathlib import Path

from unlearning.data import write_jsonl
from unlearning.world import tofu, wmdp

WORLD_SIZES: dict[str, dict] = {
    "smoke": {"seed": 0, "tofu_authors": 20, "wmdp": wmdp.SIZES["smoke"]},
    "mini": {"seed": 0, "tofu_authors": 100, "wmdp": wmdp.SIZES["mini"]},
}


def generate(profile: str, out_root: str | Path) -> dict[str, int]:
    """Render every benchmark of `profile` under `out_root/profile`; returns split sizes."""
    if profile not in WORLD_SIZES:
        raise ValueError(f"profile must be one of {', '.join(WORLD_SIZES)}; got {profile!r}")
    sizes = WORLD_SIZES[profile]
    root = Path(out_root) / profile
    counts = {}
    for split, records in tofu.build(sizes["tofu_authors"], sizes["seed"]).items():
        write_jsonl(root / "tofu" / f"{split}.json", records)
        counts[f"tofu/{split}"] = len(records)
    for split, records in wmdp.build(sizes["wmdp"], sizes["seed"]).items():
        write_jsonl(root / "wmdp" / f"{split}.json", records)
        counts[f"wmdp/{split}"] = len(records)
    return counts


def summary(root: str | Path) -> "pandas.DataFrame":  # noqa: F821
    """One row per split of a rendered world: benchmark, split, records, fields, an example.

    The table the book's world chapter shows next to the real schemas.
    """
    import pandas as pd

    from unlearning.data import read_jsonl

    rows = []
    for path in sorted(Path(root).glob("*/*.json")):
        records = read_jsonl(path)
        example = records[0].get("question") or records[0].get("text") or records[0].get("name", "")
        rows.append({"benchmark": path.parent.name, "split": path.stem, "records": len(records),
                     "fields": ", ".join(sorted(records[0])), "example": str(example)[:80]})
    return pd.DataFrame(rows)


def corpus_texts(root: str | Path) -> list[str]:
    """Every string of a rendered world, for training the tokenizer."""
    from unlearning.data import read_jsonl

    texts: list[str] = []
    for path in sorted(Path(root).rglob("*.json")):
        for record in read_jsonl(path):
            texts.extend(_strings(record))
    return texts


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)]
