"""The book's laboratory bench: unlearning runs and evaluations, each computed once.

A chapter asks for "NPO on tofu forget05 from target-s"; `Lab.run` returns the run record,
reading it from `runs/<profile>/<key>/` when the same run was done before (by this chapter or
another: the 4-bit chapter reuses the TOFU chapter's models). The key hashes everything that
determines the result: the starting weights, the forget and retain files, the method, rule,
hyper-parameters, stopping rule, optimiser, seed and the code of the training stack. A changed
input is recomputed, never served stale; an unchanged one costs a file read, which is why a
second `make book` is fast.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from unlearning.engine import OptimConfig, steps_for_epochs
from unlearning.evaluate import EvalConfig, evaluate
from unlearning.experiments import StopConfig, _split_files, _weights_hash, get_benchmark, load_records, run_unlearning
from unlearning.learning import file_hash
from unlearning.methods import get_method
from unlearning.records import read_json, write_json

# the modules whose code determines an unlearning run's outcome
TRAINING_CODE = ("engine", "methods", "losses", "margin", "stopping", "synthesis", "experiments", "data", "models")


def training_code_version() -> str:
    """Hash of the training stack's source files, part of every run key."""
    root = Path(__file__).parent
    return file_hash(*(root / f"{name}.py" for name in TRAINING_CODE))


@dataclass(frozen=True)
class Protocol:
    """The settings every chapter shares, so runs match (and are reused) across chapters.

    As in the MASC paper's comparison (masc.md s. 12-13): every baseline trains for a fixed
    budget of `epochs` passes over the forget set; MASC (or any method given `stop="violation"`)
    stops by itself once the violation rate falls to `tolerance`, capped at `cap` steps.
    """

    lr: float = 1e-4
    batch_size: int = 4
    epochs: float = 5.0
    cap: int = 1000
    tolerance: float = 0.475
    seed: int = 0

    @property
    def optim(self) -> OptimConfig:
        return OptimConfig(lr=self.lr, batch_size=self.batch_size)


# the SAGO paper's grid (sago.md s. 9-11): three forget objectives with a GD retain term, each
# also run forget-only, under four update rules; one pass over the forget corpus (WMDP-mini:
# 60 steps of 4 + 4 texts; the paper's 100-500 steps of 32 + 32 blocks and RWKU's 2 epochs
# are a `Protocol(epochs=...)` away; one pass keeps the mini book within its time budget)
SAGO_OBJECTIVES = ("GradDiff", "NPO+GD", "SimNPO+GD")
FORGET_ONLY = {"GradDiff": "GA", "NPO+GD": "NPO", "SimNPO+GD": "SimNPO"}
SAGO_RULES = ("sum", "pcgrad_global", "pcgrad", "sago")
SAGO_PROTOCOL = Protocol(epochs=1.0)


