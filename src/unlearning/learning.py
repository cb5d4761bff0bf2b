"""The learning stage: the models that unlearning starts from and is judged against.

Mirrors TOFU (arXiv 2401.06121): a *target* fine-tuned on all authors (`full`) and a
retain-only *oracle* fine-tuned without the forget authors (`retain90`), the honest
reference for forget quality. Each model is written atomically and keyed by a hash of its
data, size, training config and tokenizer, so a rerun with nothing changed trains nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from unlearning.data import encode_qa_split, load_split
from unlearning.models import (
    TrainConfig,
    build_model,
    load_tokenizer,
    save_model,
    size_info,
    train_causal_lm,
    train_tokenizer,
)
from unlearning.world import corpus_texts

ROLES = {"target": "full", "oracle": "retain90"}


def file_hash(*paths: Path) -> str:
    """SHA-256 over the bytes of files, in the given order."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def ensure_tokenizer(data_root: Path, out_dir: Path, vocab_size: int = 2048):
    """Train the world tokenizer once (its own folder); reuse it while the data is unchanged."""
    key = hashlib.sha256(f"{vocab_size}:{file_hash(*sorted(Path(data_root).rglob('*.json')))}".encode()).hexdigest()
    stamp = Path(out_dir) / "key.txt"
    if stamp.is_file() and stamp.read_text().strip() == key:
        return load_tokenizer(out_dir)
    tokenizer = train_tokenizer(corpus_texts(data_root), vocab_size, Path(out_dir))
    stamp.write_text(key + "\n")
    return tokenizer


def model_key(split_path: Path, size: str, config: TrainConfig, tokenizer_dir: Path) -> str:
    """Hash of everything that determines a learned model."""
    parts = {"data": file_hash(split_path), "size": size, "config": asdict(config),
             "tokenizer": file_hash(Path(tokenizer_dir) / "tokenizer.json")}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def learn_tofu(data_dir: Path, tokenizer_dir: Path, out_dir: Path, role: str, size: str, config: TrainConfig) -> Path:
    """Fine-tune the `role` model ("target" or "oracle") of one size; returns its folder.

    Skipped when `out_dir/learning.json` already records the same key.
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    split_path = Path(data_dir) / f"{ROLES[role]}.json"
    key = model_key(split_path, size, config, tokenizer_dir)
    info_path = Path(out_dir) / "learning.json"
    if info_path.is_file() and json.loads(info_path.read_text()).get("key") == key:
        return Path(out_dir)
    tokenizer = load_tokenizer(tokenizer_dir)
    examples = encode_qa_split(tokenizer, load_split(data_dir, ROLES[role], ("question", "answer")))
    model = build_model(size, tokenizer, seed=config.seed)
    losses = train_causal_lm(model, examples, config, tokenizer.pad_token_id)
    info = {"key": key, "role": role, "split": ROLES[role], "examples": len(examples), "train": asdict(config),
            "epoch_losses": losses, **size_info(model, size)}
    save_model(model, Path(out_dir), info)
    return Path(out_dir)
