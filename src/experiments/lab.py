"""The book's laboratory bench: a profile's data, models and run store, under the protocol every
chapter shares (`experiments.protocol`), so runs match (and are reused) across chapters and the
command line.

A chapter asks for "NPO on tofu forget05 from target-s"; `Lab.run` builds the run's
`RunSpec` under the shared `Protocol` and `runs.run` returns its record, reading it from
`runs/<profile>/` when the same run was done before, by this chapter, another one, or
`unlearning unlearn` with the same settings (the 4-bit chapter reuses the TOFU chapter's
models). Evaluations are cached beside each model (`unlearning.evaluate`), 4-bit copies in the
run store (`Lab.quantized`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from experiments.plotting import DIVERGED
from unlearning.benchmarks import EvalConfig, get_benchmark
from unlearning.data import encode_qa_split
from unlearning.engine import steps_for_epochs
from unlearning.evaluate import DivergedMetrics, evaluate, is_evaluated
from unlearning.metrics.likelihood import answer_probability
from unlearning.models import copy_tokenizer_files, has_tokenizer, load_model, load_tokenizer, save_model
from unlearning.benchmarks import eval_config

from experiments.protocol import Protocol  # the shared protocol; chapters import it (and eval_config) from here too
from unlearning.quantize import code_book, quantize_model
from unlearning.recipes import PAPER_SCALE, Changes, Recipe, Scale, laboratory_scale, learned_rate, scaled
from unlearning.recipes import load as load_recipe
from unlearning.records import read_json, write_json
from unlearning.runs import RunSpec, run, spec_from_record, training_units
from unlearning.runtime import Runtime, configure_process
from unlearning.stopping import StopConfig
from unlearning.store import code_key, content_key, is_released, release_weights, weight_files, weights_hash

# the MASC paper's TOFU comparison (its Figure 1): MASC's released run against OpenUnlearning's
# baselines as the paper shows them; the chapters' other methods run with the same baseline trainer,
# in rows marked beyond the paper
PAPER_BASELINES = ("GradDiff", "NPO+KLR", "SimNPO+GD")


def tofu_recipe(method: str) -> str:
    """The recipe a TOFU chapter runs `method` with: MASC's released run, or OpenUnlearning's."""
    return "masc/tofu" if method == "MASC" else "openunlearning/tofu"


SCALES = ("laboratory", "paper")  # how a lab runs recipes (Lab.recipe_scale)
QUANTIZED_FROM = "quantized-from.json"  # a 4-bit copy's source folder and code book (to compute it again)
REAL_MODELS = "real/"  # model names that resolve to models/real (the fetched checkpoints)
REAL_BASE = "real/smollm2-135m"  # the real pretrained model of the default book


@dataclass(frozen=True)
class Lab:
    """Where a profile's data, models and runs live (`data/<p>`, `models/<p>`, `runs/<p>`)."""

    data: Path
    models: Path
    runs: Path
    runtime: Runtime = Runtime()
    scale_rule: str = "laboratory"  # recipes scaled by `recipes.laboratory_scale`, or "paper": their own numbers
    # model folders of the store this lab wrote or read (what `release` may free), in order
    touched: list = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def for_profile(cls, profile: str, root: str | Path = ".", device: str = "auto", dtype: str = "float32",
                    recipe_scale: str = "laboratory") -> "Lab":
        """The lab of a profile on a device and dtype, running recipes at the laboratory's scale or
        at the paper's own numbers (`recipe_scale="paper"`: the paper profile); the notebooks' entry
        point (sets the process up once)."""
        configure_process()
        if recipe_scale not in SCALES:
            raise ValueError(f"recipe_scale must be one of {', '.join(SCALES)}; got {recipe_scale!r}")
        root = Path(root)
        lab = cls(root / "data" / profile, root / "models" / profile, root / "runs" / profile, Runtime(device, dtype),
                  recipe_scale)
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

    def examples(self, benchmark: str, split: str, model_dir: str | Path | None = None) -> tuple[list, int]:
        """A question-answer split of `benchmark` encoded with the tokenizer of `model_dir` (the
        profile's when None), and that tokenizer's pad id."""
        tokenizer = load_tokenizer(self.tokenizer_for(model_dir) if model_dir else self.tokenizer)
        examples = encode_qa_split(tokenizer, get_benchmark(benchmark).load(self.data / benchmark, split))
        return examples, tokenizer.pad_token_id

    def answer_probability(self, model: str, benchmark: str, split: str) -> float:
        """Mean answer probability exp(-NLL/|y|) of the learned model `model` on a split of a
        question-answer benchmark."""
        examples, pad = self.examples(benchmark, split, self.model(model))
        return float(answer_probability(load_model(self.model(model)), examples, pad).mean())

    def forget_size(self, benchmark: str, forget_split: str | None = None) -> int:
        """Number of records of a benchmark's forget split (it sizes epoch budgets)."""
        spec = get_benchmark(benchmark)
        return len(spec.load(self.data / benchmark, forget_split or spec.forget))

    def steps(self, benchmark: str, epochs: float, batch_size: int, forget_split: str | None = None) -> int:
        """Optimizer steps for `epochs` passes over a benchmark's forget split."""
        n_forget = self.forget_size(benchmark, forget_split)
        return steps_for_epochs(n_forget, n_forget, batch_size, epochs)

    def run(self, benchmark: str, method: str, model: str, protocol: Protocol = Protocol(), *,
            forget_split: str | None = None, stop: "str | StopConfig | None" = None, checkpoints: tuple[int, ...] = (),
            **options) -> dict:
        """The record of one unlearning run from the learned model `model` (computed once, then read
        from the store) under `protocol`: a method that stops by itself (MASC) self-stops, every
        other runs the fixed epoch budget, unless `stop` says otherwise; `options` are `RunSpec`
        fields that replace the protocol's (rule, hparams, max_steps, optim, ...). `record['dir']`
        holds the model, `record['checkpoints']` the weights kept at the steps `checkpoints`."""
        start = self.model(model)
        spec = protocol.spec(benchmark, method, start, self.forget_size(benchmark, forget_split), stop=stop,
                             forget_split=forget_split, **options)
        return self.run_spec(spec, model, checkpoints=checkpoints)

    def units(self, benchmark: str, split: str, model_dir: str | Path, packing: int | None = None) -> int:
        """How many examples a split trains on: its records, or its blocks when packed with the
        tokenizer of the start model `model_dir` (they size epochs, warm-ups and batches)."""
        bench = get_benchmark(benchmark)
        return training_units(self.tokenizer_for(model_dir), bench.load(self.data / benchmark, split), bench.kind, packing)

    def recipe_scale(self, recipe: Recipe, model: str, forget_split: str | None = None,
                     benchmark: str | None = None) -> Scale:
        """The laboratory rule (`recipes.laboratory_scale`) for `recipe` from the learned model
        `model`: its own fine-tuning rate (its learning.json), or the recipe's own rates for a
        real checkpoint and the models fine-tuned from one."""
        if self.scale_rule == "paper":
            return PAPER_SCALE
        benchmark = benchmark or recipe.benchmark
        bench = get_benchmark(benchmark)
        forget = bench.load(self.data / benchmark, forget_split or bench.forget)
        return laboratory_scale(recipe, model_lr=learned_rate(self.model(model)), forget_size=len(forget))

    def recipe_spec(self, recipe: str | Recipe, run_name: str, model: str, *, scale: Scale | None = None,
                    benchmark: str | None = None, **changes) -> RunSpec:
        """The RunSpec of one run of a recipe from the learned model `model`, scaled by the
        laboratory rule (or `scale`), on the recipe's benchmark or `benchmark` (one of the same
        schema: tofu-real for masc/tofu); `changes` are `recipes.Changes` fields (hparams are
        merged over the recipe's)."""
        recipe = load_recipe(recipe) if isinstance(recipe, str) else recipe
        benchmark = benchmark or recipe.benchmark
        forget_split, retain_split = changes.get("forget_split"), changes.get("retain_split")
        scale = scale or self.recipe_scale(recipe, model, forget_split, benchmark)
        bench, start = get_benchmark(benchmark), self.model(model)
        packing = scaled(recipe.run(run_name), scale).packing
        block = packing["block_length"] if packing else None
        n_forget = self.units(benchmark, forget_split or bench.forget, start, block)
        n_retain = self.units(benchmark, retain_split or bench.retain, start, block)
        return recipe.spec(run_name, start, scale, n_forget=n_forget, n_retain=n_retain, changes=Changes(**changes),
                           benchmark=benchmark)

    def recipe_run(self, recipe: str | Recipe, run_name: str, model: str, *, checkpoints: tuple[int, ...] = (),
                   **options) -> dict:
        """The record of one run of a recipe (`recipe_spec`), computed once and read from the store."""
        return self.run_spec(self.recipe_spec(recipe, run_name, model, **options), model, checkpoints=checkpoints)

    def run_spec(self, spec: RunSpec, start: str, *, checkpoints: tuple[int, ...] = ()) -> dict:
        """The record of one run of `spec` (its model the learned model `start`), computed once and
        read from the store: a recipe's spec changed by hand (another optimiser, say)."""
        return self._ran(run(spec, self.data / spec.benchmark, self.tokenizer_for(spec.model), self.runs,
                             runtime=self.runtime, checkpoints=checkpoints), start)

    def _ran(self, record: dict, start: str) -> dict:
        """A run's record with its start model's name, its folders remembered for `release`."""
        if record["dir"] is not None:
            self.touched.append(Path(record["dir"]))
        self.touched.extend(Path(c["dir"]) for c in record.get("checkpoints", []))
        return {**record, "start": start}

    def evaluate(self, benchmark: str, model_dir: str | Path | None, *, oracle: dict | None = None,
                 config: EvalConfig = EvalConfig()) -> dict:
        """The benchmark's metric suite on a model folder (cached beside the model); every metric
        NaN for a run that diverged (`model_dir` None, `evaluate.DivergedMetrics`)."""
        if model_dir is None:
            return DivergedMetrics()
        if is_released(model_dir) and not is_evaluated(benchmark, model_dir, self.data / benchmark, config=config,
                                                       oracle=oracle, runtime=self.runtime):
            self.restore(model_dir)
        return evaluate(benchmark, model_dir, self.data / benchmark, self.tokenizer_for(model_dir), config=config,
                        oracle=oracle, runtime=self.runtime)

    def quantized(self, model_dir: str | Path | None, code: str = "nf4") -> Path | None:
        """A 4-bit copy of a model folder, made once, as a 4-bit deployment would see it: every
        Linear weight rounded to the code's grid (`unlearning.quantize`). Stored under
        `runs/<profile>/quantized/`, keyed by the source weights, the code and the quantizer's code."""
        code_book(code)  # validates the name before any work
        if model_dir is None:  # a diverged run: no model to quantize, its metrics read as diverged
            return None
        source = Path(model_dir)
        key = content_key(weights=weights_hash(source), code=code, quantizer=code_key(quantize_model))
        target = self.runs / "quantized" / f"{key[:16]}-{code}"
        if not (target / "config.json").is_file():
            if is_released(source):
                self.restore(source)
            model = load_model(source)
            quantize_model(model, code=code)
            save_model(model, target, also=lambda path: (copy_tokenizer_files(source, path), write_json(
                Path(path) / QUANTIZED_FROM, {"source": str(source), "code": code})))
        self.touched.append(target)
        return target

    def restore(self, model_dir: str | Path) -> None:
        """Compute again the weights `release` freed: a run's (from its record: the same run gives
        the same bits) or a 4-bit copy's (from its source, itself restored first)."""
        model_dir = Path(model_dir)
        if (model_dir / QUANTIZED_FROM).is_file():
            origin = read_json(model_dir / QUANTIZED_FROM)
            if is_released(origin["source"]):
                self.restore(origin["source"])
            model = load_model(origin["source"])
            quantize_model(model, code=origin["code"])
            save_model(model, model_dir, also=lambda path: (copy_tokenizer_files(origin["source"], path),
                                                             write_json(Path(path) / QUANTIZED_FROM, origin)),
                       keep=("metrics",))
            return
        record_path = model_dir.parent / "record.json"
        if not record_path.is_file():
            raise FileNotFoundError(f"model: the weights of {model_dir} were released and it is not a stored run")
        spec = spec_from_record(read_json(record_path))
        run(spec, self.data / spec.benchmark, self.tokenizer_for(spec.model), self.runs, runtime=self.runtime,
            weights=True)

    def release(self, min_bytes: float = 50e6) -> float:
        """Free the weights of the store's model folders this lab wrote or read whose weights take
        at least `min_bytes` (the real model's runs and 4-bit copies, 270-540 MB each; the tiny
        models' stay, as later chapters read them): their records, hashes and cached evaluations
        stay, and a step that needs the weights again recomputes them (`restore`). The chapters
        on the real model call it at their end, so `make book` keeps gigabytes, not tens of them.
        Returns the gigabytes freed."""
        freed = 0
        for folder in dict.fromkeys(self.touched):
            if sum(f.stat().st_size for f in weight_files(folder)) >= min_bytes:
                freed += release_weights(folder)
        self.touched.clear()
        return freed / 1e9


