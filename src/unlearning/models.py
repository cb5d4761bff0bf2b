"""Models: loading, checking and saving checkpoints, their tokenizers, and LoRA adapters.

Models are saved with `save_pretrained` (safetensors) exactly as a real checkpoint, so the same
`load_model` serves a folder written here (a run's model, the laboratory's family in
`laboratory.family`) and a hub name such as `Qwen/Qwen2.5-0.5B-Instruct`; remote code never runs.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch
from safetensors import safe_open
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast, Qwen2ForCausalLM
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

from unlearning.failpoints import reached
from unlearning.store import weight_files, weights_hash


def looks_local(name_or_path: str | Path) -> bool:
    """A path (starts with . or /, has a suffix, or exists) rather than a hub name `org/name`."""
    text = str(name_or_path)
    return Path(text).exists() or text.startswith((".", "/")) or text.count("/") != 1 or bool(Path(text).suffix)


def require_local_or_hub(**named: str | Path) -> None:
    """Each value must be an existing folder or look like a hub name; the error names it."""
    for name, value in named.items():
        if looks_local(value) and not Path(value).is_dir():
            raise FileNotFoundError(f"parameter {name}: folder not found: {value} (run `make models` first?)")


def load_tokenizer(name_or_path: str | Path):
    """A tokenizer folder written by `train_tokenizer`, or a hub tokenizer by name."""
    require_local_or_hub(tokenizer=name_or_path)
    if Path(name_or_path).is_dir():
        return PreTrainedTokenizerFast.from_pretrained(str(name_or_path))
    return AutoTokenizer.from_pretrained(str(name_or_path), trust_remote_code=False)


def count_parameters(model: torch.nn.Module) -> int:
    """Number of distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in model.parameters())


