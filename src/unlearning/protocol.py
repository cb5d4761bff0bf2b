"""The book's laboratory bench: a profile's data, models and run store, and the protocol every
chapter shares, so runs match (and are reused) across chapters and the command line.

A chapter asks for "NPO on tofu forget05 from target-s"; `Lab.standard` builds the run's
`RunSpec` under the shared `Protocol` and `runs.run` returns its record, reading it from
`runs/<profile>/` when the same run was done before, by this chapter, another one, or
`unlearning unlearn` with the same settings (the 4-bit chapter reuses the TOFU chapter's
models). Evaluations are cached beside each model (`unlearning.evaluate`), 4-bit copies in the
run store (`Lab.quantized`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from unlearning.benchmarks import EvalConfig, get_benchmark
from unlearning.engine import OptimConfig, steps_for_epochs
from unlearning.evaluate import DivergedMetrics, evaluate
from unlearning.methods import get_method
from unlearning.models import copy_tokenizer_files, has_tokenizer
from unlearning.runs import RunSpec, StopConfig, run
from unlearning.runtime import Runtime, configure_process
from unlearning.store import code_key, weights_hash


@dataclass(frozen=True)
class Protocol:
    """The settings every chapter shares (and the command line's defaults).

    As in the MASC paper's comparison (masc.md s. 12-13): every baseline trains for a fixed
    budget of `epochs` passes over the forget set; a method whose default stop is the violation
    rule (MASC), or any method given `stop="violation"`, stops by itself once the violation rate
    falls to `tolerance`, capped at `cap` steps.
    """

    lr: float = 1e-4
    batch_size: int = 4
    epochs: float = 5.0
    cap: int = 1000
    tolerance: float = 0.475
    seed: int = 0

    def __post_init__(self) -> None:
        if not (self.epochs > 0 and math.isfinite(self.epochs)):
            raise ValueError(f"epochs must be a finite number > 0, got {self.epochs!r}")
        if self.cap < 1:
            raise ValueError(f"cap must be >= 1, got {self.cap!r}")
        if not 0 <= self.tolerance <= 1:
            raise ValueError(f"tolerance must lie in [0, 1], got {self.tolerance!r}")

    @property
    def optim(self) -> OptimConfig:
        return OptimConfig(lr=self.lr, batch_size=self.batch_size)

    def describe(self) -> str:
        """The settings in one sentence, for the pages that use them (no number typed by hand)."""
        return (f"AdamW at learning rate {self.lr:g}, {self.batch_size} forget and {self.batch_size} retain examples "
                f"per step; fixed budgets of {self.epochs:g} epoch(s) over the forget split; self-stopping runs end at "
                f"a violation rate of {self.tolerance} (at most {self.cap} steps)")

    def spec(self, benchmark: str, method: str, model: str | Path, n_forget: int, *, stop: str | None = None,
             **options) -> RunSpec:
        """The run of `method` under this protocol; `n_forget` sizes the epoch budget, `options`
        go to `RunSpec` (rule, forget_split, hparams, ...)."""
        stop = stop or get_method(method).default_stop
        if stop == "violation":
            config, steps = StopConfig("violation", tolerance=self.tolerance), self.cap
        else:
            config, steps = StopConfig(stop), steps_for_epochs(n_forget, n_forget, self.batch_size, self.epochs)
        return RunSpec(benchmark, method, str(model), stop=config, max_steps=steps, optim=self.optim, seed=self.seed,
                       **options)


# the SAGO paper's grid (sago.md s. 9-11): three forget objectives with a GD retain term, each
# also run forget-only, under four update rules; one pass over the forget corpus (WMDP-mini:
# 60 steps of 4 + 4 texts; the paper's 100-500 steps of 32 + 32 blocks and RWKU's 2 epochs
# are a `Protocol(epochs=...)` away; one pass keeps the mini book within its time budget)
SAGO_OBJECTIVES = ("GradDiff", "NPO+GD", "SimNPO+GD")
FORGET_ONLY = {"GradDiff": "GA", "NPO+GD": "NPO", "SimNPO+GD": "SimNPO"}
SAGO_RULES = ("sum", "pcgrad_global", "pcgrad", "sago")
SAGO_PROTOCOL = Protocol(epochs=1.0)


REAL_MODELS = "real/"  # model names that resolve to models/real (the fetched checkpoints)
REAL_BASE = "real/smollm2-135m"  # the real pretrained model of the default book


@dataclass(frozen=True)
class Lab:
    """Where a profile's data, models and runs live (`data/<p>`, `models/<p>`, `runs/<p>`)."""

    data: Path
    models: Path
    runs: Path
    runtime: Runtime = Runtime()

    @classmethod
    def for_profile(cls, profile: str, root: str | Path = ".", device: str = "auto", dtype: str = "float32") -> "Lab":
        """The lab of a profile on a device and dtype; the notebooks' entry point (sets the
        process up once)."""
        configure_process()
        root = Path(root)
        lab = cls(root / "data" / profile, root / "models" / profile, root / "runs" / profile, Runtime(device, dtype))
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
        return Path(model_dir) if has_tokenizer(model_dir) else self.tokenizer

    def model(self, name: str) -> Path:
        """Folder of a learned model, e.g. 'tofu/target-s'; names under `real/` are the fetched
        real checkpoints, shared by every profile (`models/real/...`, `make real-model`)."""
        path = self.models.parent / name if name.startswith(REAL_MODELS) else self.models / name
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"model: not found: {path} (is it in the profile's learn.yaml?)")
        return path

    def forget_size(self, benchmark: str, forget_split: str | None = None) -> int:
        """Number of records of a benchmark's forget split (it sizes epoch budgets)."""
        spec = get_benchmark(benchmark)
        return len(spec.load(self.data / benchmark, forget_split or spec.forget))

    def steps(self, benchmark: str, epochs: float, batch_size: int, forget_split: str | None = None) -> int:
        """Optimizer steps for `epochs` passes over a benchmark's forget split."""
        n_forget = self.forget_size(benchmark, forget_split)
        return steps_for_epochs(n_forget, n_forget, batch_size, epochs)

    def run(self, benchmark: str, method: str, model: str, *, checkpoints: tuple[int, ...] = (), **options) -> dict:
        """The record of one unlearning run from the learned model `model` (computed once);
        `options` are `RunSpec` fields; `record['dir']` holds the model, `record['checkpoints']`
        the weights kept at the steps `checkpoints` (`runs.run`)."""
        start = self.model(model)
        spec = RunSpec(benchmark, method, str(start), **options)
        return {**run(spec, self.data / benchmark, self.tokenizer_for(start), self.runs, runtime=self.runtime,
                      checkpoints=checkpoints), "start": model}

    def standard(self, benchmark: str, method: str, model: str, protocol: Protocol = Protocol(), *,
                 forget_split: str | None = None, stop: str | None = None, checkpoints: tuple[int, ...] = (),
                 **options) -> dict:
        """A run under the shared `protocol`: methods that stop by themselves (MASC) self-stop,
        every other runs the fixed epoch budget unless `stop="violation"`; `options` go to
        `RunSpec` (rule, hparams, ...), `checkpoints` to `runs.run`."""
        start = self.model(model)
        spec = protocol.spec(benchmark, method, start, self.forget_size(benchmark, forget_split), stop=stop,
                             forget_split=forget_split, **options)
        return {**run(spec, self.data / benchmark, self.tokenizer_for(start), self.runs, runtime=self.runtime,
                      checkpoints=checkpoints), "start": model}

    def evaluate(self, benchmark: str, model_dir: str | Path | None, *, oracle: dict | None = None,
                 config: EvalConfig = EvalConfig()) -> dict:
        """The benchmark's metric suite on a model folder (cached beside the model); every metric
        NaN for a run that diverged (`model_dir` None, `evaluate.DivergedMetrics`)."""
        if model_dir is None:
            return DivergedMetrics()
        return evaluate(benchmark, model_dir, self.data / benchmark, self.tokenizer_for(model_dir), config=config,
                        oracle=oracle, runtime=self.runtime)

    def quantized(self, model_dir: str | Path | None, code: str = "nf4") -> Path | None:
        """A 4-bit copy of a model folder, made once, as a 4-bit deployment would see it: every
        Linear weight rounded to the code's grid (`unlearning.quantize`). Stored under
        `runs/<profile>/quantized/`, keyed by the source weights, the code and the quantizer's code."""
        from unlearning.models import load_model, save_model
        from unlearning.quantize import code_book, quantize_model
        from unlearning.store import content_key

        code_book(code)  # validates the name before any work
        if model_dir is None:  # a diverged run: no model to quantize, its metrics read as diverged
            return None
        source = Path(model_dir)
        key = content_key(weights=weights_hash(source), code=code, quantizer=code_key(quantize_model))
        target = self.runs / "quantized" / f"{key[:16]}-{code}"
        if not (target / "config.json").is_file():
            model = load_model(source)
            quantize_model(model, code=code)
            save_model(model, target, also=lambda path: copy_tokenizer_files(source, path))
        return target


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
                run_record = lab.standard(benchmark, objective, model, protocol, rule=rule, hparams=hparams,
                                          record_geometry=True)
                variant = "+GD" if rule == "sum" else f"+GD+{rule}"
                rows.append({"objective": objective, "variant": variant, "rule": rule,
                             "alpha": run_record["hparams"]["alpha"], "run": run_record,
                             **lab.evaluate(benchmark, run_record["dir"], config=evaluate_config)})
    return rows


