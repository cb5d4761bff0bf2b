"""One unlearning run: its specification, its key, and the one function that runs it.

A `RunSpec` says everything that determines a run: benchmark and splits, method and
hyper-parameters, update rule, stopping rule and budget, optimiser, seed, probe set, LoRA and
the starting model. `run(spec, ...)` is what the command line (`unlearning unlearn`) and the
notebooks (`protocol.Lab`) both call: it looks the run up in the store by its key (the hash of
the starting weights, the data files, every field of the spec and the training code), computes
it only when it is not there, and returns its record with `record['dir']`, the unlearned model.
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import torch

from unlearning.benchmarks import Benchmark, get_benchmark
from unlearning.choices import PROBE_SETS
from unlearning.data import encode_qa_split, encode_text, pack_corpus
from unlearning.engine import OptimConfig, unlearn
from unlearning.failpoints import reached
from unlearning.methods import get_method
from unlearning.metrics.likelihood import answer_probability
from unlearning.models import copy_tokenizer_files, load_model, load_tokenizer, save_model
from unlearning.records import read_json, versions, write_json
from unlearning.runtime import Runtime
from unlearning.stopping import StopConfig, split_probe_set
from unlearning.store import code_key, content_key, file_hash, is_released, weights_hash
from unlearning.synthesis import RULES


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines one unlearning run (see the module docstring)."""

    benchmark: str
    method: str
    model: str
    rule: str = "sum"
    forget_split: str | None = None
    retain_split: str | None = None
    hparams: dict = field(default_factory=dict)
    stop: StopConfig = StopConfig()
    max_steps: int = 100
    optim: OptimConfig = OptimConfig()
    seed: int = 0
    probe_set: str = "official"
    record_geometry: bool = False
    lora: dict | None = None
    packing: int | None = None  # a text corpus in blocks of this many tokens (SAGO's packing), else per passage

    def resolved(self) -> "RunSpec":
        """The spec with the benchmark's default splits and the method's full, checked
        hyper-parameters filled in; every value validated (one-line errors)."""
        benchmark, method = get_benchmark(self.benchmark), get_method(self.method)
        benchmark.require_unlearning()
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}; got {self.rule!r}")
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.probe_set not in PROBE_SETS:
            raise ValueError(f"probe_set must be one of {', '.join(PROBE_SETS)}; got {self.probe_set!r}")
        if self.lora is not None and self.lora.get("r", 8) < 1:
            raise ValueError(f"LoRA rank must be >= 1, got {self.lora.get('r')}")
        if self.packing is not None and (self.packing < 1 or benchmark.kind != "text"):
            raise ValueError(f"packing must be a block length >= 1 on a text benchmark; got {self.packing!r} on "
                             f"{self.benchmark} ({benchmark.kind})")
        return replace(self, model=str(self.model), forget_split=self.forget_split or benchmark.forget,
                       retain_split=self.retain_split or benchmark.retain, hparams=method.hparams(**self.hparams))

    def key(self, data_dir: str | Path, runtime: Runtime = Runtime()) -> str:
        """The store key of the (resolved) spec with its data in `data_dir`, run by `runtime`
        (its device type, dtype and number of processes)."""
        spec = self.resolved()
        benchmark = get_benchmark(spec.benchmark)
        return content_key(
            spec={**asdict(spec), "model": None}, model=weights_hash(spec.model),
            forget=file_hash(*benchmark.split_files(data_dir, spec.forget_split)),
            retain=file_hash(*benchmark.split_files(data_dir, spec.retain_split)),
            runtime=runtime.describe(), code=code_key(execute, StopConfig))


def encode_records(tokenizer, records: list[dict], kind: str, packing: int | None = None) -> list:
    """Tokenise QA items (prompt masked), texts one by one (every token a label) or, with
    `packing`, texts packed into blocks of that many tokens (`data.pack_corpus`)."""
    if kind == "qa":
        return encode_qa_split(tokenizer, records)
    if packing is not None:
        return pack_corpus(tokenizer, [r["text"] for r in records], packing)
    return [encode_text(tokenizer, r["text"]) for r in records]


