"""Paper-scale inputs in the chapters' layout: `unlearning fetch` (chapter 13).

Reads a fetch plan (`notebooks/profiles/paper/fetch.yaml`): hub datasets with the splits to
take, hub checkpoints with the local names the chapters use, and the tokenizer. Writes
`<out>/data/<profile>/<benchmark>/<split>.json` (JSON lines, as the laboratory world) and
`<out>/models/<profile>/<name>/` (`save_pretrained`, safetensors), so `Lab.for_profile("paper")`
and every notebook read real data exactly as they read the world. Datasets go through their
benchmark's loader (`unlearning.benchmarks`: the hub layout and the schema check;
`UNLEARNING_HUB_MIRROR` for an offline mirror), models
through `models.load_model` (`trust_remote_code` off). Finished items are skipped on a rerun.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from unlearning.benchmarks import REGISTRY, load
from unlearning.data import write_jsonl

PLAN_KEYS = ("tokenizer", "models", "data", "profile")


def read_plan(path: str | Path) -> dict:
    """The fetch plan as a dict, checked for its keys and shapes (one-line errors)."""
    plan = yaml.safe_load(Path(path).read_text()) or {}
    unknown = sorted(set(plan) - set(PLAN_KEYS))
    if unknown:
        raise ValueError(f"fetch plan: unknown key {unknown[0]!r}; allowed: {', '.join(PLAN_KEYS)}")
    for benchmark, spec in (plan.get("data") or {}).items():
        if benchmark not in REGISTRY:
            raise ValueError(f"fetch plan: data.{benchmark}: unknown benchmark; allowed: {', '.join(REGISTRY)}")
        if not isinstance(spec, dict) or "source" not in spec or not spec.get("splits"):
            raise ValueError(f"fetch plan: data.{benchmark} needs 'source' and a non-empty 'splits' list")
    return plan


def fetch(plan: dict, out: str | Path, mirror: str | Path | None = None, log=print) -> list[Path]:
    """Download (or copy from `mirror`) everything in `plan` under `out`; returns what was written."""
    profile = plan.get("profile", "paper")
    data_root, models_root = Path(out) / "data" / profile, Path(out) / "models" / profile
    written = []
    for benchmark, spec in (plan.get("data") or {}).items():
        for split in spec["splits"]:
            target = data_root / benchmark / f"{split}.json"
            if target.is_file():
                continue
            write_jsonl(target, load(benchmark, spec["source"], split, mirror=mirror))
            written.append(target)
            log(f"data  {spec['source']} {split} -> {target}")
    for name, source in (plan.get("models") or {}).items():
        target = models_root / name
        if (target / "config.json").is_file():
            continue
        _copy_model(source, target)
        written.append(target)
        log(f"model {source} -> {target}")
    if plan.get("tokenizer") and not (models_root / "tokenizer" / "tokenizer.json").is_file():
        _copy_tokenizer(plan["tokenizer"], models_root / "tokenizer")
        written.append(models_root / "tokenizer")
        log(f"tokenizer {plan['tokenizer']} -> {models_root / 'tokenizer'}")
    return written


def _copy_model(source: str, target: Path) -> None:
    """The checkpoint, with its own tokenizer beside it when it has one (real models differ:
    Llama-2, Zephyr and Llama-3 do not share a vocabulary; `Lab.tokenizer_for` finds it)."""
    from unlearning.models import load_model, save_model

    save_model(load_model(source), target)
    try:
        _copy_tokenizer(source, target)
    except (OSError, ValueError):  # a checkpoint without tokenizer files: the profile's serves
        pass


def _copy_tokenizer(source: str, target: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False)
    if tokenizer.pad_token is None:  # Llama-2 has none; the chapters pad with it
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.save_pretrained(str(target))
