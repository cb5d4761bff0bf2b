"""Models: the tiny Qwen2 family, its tokenizer, the learning stage, and loading checkpoints.

The MASC scale study uses Qwen2.5 0.5B-7B. On a CPU we keep the architecture
(transformers' `Qwen2ForCausalLM`, tied embeddings like Qwen2.5-0.5B) and shrink it. Models
are saved with `save_pretrained` (safetensors) exactly as a real checkpoint, so the same
`load_model` serves a folder written here and a hub name such as `Qwen/Qwen2.5-0.5B-Instruct`.
The tokenizer lives in its own folder and is loaded as `PreTrainedTokenizerFast`.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors import safe_open
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

from unlearning.data import Encoded, bucketed_batches
from unlearning.failpoints import reached
from unlearning.progress import progress
from unlearning.runtime import own_random_state
from unlearning.store import weight_files, weights_hash

EOS_TOKEN, PAD_TOKEN = "<|endoftext|>", "<|pad|>"


@dataclass(frozen=True)
class ModelSize:
    """Shape of one member of the tiny family (head_dim = hidden // heads)."""

    hidden: int
    layers: int
    intermediate: int
    heads: int
    kv_heads: int


# about 0.16M, 0.53M, 1.6M and 2.8M parameters with a 2,048-token vocabulary (18x span); the
# largest is sized so that `make models` (PROFILE=mini) trains all 18 models in about a quarter
# of an hour on 2 cores (with a 5.2M-parameter largest size it took over 20 minutes)
SIZES: dict[str, ModelSize] = {
    "xs": ModelSize(hidden=48, layers=2, intermediate=144, heads=4, kv_heads=2),
    "s": ModelSize(hidden=96, layers=3, intermediate=288, heads=4, kv_heads=2),
    "m": ModelSize(hidden=160, layers=4, intermediate=480, heads=4, kv_heads=2),
    "l": ModelSize(hidden=224, layers=4, intermediate=640, heads=8, kv_heads=4),
}


def train_tokenizer(texts: Sequence[str], vocab_size: int, out_dir: Path) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer on `texts` and save it in its own folder."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[EOS_TOKEN, PAD_TOKEN], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(list(texts), trainer=trainer)
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=EOS_TOKEN, pad_token=PAD_TOKEN)
    save_folder_atomically(out_dir, wrapped.save_pretrained)
    return wrapped


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


def build_model(size: str, tokenizer: PreTrainedTokenizerFast, max_positions: int = 256, seed: int = 0) -> Qwen2ForCausalLM:
    """A freshly initialised tiny Qwen2 of the named size, in float32."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}; got {size!r}")
    shape = SIZES[size]
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=shape.hidden, num_hidden_layers=shape.layers,
        intermediate_size=shape.intermediate, num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads, max_position_embeddings=max_positions,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id, rope_theta=10000.0, attention_dropout=0.0,
    )
    with own_random_state(seed):
        return Qwen2ForCausalLM(config).float()


def count_parameters(model: torch.nn.Module) -> int:
    """Number of distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in model.parameters())


@dataclass(frozen=True)
class TrainConfig:
    """Learning-stage optimisation: AdamW with linear warm-up and cosine decay."""

    epochs: int = 10
    lr: float = 3e-3
    batch_size: int = 16
    weight_decay: float = 0.01
    warmup_fraction: float = 0.05
    seed: int = 0
    length_pool: int = 8   # batches sorted by length together (1: plain shuffle); see data.bucketed_batches

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError(f"epochs and batch_size must be >= 1; got {self.epochs}, {self.batch_size}")
        if self.length_pool < 1:
            raise ValueError(f"length_pool must be >= 1; got {self.length_pool}")
        if not self.lr > 0 or not 0 <= self.warmup_fraction < 1:
            raise ValueError(f"lr must be > 0 and warmup_fraction in [0, 1); got {self.lr}, {self.warmup_fraction}")


def train_causal_lm(model: Qwen2ForCausalLM, examples: Sequence[Encoded], config: TrainConfig, pad_token_id: int) -> list[float]:
    """Fine-tune (or pretrain) on tokenised examples; returns the mean loss of every epoch.
    Batches come from a generator seeded with `config.seed`; nothing else draws at random."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    steps_per_epoch = math.ceil(len(examples) / config.batch_size)
    total = steps_per_epoch * config.epochs
    warmup = max(1, int(config.warmup_fraction * total))

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    generator = torch.Generator().manual_seed(config.seed)
    model.train()
    epoch_losses = []
    for _ in progress(range(config.epochs), desc="train", unit="epoch"):
        losses = []
        for batch in bucketed_batches(examples, config.batch_size, pad_token_id, generator, config.length_pool):
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())
        epoch_losses.append(sum(losses) / len(losses))
    model.eval()
    return epoch_losses


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


def size_info(model: torch.nn.Module, size: str) -> dict:
    """Shape and parameter count of a family member, for records."""
    return {"size": size, "parameters": count_parameters(model), **asdict(SIZES[size])}


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