def training_units(tokenizer_dir: str | Path, records: list[dict], kind: str, packing: int | None = None) -> int:
    """How many examples a split trains on (`encode_records`' count): its records, or a text
    split's blocks when packed with the tokenizer at `tokenizer_dir` (they size a recipe's
    epochs, warm-ups and batches)."""
    if packing is None or kind == "qa":
        return len(records)
    return len(pack_corpus(load_tokenizer(tokenizer_dir), [r["text"] for r in records], packing))


def execute(spec: RunSpec, benchmark: Benchmark, data_dir: Path, tokenizer_dir: Path,
            runtime: Runtime = Runtime(), checkpoints: Sequence[int] = ()) -> tuple:
    """Run a resolved spec on `runtime`: (unlearned model, record, checkpoint states). The code
    of this function and of all it calls is part of every run's key; `checkpoints` (steps at
    which to keep the weights) is not: it changes what is kept of a run, not the run."""
    method = get_method(spec.method)
    tokenizer = load_tokenizer(tokenizer_dir)
    forget_records = method.forget_records(benchmark.load(data_dir, spec.forget_split), spec.seed)
    forget = encode_records(tokenizer, forget_records, benchmark.kind, spec.packing)
    retain = encode_records(tokenizer, benchmark.load(data_dir, spec.retain_split), benchmark.kind, spec.packing)
    violation = spec.stop.kind == "violation"
    train_forget, probe = split_probe_set(forget, spec.probe_set, spec.stop.confirm_size) if violation else (forget, None)
    model = load_model(spec.model, runtime.torch_dtype, runtime.torch_device())
    result = unlearn(model, method, spec.hparams, train_forget, retain, pad_token_id=tokenizer.pad_token_id,
                     rule=spec.rule, stop=spec.stop.build(spec.max_steps), max_steps=spec.max_steps, optim=spec.optim,
                     probe_examples=probe, seed=spec.seed, lora=spec.lora, record_geometry=spec.record_geometry,
                     accelerator=runtime.accelerator(), checkpoint_steps=tuple(checkpoints))
    pad = tokenizer.pad_token_id
    finished = result.diverged is None  # a diverged run's model is not a result: nothing is measured on it
    record = {
        **{k: v for k, v in asdict(spec).items() if k not in ("forget_split", "retain_split", "model")},
        "model": spec.model, "forget_split": spec.forget_split, "retain_split": spec.retain_split,
        "runtime": runtime.describe(), "versions": versions(),
        "forget_examples": len(forget), "retain_examples": len(retain),
        "steps": result.steps, "stopped": result.stopped, "stop_step": result.stop_step,
        "train_seconds": result.train_seconds, "probe_seconds": result.probe_seconds,
        "probe_passes": result.probe_passes,
        "diverged": result.diverged,
        "forget_probability": float(answer_probability(model, forget, pad).mean()) if finished else None,
        "retain_probability": float(answer_probability(model, retain, pad).mean()) if finished else None,
        "probes": result.probes, "log": result.log, **peak_memory(),
        "checkpoints_requested": sorted(set(checkpoints)),
        "checkpoints": [{"step": c["step"], "seconds": c["seconds"], "dir": checkpoint_name(c["step"])}
                        for c in result.checkpoints],
    }
    return model, record, [c["state"] for c in result.checkpoints]


def spec_from_record(record: dict) -> RunSpec:
    """The RunSpec a stored run was computed from (its record holds every field)."""
    values = {f.name: record[f.name] for f in fields(RunSpec) if f.name in record}
    values["stop"], values["optim"] = StopConfig(**record["stop"]), OptimConfig(**record["optim"])
    return RunSpec(**values)


def checkpoint_name(step: int) -> str:
    """A checkpoint's folder inside its run's folder."""
    return f"checkpoints/step-{step:05d}"


