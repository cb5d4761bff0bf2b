"""One unlearning experiment from files to a record: what the CLI and the notebooks call.

`run_tofu` loads a model, a tokenizer and TOFU-schema splits, runs `engine.unlearn` with a
method, an update rule and a stopping rule, measures forget and retain answer probability,
and returns (and optionally writes) a run record next to the unlearned model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from unlearning.data import encode_qa_split, load_split
from unlearning.engine import OptimConfig, RunResult, unlearn
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


@dataclass
class TofuRun:
    """Inputs and outputs of one TOFU-schema run."""

    method: str
    rule: str
    hparams: dict
    result: RunResult
    forget_probability: float
    retain_probability: float
    record: dict = field(default_factory=dict)


def run_tofu(
    model_dir: str | Path,
    tokenizer_dir: str | Path,
    data_dir: str | Path,
    method: str,
    *,
    forget_split: str = "forget10",
    retain_split: str = "retain90",
    rule: str = "sum",
    hparams: dict | None = None,
    stop: StopConfig = StopConfig(),
    max_steps: int = 100,
    optim: OptimConfig = OptimConfig(),
    seed: int = 0,
    out_dir: str | Path | None = None,
) -> TofuRun:
    """Unlearn `forget_split` from the model in `model_dir`; write model + record to `out_dir`."""
    spec = get_method(method)
    hp = spec.hparams(**(hparams or {}))
    stopper = stop.build(max_steps)
    tokenizer = load_tokenizer(tokenizer_dir)
    forget = encode_qa_split(tokenizer, load_split(data_dir, forget_split, ("question", "answer")))
    retain = encode_qa_split(tokenizer, load_split(data_dir, retain_split, ("question", "answer")))
    model = load_model(model_dir)
    result = unlearn(model, spec, hp, forget, retain, pad_token_id=tokenizer.pad_token_id, rule=rule,
                     stop=stopper, max_steps=max_steps, optim=optim, seed=seed)
    pad = tokenizer.pad_token_id
    run = TofuRun(method, rule, hp, result, float(answer_probability(model, forget, pad).mean()),
                  float(answer_probability(model, retain, pad).mean()))
    run.record = {
        "method": method, "rule": rule, "hparams": hp, "seed": seed, "optim": asdict(optim), "stop": asdict(stop),
        "max_steps": max_steps, "model": str(model_dir),
        "model_hash": _weights_hash(model_dir),
        "data_hash": file_hash(Path(data_dir) / f"{forget_split}.json", Path(data_dir) / f"{retain_split}.json"),
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
