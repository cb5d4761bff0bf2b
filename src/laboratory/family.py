"""The laboratory's model family: tiny Qwen2s, their tokenizer, and how the learning stage trains them.

The MASC scale study uses Qwen2.5 0.5B-7B. On a CPU we keep the architecture (transformers'
`Qwen2ForCausalLM`, tied embeddings like Qwen2.5-0.5B) and shrink it to the sizes of `SIZES`.
Members are saved with the library's `save_model` (safetensors) exactly as a real checkpoint, so
`unlearning.models.load_model` serves them and a hub name alike; the tokenizer lives in its own
folder. `train_causal_lm` is the learning stage's optimiser (AdamW, warm-up, cosine decay) over
length-bucketed batches.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

from unlearning.data import Encoded, collate
from unlearning.losses import nll_loss
from unlearning.margin import answer_logits
from unlearning.models import count_parameters, save_folder_atomically
from unlearning.progress import progress
from unlearning.runtime import own_random_state

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


def size_info(model: torch.nn.Module, size: str) -> dict:
    """Shape and parameter count of a family member, for records."""
    return {"size": size, "parameters": count_parameters(model), **asdict(SIZES[size])}


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


def bucketed_batches(examples: Sequence[Encoded], batch_size: int, pad_token_id: int, generator: torch.Generator,
                     pool: int = 8):
    """One shuffled epoch in batches of similar length (less padding, same examples).

    A random permutation is cut into pools of `pool` batches; each pool is sorted by length and
    cut into batches, and the batches of the epoch are shuffled again (`pool=1`: the batches of
    a plain shuffle, in shuffled order).
    """
    if pool < 1:
        raise ValueError(f"pool must be >= 1, got {pool}")
    order = torch.randperm(len(examples), generator=generator).tolist()
    chunks = []
    for start in range(0, len(order), batch_size * pool):
        part = sorted(order[start:start + batch_size * pool], key=lambda i: len(examples[i].input_ids))
        chunks += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
    for index in torch.randperm(len(chunks), generator=generator).tolist():
        yield collate([examples[i] for i in chunks[index]], pad_token_id)


def train_causal_lm(model: Qwen2ForCausalLM, examples: Sequence[Encoded], config: TrainConfig, pad_token_id: int) -> list[float]:
    """Fine-tune (or pretrain) on tokenised examples; returns the mean loss of every epoch.
    Batches come from a generator seeded with `config.seed`; nothing else draws at random."""
    # the fused kernel (as the engine's): the same update, 0.3 s a step of SmolLM2-135M against 0.9 s for torch's loop
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay, fused=True)
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
            loss = nll_loss(*answer_logits(model, batch))  # the output layer at answer positions only
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())
        epoch_losses.append(sum(losses) / len(losses))
    model.eval()
    return epoch_losses