def sago_gains(results, objectives, retain: str = "neighbour") -> list[dict]:
    """Per objective with +GD, PCGrad and SAGO runs: its `retain` metric under each rule, SAGO -
    PCGrad in points (x100) and both rules' forget metric: the numbers of the SAGO paper's "SAGO
    keeps more" claim. `results` has columns objective, rule, forget and `retain`."""
    gains = []
    for objective in objectives:
        part = results[results.objective == objective].set_index("rule")
        if {"sum", "pcgrad", "sago"} <= set(part.index):
            gains.append({"objective": objective.replace("GradDiff", "GA+GD"),
                          **{rule: float(part.loc[rule, retain]) for rule in ("sum", "pcgrad", "sago")},
                          "points": 100 * float(part.loc["sago", retain] - part.loc["pcgrad", retain]),
                          "forget_pcgrad": float(part.loc["pcgrad", "forget"]),
                          "forget_sago": float(part.loc["sago", "forget"])})
    return gains


def sago_kept_more(gain: dict, tolerance: float = 0.01) -> bool:
    """Whether one `sago_gains` row bears the claim out: SAGO keeps more (a positive gain) without
    buying it with weaker forgetting (its forget metric at most `tolerance` above PCGrad's)."""
    return gain["points"] > 0 and gain["forget_sago"] <= gain["forget_pcgrad"] + tolerance


