"""Loading benchmark splits in their real schemas, tokenising them, and batching.

One code path serves the laboratory world and the real datasets: a split is read from a
local folder of JSON-lines files laid out as the hub's (`<root>/<split>.json`) or, given a
hub name such as `locuslab/TOFU`, through `datasets.load_dataset` (needs network access).
Which fields a split must have and where it lives on the hub is each benchmark's business
(`unlearning.benchmarks`); this module reads, checks, encodes and batches.
Question-answer items are rendered with a prompt template whose tokens are masked out of
the labels (-100), so losses and metrics see only the answer, as in TOFU.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from unlearning.margin import IGNORE_INDEX
from unlearning.records import write_text_atomically

QA_PROMPT = "Question: {question}\nAnswer:"
class DataError(ValueError):
    """A split is missing, empty or lacks a field; the message names the file and field."""


def read_jsonl(path: Path) -> list[dict]:
    """Read a JSON-lines file (one object per line; a JSON array is accepted too)."""
    if not path.is_file():
        raise DataError(f"missing data file: {path}")
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise DataError(f"empty data file: {path}")
    try:
        records = json.loads(text) if text.startswith("[") else \
            [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as error:  # a truncated or hand-edited file
        line = error.lineno if text.startswith("[") else \
            next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() and not _parses(row))
        raise DataError(f"{path}: not valid JSON lines (line {line}: {error.msg})") from None
    if not all(isinstance(record, dict) for record in records):
        raise DataError(f"{path}: every record must be a JSON object")
    return records


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def write_jsonl(path: Path, records: Iterable[dict]) -> None:
    """Write records as sorted-key JSON lines, atomically (temporary name, then rename)."""
    write_text_atomically(path, "".join(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
                                        for record in records))


def validate_records(records: Sequence[dict], fields: Sequence[str], where: str) -> None:
    """Every record has every field; the error names the first offending record and field."""
    if not records:
        raise DataError(f"{where}: split is empty")
    for i, record in enumerate(records):
        for field in fields:
            if field not in record:
                raise DataError(f"{where}: record {i} lacks field {field!r} (has {sorted(record)})")


def load_split(source: str | Path, split: str, fields: Sequence[str] = (), mirror: str | Path | None = None,
               locate=None) -> list[dict]:
    """Load one split from a local folder (`<source>/<split>.json`) or a hub dataset name.

    Every record must have `fields` (a benchmark's schema: `Benchmark.load` passes it). A local
    folder wins when it exists; otherwise `source` is a hub repository and `locate(repository,
    split)` gives the (repository, config, split) to read (default: config = split, data in
    `train`). `mirror` (or the environment variable UNLEARNING_HUB_MIRROR) names a folder holding
    local copies of hub datasets in the hub's own layout, `<mirror>/<owner>/<name>/`, for
    machines without network access.
    """
    local = Path(source)
    if local.is_dir():
        path = local / f"{split}.json"
        records = read_jsonl(path)
        validate_records(records, fields, str(path))
        return records
    if local.suffix or str(source).startswith((".", "/")) or "/" not in str(source):
        raise DataError(f"data folder not found: {source}")
    repository, config, hub_split = locate(str(source), split) if locate else (str(source), split, "train")
    return _load_from_hub(repository, config, hub_split, fields, mirror or os.environ.get("UNLEARNING_HUB_MIRROR"))


def _load_from_hub(repository: str, config: str, hub_split: str, fields: Sequence[str],
                   mirror: str | Path | None = None) -> list[dict]:
    try:
        import datasets
    except ImportError as error:  # pragma: no cover - depends on the optional extra
        raise DataError(f"loading {repository!r} from the hub needs the `datasets` package (pip install -e .[gpu])") from error
    path = str(Path(mirror) / repository) if mirror else repository
    if mirror and not Path(path).is_dir():
        raise DataError(f"hub mirror lacks {repository}: no folder {path}")
    try:
        if mirror:  # a mirror is a plain folder whose files may change: read it through a fresh cache
            with tempfile.TemporaryDirectory() as cache:
                records = [dict(r) for r in datasets.load_dataset(path, config, split=hub_split, cache_dir=cache)]
        else:
            records = [dict(r) for r in datasets.load_dataset(path, config, split=hub_split)]
    except Exception as error:  # datasets raises many types; keep one line for the user
        raise DataError(f"{repository}: cannot load config {config!r} split {hub_split!r}: {error}") from error
    validate_records(records, fields, f"{repository}:{config}/{hub_split}")
    return records


@dataclass(frozen=True)
class Encoded:
    """One tokenised example: input ids and labels of the same length."""

    input_ids: list[int]
    labels: list[int]


def uses_chat_template(tokenizer) -> bool:
    """Does the tokenizer carry a chat template (a real instruction-tuned checkpoint)?"""
    return bool(getattr(tokenizer, "chat_template", None))


def qa_prompt(tokenizer, question: str, template: str = QA_PROMPT) -> str:
    """The prompt of a question: the checkpoint's own chat template (user turn, then the start of
    the assistant turn) when the tokenizer has one, else `template` ('Question: ...\nAnswer:',
    the laboratory's format)."""
    if uses_chat_template(tokenizer):
        return tokenizer.apply_chat_template([{"role": "user", "content": question}], tokenize=False,
                                             add_generation_prompt=True)
    return template.format(question=question)


def encode_qa(tokenizer, question: str, answer: str, max_length: int = 128, template: str = QA_PROMPT,
              eos: bool = True) -> Encoded:
    """Prompt + answer (+ EOS); labels are -100 on the prompt and the ids on the answer. With the
    laboratory format the answer follows 'Answer:' after a space; with a chat template it is the
    assistant's turn, ended by the checkpoint's EOS (e.g. SmolLM2's `<|im_end|>`)."""
    prompt_ids = tokenizer(qa_prompt(tokenizer, question, template), add_special_tokens=False)["input_ids"]
    answer_text = answer if uses_chat_template(tokenizer) else " " + answer
    answer_ids = tokenizer(answer_text, add_special_tokens=False)["input_ids"] + ([tokenizer.eos_token_id] if eos else [])
    ids = (prompt_ids + answer_ids)[:max_length]
    labels = ([IGNORE_INDEX] * len(prompt_ids) + answer_ids)[:max_length]
    if all(label == IGNORE_INDEX for label in labels):
        raise DataError(f"max_length={max_length} leaves no answer token for question {question!r}")
    return Encoded(ids, labels)


def encode_text(tokenizer, text: str, max_length: int = 256, bos: bool = True, eos: bool = True) -> Encoded:
    """Plain text (corpora): EOS as a leading document separator (so the first word is
    predicted too), then the text, then EOS; every text token is a label."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    ids = ([tokenizer.eos_token_id] if bos else []) + ids + ([tokenizer.eos_token_id] if eos else [])
    ids = ids[:max_length]
    labels = [IGNORE_INDEX] + ids[1:] if bos else list(ids)
    return Encoded(ids, labels)


def pack_corpus(tokenizer, texts: Sequence[str], block_length: int) -> list[Encoded]:
    """A corpus as SAGO's `PretrainingDataset` reads it (WMDP and RWKU, sago.md s. 9): every text
    followed by "\n\n", tokenised without special tokens, all concatenated and cut into
    `block_length`-token blocks (the remainder is dropped); each block is decoded (special tokens
    skipped) and tokenised again with the tokenizer's special tokens, truncated to the special
    prefix plus `block_length` tokens, and every token is a label except the prefix (at least
    position 0). The released configurations read each raw JSON line of the WMDP corpora as a
    document, braces and all; here the documents are the texts."""
    if block_length < 1:
        raise ValueError(f"block_length must be >= 1, got {block_length!r}")
    ids = [token for text in texts for token in tokenizer(text + "\n\n", add_special_tokens=False)["input_ids"]]
    prefix = len(tokenizer("", add_special_tokens=True)["input_ids"])  # BOS, for tokenizers that add one
    blocks = []
    for start in range(0, len(ids) - block_length + 1, block_length):
        text = tokenizer.decode(ids[start:start + block_length], skip_special_tokens=True)
        full = tokenizer(text, add_special_tokens=True)["input_ids"][:prefix + block_length]
        masked = max(prefix, 1)  # never a loss on position 0
        blocks.append(Encoded(full, [IGNORE_INDEX] * masked + full[masked:]))
    if not blocks:
        raise DataError(f"the corpus has {len(ids)} tokens: fewer than one block of {block_length}")
    return blocks


def collate(examples: Sequence[Encoded], pad_token_id: int) -> dict[str, torch.Tensor]:
    """Right-pad a batch: input_ids, attention_mask and labels `[B, T]` (T = longest)."""
    width = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), width), pad_token_id, dtype=torch.long)
    labels = torch.full((len(examples), width), IGNORE_INDEX, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    for row, example in enumerate(examples):
        n = len(example.input_ids)
        ids[row, :n] = torch.tensor(example.input_ids)
        labels[row, :n] = torch.tensor(example.labels)
        attention[row, :n] = 1
    return {"input_ids": ids, "attention_mask": attention, "labels": labels}


def encode_qa_split(tokenizer, records: Sequence[dict], max_length: int = 128, question_key: str = "question") -> list[Encoded]:
    """Tokenise every item of a QA split."""
    return [encode_qa(tokenizer, r[question_key], r["answer"], max_length) for r in records]


def batches(examples: Sequence[Encoded], batch_size: int, pad_token_id: int, generator: torch.Generator | None = None):
    """Yield collated batches in order, or shuffled when a generator is given (one epoch)."""
    order = torch.randperm(len(examples), generator=generator).tolist() if generator is not None else range(len(examples))
    order = list(order)
    for start in range(0, len(order), batch_size):
        yield collate([examples[i] for i in order[start:start + batch_size]], pad_token_id)


def on_device(batch: dict, model) -> dict:
    """A collated batch moved to the device of `model`'s parameters."""
    device = next(model.parameters()).device
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def cycle_batches(examples: Sequence[Encoded], batch_size: int, pad_token_id: int, generator: torch.Generator):
    """Endless shuffled batches, reshuffled every epoch (both unlearning loaders cycle)."""
    while True:
        yield from batches(examples, batch_size, pad_token_id, generator)


IDK_ANSWERS = (
    "I don't know.", "I'm not sure about that.", "I have no information on that.",
    "That is something I cannot answer.", "I'm afraid I don't know the answer.",
    "I could not tell you.", "I have never heard of that.", "I am not aware of that.",
    "I cannot say.", "I don't have that information.", "That is beyond what I know.",
    "I really have no idea.", "Sorry, I can't help with that question.", "I do not know the answer to that.",
    "Nothing I know answers that.", "I'm unable to answer that.", "I have no knowledge of that.",
    "That escapes me.", "I don't recall anything about that.", "I can't answer that question.",
)


def idk_records(records: Sequence[dict], seed: int = 0) -> list[dict]:
    """The same questions with a refusal drawn from IDK_ANSWERS (TOFU's "idk" forget data),
    reproducibly for a seed."""
    generator = torch.Generator().manual_seed(seed)
    picks = torch.randint(len(IDK_ANSWERS), (len(records),), generator=generator).tolist()
    return [{**record, "answer": IDK_ANSWERS[i]} for record, i in zip(records, picks)]
