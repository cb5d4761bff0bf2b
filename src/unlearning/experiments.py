"""One unlearning experiment from files to a record: what the CLI and the notebooks call.

`run_unlearning` loads a model, a tokenizer and a benchmark's forget and retain splits (TOFU
QA, or the MUSE, WMDP and RWKU corpora), runs `engine.unlearn` with a method, an update rule
and a stopping rule, measures forget and retain probability, and returns (and optionally
writes) a run record next to the unlearned model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from unlearning.data import encode_qa_split, encode_text, idk_records, load_split
from unlearning.engine import OptimConfig, RunResult, split_probe_set, unlearn
from unlearning.learning import file_hash
from unlearning.methods import get_method
from unlearning.metrics.likelihood import answer_probability
from unlearning.models import load_model, load_tokenizer, save_model
from unlearning.records import versions, write_json
from unlearning.stopping import FixedBudget, ViolationStop


def _weights_hash(model_dir: str | Path) -> str | None:
    """SHA-256 of a local model's weights; None for a hub name (the name is recorded)."""
    weights = sorted(Path(model_dir).glob("*.safetensors")) if Path(model_dir).is_dir() else []
    return file_hash(*weights) if weights else None


@dataclass(frozen=True)
class StopConfig:
    """`fixed` (run max_steps) or `violation` (MASC's two-stage rule, capped at max_steps)."""

    kind: str = "fixed"
    tolerance: float = 0.475
    every: int = 2
    trigger_size: int = 4
    confirm_size: int = 32

    def build(self, max_steps: int) -> FixedBudget | ViolationStop:
        if self.kind == "fixed":
            return FixedBudget(max_steps)
        if self.kind == "violation":
            return ViolationStop(self.tolerance, self.every, self.trigger_size, self.confirm_size)
        raise ValueError(f"stop must be 'fixed' or 'violation'; got {self.kind!r}")


@dataclass(frozen=True)
class BenchmarkSpec:
    """How a benchmark feeds unlearning: item kind ('qa' or 'text') and default splits.

    A split may join several files with '+', e.g. WMDP's bio and cyber forget corpora.
    """

    kind: str
    forget: str
    retain: str


BENCHMARKS: dict[str, BenchmarkSpec] = {
    "tofu": BenchmarkSpec("qa", "forget10", "retain90"),
    "muse-news": BenchmarkSpec("text", "raw/forget", "raw/retain1"),
    "muse-books": BenchmarkSpec("text", "raw/forget", "raw/retain1"),
    "wmdp": BenchmarkSpec("text", "bio-forget-corpus+cyber-forget-corpus", "bio-retain-corpus+cyber-retain-corpus"),
    # RWKU gives no retain corpus; passages about people who are neither targets nor neighbours
    "rwku": BenchmarkSpec("text", "train_original_passage", "mia_retain"),
}


def get_benchmark(name: str) -> BenchmarkSpec:
    if name not in BENCHMARKS:
        raise ValueError(f"benchmark must be one of {', '.join(BENCHMARKS)}; got {name!r}")
    return BENCHMARKS[name]


def load_records(data_dir: str | Path, split: str) -> list[dict]:
    """Records of one split, or of several joined with '+', in order."""
    return [record for part in split.split("+") for record in load_split(data_dir, part)]


def encode_records(tokenizer, records: list[dict], kind: str) -> list:
    """Tokenise QA items (prompt masked) or texts (every token a label)."""
    if kind == "qa":
        return encode_qa_split(tokenizer, records)
    return [encode_text(tokenizer, r["text"]) for r in records]


def _split_files(data_dir: str | Path, split: str) -> list[Path]:
    return [Path(data_dir) / f"{part}.json" for part in split.split("+")]


@dataclass
class UnlearningRun:
    """Inputs and outputs of one run: the engine's result, end-of-run forget and retain mean
    probabilities (answer tokens for QA, every token for text), and the record."""

    method: str
    rule: str
    hparams: dict
    result: RunResult
    forget_probability: float
    retain_probability: float
    record: dict = field(default_factory=dict)


def run_unlearning(
    model_dir: str | Path,
    tokenizer_dir: str | Path,
    data_dir: str | Path,
    method: str,
    *,
    benchmark: str = "tofu",
    forget_split: str | None = None,
    retain_split: str | None = None,
    rule: str = "sum",
    hparams: dict | None = None,
    stop: StopConfig = StopConfig(),
    max_steps: int = 100,
    optim: OptimConfig = OptimConfig(),
    probe_set: str = "official",
    lora: dict | None = None,
    seed: int = 0,
    record_geometry: bool = False,
    out_dir: str | Path | None = None,
) -> UnlearningRun:
    """Unlearn `forget_split` of `benchmark` (folder `data_dir`) from the model in `model_dir`;
    write the unlearned model and `record.json` to `out_dir` when given.

    IdkNLL's forget set pairs the forget questions with refusals (`data.idk_records`).
    """
    spec, bench = get_method(method), get_benchmark(benchmark)
    forget_split, retain_split = forget_split or bench.forget, retain_split or bench.retain
    hp = spec.hparams(**(hparams or {}))
    stopper = stop.build(max_steps)
    tokenizer = load_tokenizer(tokenizer_dir)
    forget_records = load_records(data_dir, forget_split)
    if spec.forget_answers == "idk":
        if bench.kind != "qa":
            raise ValueError(f"IdkNLL needs question-answer data; {benchmark} is a text corpus")
        forget_records = idk_records(forget_records, seed)
    forget = encode_records(tokenizer, forget_records, bench.kind)
    retain = encode_records(tokenizer, load_records(data_dir, retain_split), bench.kind)
    train_forget, probe = split_probe_set(forget, probe_set, stop.confirm_size) if stop.kind == "violation" else (forget, None)
    model = load_model(model_dir)
    result = unlearn(model, spec, hp, train_forget, retain, pad_token_id=tokenizer.pad_token_id, rule=rule,
                     stop=stopper, max_steps=max_steps, optim=optim, probe_examples=probe, seed=seed, lora=lora,
                     record_geometry=record_geometry)
    pad = tokenizer.pad_token_id
    run = UnlearningRun(method, rule, hp, result, float(answer_probability(model, forget, pad).mean()),
                        float(answer_probability(model, retain, pad).mean()))
    run.record = {
        "method": method, "rule": rule, "hparams": hp, "seed": seed, "optim": asdict(optim), "stop": asdict(stop),
        "max_steps": max_steps, "probe_set": probe_set, "lora": lora, "record_geometry": record_geometry,
        "benchmark": benchmark, "model": str(model_dir),
        "model_hash": _weights_hash(model_dir),
        "data_hash": file_hash(*_split_files(data_dir, forget_split), *_split_files(data_dir, retain_split))
        if Path(data_dir).is_dir() else None,
        "forget_split": forget_split, "retain_split": retain_split, "versions": versions(),
        "steps": result.steps, "stopped": result.stopped, "stop_step": result.stop_step,
        "train_seconds": result.train_seconds, "probe_seconds": result.probe_seconds,
        "forget_probability": run.forget_probability, "retain_probability": run.retain_probability,
        "probes": result.probes, "log": result.log,
    }
    if out_dir is not None:
        save_model(model, Path(out_dir) / "model")
        write_json(Path(out_dir) / "record.json", run.record)
    return run