def save_folder_atomically(out_dir: Path, save) -> None:
    """Write a folder through `save(temporary_path)` into a temporary sibling, then rename it
    into place: a reader sees the old folder, no folder, or the whole new one, never a part.

    The temporary name is one per process, so concurrent savers never share it; when another
    process renames its folder into place between our removal and our rename, we try again
    (the last writer wins, and both wrote a complete folder)."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f"{out_dir.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save(str(tmp))
    reached("save:written")  # the folder is complete under its temporary name, not yet in place
    for attempt in range(10):
        shutil.rmtree(out_dir, ignore_errors=True)
        try:
            tmp.rename(out_dir)
            return
        except OSError:  # another process put its folder in place first (ENOTEMPTY / EEXIST)
            if attempt == 9:
                raise


def save_model(model: torch.nn.Module, out_dir: Path, info: dict | None = None, also=None,
               keep: tuple[str, ...] = ()) -> None:
    """Save as safetensors with `save_pretrained` (and the weights' hash, `store.weights_hash`);
    `info` goes to `learning.json` beside it, and `also(folder)` writes any further files (a
    tokenizer, a source record) into the folder *before* it is moved into place, so a model
    folder that exists is complete. `keep` names sub-folders of a folder being replaced to carry
    into the new one (the cached evaluations, `metrics/`: each is keyed by the weights it measured,
    so one of other weights is never read, and one of the same weights is not computed again)."""

    def save(path: str) -> None:
        for name in keep:
            if (Path(out_dir) / name).is_dir():
                shutil.copytree(Path(out_dir) / name, Path(path) / name)
        model.save_pretrained(path, safe_serialization=True)
        weights_hash(path)  # computed once here, read by every later cache lookup
        if also is not None:
            also(Path(path))
        if info is not None:
            Path(path, "learning.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")

    save_folder_atomically(Path(out_dir), save)


def load_model(name_or_path: str | Path, dtype: torch.dtype = torch.float32,
               device: str | torch.device = "cpu") -> Qwen2ForCausalLM:
    """Load a causal LM (safetensors only, never remote code) from a local folder or a hub name,
    in `dtype`, on `device`, in eval mode."""
    require_local_or_hub(model=name_or_path)
    model = AutoModelForCausalLM.from_pretrained(str(name_or_path), dtype=dtype, trust_remote_code=False, use_safetensors=True)
    return model.to(device).eval()


def check_model(model_dir: str | Path, tokenizer_dir: str | Path | None = None) -> None:
    """A local model folder that `load_model` can load and that matches its tokenizer, checked
    before any work and without writing anything (one-line `ValueError`s): a readable config of
    a causal LM transformers knows, complete safetensors files whose tensors are the ones that
    config builds, and a tokenizer whose vocabulary fits the model's embedding."""
    model_dir = Path(model_dir)
    model_type = _causal_lm_type(model_dir / "config.json")
    config = AutoConfig.from_pretrained(str(model_dir), trust_remote_code=False)
    _check_weights(model_dir, config, model_type)
    if tokenizer_dir is not None:
        vocabulary = len(load_tokenizer(tokenizer_dir))
        if vocabulary > config.vocab_size:
            raise ValueError(f"tokenizer: {tokenizer_dir} has {vocabulary} tokens, larger than the model's embedding "
                             f"({config.vocab_size} rows in {model_dir})")


def _causal_lm_type(config_path: Path) -> str:
    """The model_type of a config.json, checked: a JSON object naming a causal LM transformers knows."""
    if not config_path.is_file():
        raise ValueError(f"model: no config.json in {config_path.parent}")
    try:
        model_type = json.loads(config_path.read_text(encoding="utf-8")).get("model_type")
    except (json.JSONDecodeError, AttributeError):
        raise ValueError(f"model: {config_path} is not a JSON object") from None
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise ValueError(f"model: {config_path} has model_type {model_type!r}, not a causal LM transformers knows")
    return model_type


def _check_weights(model_dir: Path, config, model_type: str) -> None:
    """Complete, readable safetensors files in `model_dir` holding every tensor `config` builds."""
    files = weight_files(model_dir)
    if not files:
        raise ValueError(f"model: no safetensors weights in {model_dir} (pickled checkpoints are never loaded)")
    stored = set()
    for path in files:
        try:
            with safe_open(str(path), "pt") as handle:
                stored |= set(handle.keys())
        except Exception as error:  # safetensors raises its own error type for a damaged file
            raise ValueError(f"model: {path} cannot be read as safetensors ({error})") from None
    with torch.device("meta"):
        expected = set(AutoModelForCausalLM.from_config(config).state_dict())
    missing = sorted(expected - stored - {"lm_head.weight"})  # a tied head is stored once
    if missing:
        raise ValueError(f"model: the weights in {model_dir} do not fit its config (model_type {model_type!r}): "
                         f"{len(missing)} tensors missing, e.g. {missing[0]!r}")


LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def add_lora(model, r: int = 8, alpha: int = 16, dropout: float = 0.0, target_modules=LORA_TARGETS):
    """Wrap a causal LM with LoRA adapters (peft); only the adapters are trainable.

    For 7B-class models on one GPU: the frozen base is shared, so a reference model is the
    same network with adapters disabled (`with model.disable_adapter(): ...`), not a copy.
    """
    if r < 1:
        raise ValueError(f"LoRA rank r must be >= 1, got {r}")
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as error:  # pragma: no cover - optional extra
        raise ImportError("LoRA needs peft: pip install -e .[gpu]") from error
    config = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(target_modules),
                        task_type="CAUSAL_LM", bias="none")
    return get_peft_model(model, config)


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
                   "chat_template.jinja")


def has_tokenizer(model_dir: str | Path) -> bool:
    """Does a model folder carry its own tokenizer (real checkpoints and models derived from them)?"""
    return (Path(model_dir) / "tokenizer_config.json").is_file()


def copy_tokenizer_files(source: str | Path, target: Path) -> None:
    """Give a derived model (a run, a quantized copy, a fine-tune) its parent's own tokenizer files, if any."""
    if has_tokenizer(source):
        for name in TOKENIZER_FILES:
            if (Path(source) / name).is_file():
                shutil.copy2(Path(source) / name, Path(target) / name)