def oracle_of(benchmark: str, forget_split: str, size: str) -> str:
    """The retain-only oracle model of a benchmark's forget split (TOFU: forget01 ->
    tofu/retain99-<size>); an error for a benchmark without one."""
    rule = get_benchmark(benchmark).oracle
    if rule is None:
        raise ValueError(f"benchmark {benchmark} has no oracle rule")
    return rule(forget_split, size)


def tofu_target(size: str) -> str:
    """TOFU's target at `size`: the model fine-tuned on every author (`Benchmark.target`)."""
    return get_benchmark("tofu").target(size)


def tofu_oracle(forget_split: str, size: str) -> str:
    """TOFU's retain-only oracle of a forget split (`oracle_of('tofu', ...)`)."""
    return oracle_of("tofu", forget_split, size)


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
    rate), every grid point's metrics (`rows`, with `chosen` marked and its per-item scores under
    `items`) and the choice rule in words."""

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
        frame = pd.DataFrame(self.rows).drop(columns="items", errors="ignore")  # per-item scores: for intervals only
        return frame.style.format(precision=3, na_rep=DIVERGED).format({"lr": "{:g}"}, na_rep=DIVERGED)


def tofu_run(lab: Lab, method: str, target: str, forget_split: str, *, tuned: "Tuned | None" = None,
             checkpoints: tuple[int, ...] = (), scale: Scale | None = None, **options) -> dict:
    """A TOFU chapter's run of `method` from `target`: its paper's recipe (`tofu_recipe`) under
    `scale` (its calibration's; None: the laboratory rule), or for RMU (beyond the paper) the
    settings `tuned` chose under the book's protocol, where `scale` does not enter. Weights are kept
    at `checkpoints` for the full fine-tunes (MASC trains LoRA adapters and ends at its own stop)."""
    if method == "RMU":
        if tuned is None:
            raise ValueError("RMU runs with the settings its tuning chose: pass tuned=tune_rmu_on_tofu(...)")
        return lab.run("tofu", method, target, tuned.protocol, forget_split=forget_split, hparams=tuned.hparams,
                            checkpoints=checkpoints, **options)
    return lab.recipe_run(tofu_recipe(method), method, target, forget_split=forget_split,
                          checkpoints=() if method == "MASC" else checkpoints, scale=scale, **options)


def tune_rmu(lab: Lab, benchmark: str, model: str, protocol: Protocol = Protocol(), *, forget_metric: str,
             retain_metric: str, forget_split: str | None = None, config: EvalConfig = EvalConfig(),
             oracle: dict | None = None, grid: dict = RMU_GRID, max_retain_drop: float = 0.05) -> Tuned:
    """RMU's steering multiple, retain weight and learning rate for one start model, chosen as the
    RMU paper chooses them: the run that lowers the forget metric most (`forget_metric`, lower is
    better) among those whose retain metric (`retain_metric`, higher is better) stays within
    `max_retain_drop` of the start model's; when none does, the one that keeps the retain metric
    best. Every grid run and evaluation is cached, so chapters that ask again pay nothing, and the
    chosen run is the one `lab.run(..., tuned.protocol, hparams=tuned.hparams)` returns."""
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
                record = lab.run(benchmark, "RMU", model, run_protocol, forget_split=forget_split, hparams=hparams)
                metrics = lab.evaluate(benchmark, record["dir"], config=config, oracle=oracle)
                settings.append((hparams, run_protocol))
                rows.append({"steering x norm": float(steering), "alpha": float(alpha), "lr": run_protocol.lr,
                             forget_metric: metrics[forget_metric], retain_metric: metrics[retain_metric],
                             "eligible": bool(metrics[retain_metric] >= floor), "chosen": False,
                             "items": metrics.get("items")})
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
    return tune_rmu(lab, "tofu", tofu_target(size), protocol, forget_metric="forget_Q_A_ROUGE",
                    retain_metric="retain_Q_A_ROUGE", forget_split=forget_split, config=config, oracle=oracle, grid=grid)