@dataclass(frozen=True)
class Lab:
    """Where a profile's data, models and runs live (`data/<p>`, `models/<p>`, `runs/<p>`)."""

    data: Path
    models: Path
    runs: Path

    @classmethod
    def for_profile(cls, profile: str, root: str | Path = ".") -> "Lab":
        root = Path(root)
        lab = cls(root / "data" / profile, root / "models" / profile, root / "runs" / profile)
        for what, path in (("data", lab.data), ("models", lab.models)):
            if not path.is_dir():
                hint = "make data" if what == "data" else "make models"
                raise FileNotFoundError(f"{what}: folder not found: {path} (run `{hint} PROFILE={profile}`)")
        return lab

    @property
    def tokenizer(self) -> Path:
        """The profile's tokenizer folder (the laboratory's, trained by `make models`)."""
        return self.models / "tokenizer"

    def tokenizer_for(self, model_dir: str | Path) -> Path:
        """A model's own tokenizer when its folder has one (real checkpoints fetched from the
        hub, and runs started from them), else the profile's."""
        return Path(model_dir) if _has_tokenizer(model_dir) else self.tokenizer

    def model(self, name: str) -> Path:
        """Folder of a learned model, e.g. 'tofu/target-s'."""
        path = self.models / name
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"model: not found: {path} (is it in the profile's learn.yaml?)")
        return path

    def steps(self, benchmark: str, epochs: float, batch_size: int, forget_split: str | None = None) -> int:
        """Optimizer steps for `epochs` passes over a benchmark's forget split."""
        spec = get_benchmark(benchmark)
        n_forget = len(load_records(self.data / benchmark, forget_split or spec.forget))
        return steps_for_epochs(n_forget, n_forget, batch_size, epochs)

    def run(self, benchmark: str, method: str, model: str, *, rule: str = "sum", forget_split: str | None = None,
            retain_split: str | None = None, hparams: dict | None = None, stop: StopConfig = StopConfig(),
            max_steps: int = 100, optim: OptimConfig = OptimConfig(), seed: int = 0, probe_set: str = "official",
            record_geometry: bool = False) -> dict:
        """The record of one unlearning run (computed once); `record['dir']` holds the model."""
        spec = get_benchmark(benchmark)
        data_dir, start = self.data / benchmark, self.model(model)
        forget_split, retain_split = forget_split or spec.forget, retain_split or spec.retain
        inputs = {"benchmark": benchmark, "method": method, "model": _weights_hash(start), "rule": rule,
                  "forget": file_hash(*_split_files(data_dir, forget_split)),
                  "retain": file_hash(*_split_files(data_dir, retain_split)),
                  "hparams": get_method(method).hparams(**(hparams or {})),
                  "stop": asdict(stop), "max_steps": max_steps, "optim": asdict(optim), "seed": seed,
                  "probe_set": probe_set, "geometry": record_geometry, "code": training_code_version()}
        key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]
        folder = self.runs / f"{benchmark}-{method}-{key}"
        record_path = folder / "record.json"
        if not record_path.is_file():
            result = run_unlearning(start, self.tokenizer_for(start), data_dir, method, benchmark=benchmark,
                                    forget_split=forget_split, retain_split=retain_split, rule=rule, hparams=hparams,
                                    stop=stop, max_steps=max_steps, optim=optim, probe_set=probe_set, seed=seed,
                                    record_geometry=record_geometry, out_dir=folder)
            del result
            _copy_tokenizer_files(start, folder / "model")
        return {**read_json(record_path), "dir": str(folder / "model"), "start": model}

    def standard(self, benchmark: str, method: str, model: str, protocol: Protocol = Protocol(), *,
                 forget_split: str | None = None, stop: str | None = None, **options) -> dict:
        """A run under the shared `protocol`: MASC self-stops, every other method runs the fixed
        epoch budget unless `stop="violation"`; `options` go to `run` (rule, hparams, ...)."""
        stop = stop or ("violation" if method == "MASC" else "fixed")
        if stop == "violation":
            config, steps = StopConfig("violation", tolerance=protocol.tolerance), protocol.cap
        else:
            config, steps = StopConfig("fixed"), self.steps(benchmark, protocol.epochs, protocol.batch_size, forget_split)
        return self.run(benchmark, method, model, forget_split=forget_split, stop=config, max_steps=steps,
                        optim=protocol.optim, seed=protocol.seed, **options)

    def evaluate(self, benchmark: str, model_dir: str | Path, *, oracle: dict | None = None,
                 config: EvalConfig = EvalConfig()) -> dict:
        """The benchmark's metric suite on a model folder (cached beside the model)."""
        return evaluate(benchmark, model_dir, self.data / benchmark, self.tokenizer_for(model_dir), config=config,
                        oracle=oracle)

    def quantized(self, model_dir: str | Path, code: str = "nf4") -> Path:
        """A 4-bit copy of a model folder, made once, as a 4-bit deployment would see it: every
        Linear weight rounded to the code's grid (`unlearning.quantize`). Stored under
        `runs/<profile>/quantized/`, keyed by the source weights and the code."""
        from unlearning.models import load_model, save_model
        from unlearning.quantize import code_book, quantize_model

        code_book(code)  # validates the name before any work
        source = Path(model_dir)
        target = self.runs / "quantized" / f"{_weights_hash(source)[:16]}-{code}"
        if not (target / "config.json").is_file():
            model = load_model(source)
            quantize_model(model, code=code)
            save_model(model, target)
            _copy_tokenizer_files(source, target)
        return target


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model")


def _has_tokenizer(model_dir: str | Path) -> bool:
    return (Path(model_dir) / "tokenizer_config.json").is_file()


def _copy_tokenizer_files(source: str | Path, target: Path) -> None:
    """Give a derived model (a run, a quantized copy) its parent's own tokenizer files, if any."""
    if _has_tokenizer(source):
        for name in TOKENIZER_FILES:
            if (Path(source) / name).is_file():
                shutil.copy2(Path(source) / name, target / name)


def sago_grid(lab: Lab, benchmark: str, model: str, objectives=SAGO_OBJECTIVES, rules=SAGO_RULES,
              protocol: Protocol = SAGO_PROTOCOL, retain_weights=(None,), evaluate_config: EvalConfig = EvalConfig()):
    """Every (objective, rule, retain weight) run of the SAGO paper's grid, plus each
    objective's forget-only variant, with its metrics: one dict per run.

    `retain_weights` sweeps alpha (None: the method's default); geometry is recorded on every
    run with a retain term, so the geometry chapter reads the same runs.
    """
    rows = []
    for objective in objectives:
        plain = lab.standard(benchmark, FORGET_ONLY[objective], model, protocol)
        rows.append({"objective": objective, "variant": "forget-only", "rule": "-", "alpha": 0.0, "run": plain,
                     **lab.evaluate(benchmark, plain["dir"], config=evaluate_config)})
        for rule in rules:
            for alpha in retain_weights:
                hparams = {} if alpha is None else {"alpha": alpha}
                run = lab.standard(benchmark, objective, model, protocol, rule=rule, hparams=hparams,
                                   record_geometry=True)
                variant = "+GD" if rule == "sum" else f"+GD+{rule}"
                rows.append({"objective": objective, "variant": variant, "rule": rule,
                             "alpha": run["hparams"]["alpha"], "run": run,
                             **lab.evaluate(benchmark, run["dir"], config=evaluate_config)})
    return rows


def tofu_oracle(forget_split: str, size: str) -> str:
    """The retain-only oracle of a TOFU forget split: forget01 -> tofu/retain99-<size>, etc."""
    return f"tofu/retain{100 - int(forget_split.removeprefix('forget'))}-{size}"


def eval_config(benchmark: str, forget_split: str | None = None, **changes) -> EvalConfig:
    """The evaluation config of a benchmark's forget split (TOFU: forget01/05/10)."""
    config = EvalConfig(forget_split=forget_split) if benchmark == "tofu" and forget_split else EvalConfig()
    return replace(config, **changes)