def sago_versus_pcgrad(results, objectives, retain: str = "neighbour") -> list[str]:
    """One sentence per objective of `sago_gains`: the +GD, PCGrad and SAGO `retain` values,
    SAGO - PCGrad in points and both rules' forget metric."""
    return [f"{g['objective']}: {retain} {g['sum']:.2f} (+GD) / {g['pcgrad']:.2f} (PCGrad) / {g['sago']:.2f} (SAGO), "
            f"SAGO - PCGrad = {g['points']:+.1f} points, forget {g['forget_pcgrad']:.2f} vs {g['forget_sago']:.2f}"
            for g in sago_gains(results, objectives, retain)]


def oracle_of(benchmark: str, forget_split: str, size: str) -> str:
    """The retain-only oracle model of a benchmark's forget split (TOFU: forget01 ->
    tofu/retain99-<size>); an error for a benchmark without one."""
    rule = get_benchmark(benchmark).oracle
    if rule is None:
        raise ValueError(f"benchmark {benchmark} has no oracle rule")
    return rule(forget_split, size)


def tofu_oracle(forget_split: str, size: str) -> str:
    """TOFU's retain-only oracle of a forget split (`oracle_of('tofu', ...)`)."""
    return oracle_of("tofu", forget_split, size)


def eval_config(benchmark: str, forget_split: str | None = None, **changes) -> EvalConfig:
    """The evaluation config of a benchmark's forget split (TOFU: forget01/05/10)."""
    config = EvalConfig(forget_split=forget_split) if benchmark == "tofu" and forget_split else EvalConfig()
    return replace(config, **changes)


# RMU's knobs, tuned per model (WMDP paper s. 5 and app. B; benchmarks.md s. 3: "c and alpha need
# per-model tuning"). The steering coefficient is a multiple of the start model's mean activation
# norm at the hooked layer (`steering_scale="activation_norm"`): an absolute c in the official range
# (6.5-20) lies below the norms of these models (10-16 for the laboratory's, about 630 for
# SmolLM2-135M), so it would shrink the forget activations rather than steer them. RMU trains three
# down-projections only, so the learning rate is searched too, as a multiple of the protocol's.
RMU_GRID = {"steering": (1.0, 4.0, 16.0), "alpha": (100.0, 1200.0), "lr_multiple": (1.0, 10.0)}


