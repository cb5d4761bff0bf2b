"""What a benchmark is: its splits and their schemas, where they live on the hub, how they feed
unlearning, its metric suite, its quality gates and its oracle rule.

One `Benchmark` per module of this package, registered in `unlearning.benchmarks.REGISTRY`.
A benchmark is data plus functions; nothing here knows which profile runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from unlearning.data import load_split

Suite = Callable[..., dict]  # (model, tokenizer, data_dir, config, oracle_metrics | None) -> metrics
Gates = Callable[..., dict]  # (model, tokenizer, data_root, name) -> gate values; name: the benchmark's folder
Statistic = Callable[[dict], object]  # a metric recomputed from the suite's items: set -> field -> [R, n] -> [R]


def schema_fields(schemas, split: str) -> tuple[str, ...]:
    """The fields every record of `split` must have under `schemas` (first full match of a
    split-name pattern; empty for an unknown name)."""
    for pattern, fields in schemas:
        if re.fullmatch(pattern, split):
            return fields
    return ()


def read(data_dir: str | Path, split: str, schemas) -> list[dict]:
    """A local split checked against `schemas`: what metric suites and gates read (they name
    their module's schemas, not the registry entry, so their code keys stay their own)."""
    return load_split(data_dir, split, schema_fields(schemas, split))


def model_name(benchmark: str, role: str, size: str) -> str:
    """Where the learning stage keeps a model trained on a benchmark, by its role and size:
    `tofu/target-s`, `tofu/retain90-s`, `muse-news/retain-s` (`Benchmark.target`, the oracle rules)."""
    return f"{benchmark}/{role}-{size}"


def base_name(size: str) -> str:
    """The model pretrained on the laboratory's corpus at `size`: the parent of every TOFU and MUSE
    model, and the target WMDP and RWKU unlearn from."""
    return f"base-{size}"


def same_split_on_the_hub(repository: str, split: str) -> tuple[str, str, str]:
    """The default hub layout: one config per split, data in `train`."""
    return repository, split, "train"


@dataclass(frozen=True)
class Benchmark:
    """A registry entry.

    `schemas` maps split-name patterns (regular expressions, first full match wins) to the
    fields every record must have; `hub` is the default hub repository and `locate(repository,
    split)` gives its (repository, config, split) for one of our split names. `kind` ('qa' or
    'text') and the default `forget` / `retain` splits say how the benchmark feeds unlearning
    (None: a data-only benchmark such as the pretraining corpus). `suite` computes its metrics,
    `gates` the learning stage's quality gates of a model trained on it, and `oracle(forget_split,
    size)` names the retain-only model that forget quality compares against (None: no oracle).
    `forget_splits` are the forget splits a run may choose where there are several, each with its
    own holdout and oracle (TOFU's forget01/05/10); an evaluation is keyed by the chosen one.
    `statistics` recomputes each aggregate of the suite from the per-item scores it records
    (`metrics["items"]`), for the paired intervals of `experiments.intervals`.
    """

    name: str
    schemas: tuple[tuple[str, tuple[str, ...]], ...]
    hub: str | None = None
    locate: Callable[[str, str], tuple[str, str, str]] = same_split_on_the_hub
    kind: str | None = None
    forget: str | None = None
    retain: str | None = None
    suite: Suite | None = None
    gates: Gates | None = None
    oracle: Callable[[str, str], str | None] | None = None
    forget_splits: tuple[str, ...] = ()
    statistics: Mapping[str, Statistic] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in (None, "qa", "text"):
            raise ValueError(f"benchmark {self.name}: kind must be 'qa', 'text' or None; got {self.kind!r}")

    def target(self, size: str) -> str:
        """The learned model that memorised this benchmark at `size` (the one unlearning starts from)."""
        return model_name(self.name, "target", size)

    def fields(self, split: str) -> tuple[str, ...]:
        """The fields every record of `split` must have (empty for an unknown split name)."""
        for part in split.split("+"):
            fields = schema_fields(self.schemas, part)
            if fields:
                return fields
        return ()

    def load(self, source: str | Path, split: str, mirror: str | Path | None = None,
             fields: tuple[str, ...] | None = None) -> list[dict]:
        """Records of one split (several joined with '+'), schema-checked, from a local folder
        or a hub repository (`source`), in order."""
        return [record for part in split.split("+")
                for record in load_split(source, part, self.fields(part) if fields is None else fields, mirror,
                                         lambda repository, name: self.locate(repository, name))]

    def split_files(self, data_dir: str | Path, split: str) -> list[Path]:
        """The local files of a split (several joined with '+')."""
        return [Path(data_dir) / f"{part}.json" for part in split.split("+")]

    def require_unlearning(self) -> None:
        if self.kind is None:
            raise ValueError(f"benchmark {self.name} holds no forget and retain sets; it cannot be unlearned")