def peak_memory() -> dict:
    """Peak resident memory of this process so far (MB) and, on a GPU, the peak memory torch
    allocated there (MB): what a run cost, for the paper-scale chapter's table."""
    out = {"peak_rss_mb": peak_rss_mb()}
    if torch.cuda.is_available():
        out["peak_gpu_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return out


def peak_rss_mb() -> float:
    """This process's peak resident memory (MB). On Linux the high-water mark of its own address
    space (VmHWM): `getrusage`'s ru_maxrss survives exec, so a process started by a larger parent
    would report the parent's size; elsewhere ru_maxrss (bytes on macOS, KiB otherwise)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    scale = 1 if sys.platform == "darwin" else 1024
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20, 1)


def run_dir(spec: RunSpec, data_dir: str | Path, store: str | Path, runtime: Runtime = Runtime()) -> Path:
    """Where the run of `spec` lives in the store: `<store>/<benchmark>-<method>-<key16>/`."""
    return Path(store) / f"{spec.benchmark}-{spec.method}-{spec.key(data_dir, runtime)[:16]}"


def run(spec: RunSpec, data_dir: str | Path, tokenizer_dir: str | Path, store: str | Path, log=None,
        runtime: Runtime = Runtime(), checkpoints: Sequence[int] = (), weights: bool = False) -> dict:
    """The record of the run of `spec` on `runtime` (computed once, then read from the store);
    `record['dir']` is the folder of the unlearned model. In a process group every process
    trains its share; the main process alone writes the model and the record.

    `checkpoints`: steps whose weights are kept as well (`record['checkpoints']`, each with its
    time into the run and its folder), for time-to-quality curves. A stored run that was not asked
    for them is run again (to the same final weights) with the steps asked for before and now.
    `weights`: the model folder must hold its weights; a stored run whose weights were released
    (`store.release_weights`) is run again, to the same bits."""
    spec = spec.resolved()
    data_dir, tokenizer_dir = Path(data_dir), Path(tokenizer_dir)
    for what, path in (("data", data_dir), ("tokenizer", tokenizer_dir), ("model", Path(spec.model))):
        if not path.is_dir():
            raise FileNotFoundError(f"{what}: folder not found: {path}")
    folder = run_dir(spec, data_dir, store, runtime)
    record_path = folder / "record.json"
    runtime.wait()  # every process decides on the same state of the store
    stored = read_json(record_path) if record_path.is_file() else None
    released = stored is not None and weights and is_released(folder / "model")
    if stored is not None and set(checkpoints) <= set(stored.get("checkpoints_requested", ())) and not released:
        if log:
            log(f"cached: {folder}")
    else:
        benchmark = get_benchmark(spec.benchmark)
        wanted = sorted(set(checkpoints) | set(stored.get("checkpoints_requested", ()) if stored else ()))
        model, record, states = execute(spec, benchmark, data_dir, tokenizer_dir, runtime, wanted)
        if runtime.is_main:
            record.update(key=folder.name, model_hash=weights_hash(spec.model), data_hash=file_hash(
                *benchmark.split_files(data_dir, spec.forget_split), *benchmark.split_files(data_dir, spec.retain_split)))
            reached("run:trained")
            tokenizer_files = lambda path: copy_tokenizer_files(spec.model, path)  # noqa: E731
            if record["diverged"] is None:
                save_model(model, folder / "model", also=tokenizer_files, keep=("metrics",))
            for checkpoint, state in zip(record["checkpoints"], states):
                model.load_state_dict(state)
                save_model(model, folder / checkpoint["dir"], also=tokenizer_files, keep=("metrics",))
            reached("run:model-saved")
            write_json(record_path, record)  # last: a folder without its record is not a finished run
            reached("run:recorded")
            if log:
                log(f"wrote {folder}")
        runtime.wait()  # the others read what the main process wrote
    record = read_json(record_path)
    if record.get("diverged") and log:
        log(diverged_message(record))
    return {**record, "dir": None if record.get("diverged") else str(folder / "model"),
            "checkpoints": [{**c, "dir": str(folder / c["dir"])} for c in record.get("checkpoints", [])]}


def diverged_message(record: dict) -> str:
    """One line: which run diverged, at which step, in which objective."""
    fault = record["diverged"]
    return (f"{record['method']} on {record['benchmark']} diverged at step {fault['step']}: the {fault['objective']} "
            f"is {fault['value']}; no model was saved (the run is recorded as diverged)")