@dataclass(frozen=True)
class Tuned:
    """The outcome of a hyper-parameter search: the chosen `hparams` and `protocol` (its learning
    rate), every grid point's metrics (`rows`, with `chosen` marked) and the choice rule in words."""

    hparams: dict
    protocol: Protocol
    rows: list[dict]
    rule: str

    def describe(self) -> str:
        """The rule and the chosen point in one sentence, as the chapters print it."""
        return (f"Choice rule: {self.rule}. Chosen: $c$ = {self.hparams['steering']:g} x the activation norm, "
                f"$\\alpha$ = {self.hparams['alpha']:g}, learning rate {self.protocol.lr:g}.")

    def table(self):
        """Every grid point with its metrics, as a styled table (learning rates in %g)."""
        import pandas as pd

        from unlearning.plotting import DIVERGED

        return pd.DataFrame(self.rows).style.format(precision=3, na_rep=DIVERGED).format({"lr": "{:g}"}, na_rep=DIVERGED)


def tune_rmu(lab: Lab, benchmark: str, model: str, protocol: Protocol = Protocol(), *, forget_metric: str,
             retain_metric: str, forget_split: str | None = None, config: EvalConfig = EvalConfig(),
             oracle: dict | None = None, grid: dict = RMU_GRID, max_retain_drop: float = 0.05) -> Tuned:
    """RMU's steering multiple, retain weight and learning rate for one start model, chosen as the
    RMU paper chooses them: the run that lowers the forget metric most (`forget_metric`, lower is
    better) among those whose retain metric (`retain_metric`, higher is better) stays within
    `max_retain_drop` of the start model's; when none does, the one that keeps the retain metric
    best. Every grid run and evaluation is cached, so chapters that ask again pay nothing, and the
    chosen run is the one `lab.standard(..., tuned.protocol, hparams=tuned.hparams)` returns."""
    if not max_retain_drop >= 0:
        raise ValueError(f"max_retain_drop must be >= 0, got {max_retain_drop!r}")
    if set(grid) != set(RMU_GRID) or not all(grid[k] for k in RMU_GRID):
        raise ValueError(f"grid: needs non-empty {', '.join(map(repr, RMU_GRID))} lists, got {sorted(grid)}")
    start = lab.evaluate(benchmark, lab.model(model), config=config, oracle=oracle)
    floor = start[retain_metric] - max_retain_drop
    rows, settings = [], []
    for multiple in grid["lr_multiple"]:
        for steering in grid["steering"]:
            for alpha in grid["alpha"]:
                hparams = {"steering": float(steering), "steering_scale": "activation_norm", "alpha": float(alpha)}
                run_protocol = replace(protocol, lr=protocol.lr * float(multiple))
                record = lab.standard(benchmark, "RMU", model, run_protocol, forget_split=forget_split, hparams=hparams)
                metrics = lab.evaluate(benchmark, record["dir"], config=config, oracle=oracle)
                settings.append((hparams, run_protocol))
                rows.append({"steering x norm": float(steering), "alpha": float(alpha), "lr": run_protocol.lr,
                             forget_metric: metrics[forget_metric], retain_metric: metrics[retain_metric],
                             "eligible": bool(metrics[retain_metric] >= floor), "chosen": False})
    eligible = [i for i, row in enumerate(rows) if row["eligible"]]
    best = (min(eligible, key=lambda i: rows[i][forget_metric]) if eligible
            else max(range(len(rows)), key=lambda i: rows[i][retain_metric]))
    rows[best]["chosen"] = True
    rule = (f"lowest {forget_metric} among the runs whose {retain_metric} stays within {max_retain_drop:g} of the "
            f"start model's ({start[retain_metric]:.3f}); the best {retain_metric} when none does")
    return Tuned(settings[best][0], settings[best][1], rows, rule)


def tune_rmu_on_tofu(lab: Lab, size: str, forget_split: str, protocol: Protocol = Protocol(),
                     grid: dict = RMU_GRID) -> Tuned:
    """RMU tuned on TOFU's target of `size` at `forget_split`, as the TOFU chapters (and the speed
    harness) all tune it: forget ROUGE-L down, retain ROUGE-L kept, against the split's oracle."""
    config = eval_config("tofu", forget_split)
    oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
    return tune_rmu(lab, "tofu", f"tofu/target-{size}", protocol, forget_metric="forget_Q_A_ROUGE",
                    retain_metric="retain_Q_A_ROUGE", forget_split=forget_split, config=config, oracle=oracle, grid=grid)
