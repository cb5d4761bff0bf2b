"""Each paper's recipes as data, and the one rule that scales a recipe to a laboratory model.

A recipe is one YAML file beside this module, one per paper and benchmark (`masc/tofu`,
`openunlearning/tofu`, `sago/wmdp-bio`, ...): for every run it names the method and update rule,
the optimiser (rate, weight decay and its groups, schedule, clipping, batch), the warm-up, the
budget, the stopping rule, LoRA, the corpus packing and the method's settings, and `sources` gives,
for every value, the official file and flag (or the paper section) it comes from; a value the
official code does not release says so, with the choice made. `tests/unlearning/test_recipes.py` pins every
value against a table written out from the official scripts.

    recipe = load("masc/tofu")
    scale = laboratory_scale(recipe, model_lr=2e-3, forget_size=100)   # or PAPER_SCALE
    spec = recipe.spec("MASC", "models/mini/tofu/target-s", scale, n_forget=100, n_retain=900)

`laboratory_scale` is the rule, stated once (`Scale.describe` prints it on every chapter that
uses it): learning rates times the ratio of the start model's own fine-tuning rate to the paper's
start model's; the global batch times the ratio of the forget-set sizes (at least one example),
so that an epoch has the paper's number of steps; a packed corpus in blocks of the laboratory's
length; epochs, step budgets, warm-up shares, stopping rules and method settings unchanged. So the
recipes' ratios (MASC's rate and budget against the baselines', SAGO's against PCGrad's) hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import yaml

from unlearning.engine import OptimConfig, steps_for_epochs
from unlearning.methods import get_method
from unlearning.records import read_json
from unlearning.runs import RunSpec
from unlearning.stopping import StopConfig

RECIPES_DIR = Path(__file__).parent
LABORATORY_BLOCK = 64  # tokens per packed block in the laboratory (see `laboratory_scale`)
RUN_FIELDS = ("method", "rule", "optim", "warmup", "budget", "stop", "hparams", "lora", "packing", "beyond_paper")
OPTIM_FIELDS = ("optimizer", "lr", "weight_decay", "decay_groups", "schedule", "max_grad_norm", "batch_size")


@dataclass(frozen=True)
class RunRecipe:
    """One official run: its method and rule and every setting its trainer used (paper scale).
    `optim["batch_size"]` is the global batch (examples or blocks per optimizer step)."""

    name: str
    method: str
    optim: dict
    budget: dict  # {"epochs": E, "anchor": "forget" | "max"} or {"steps": N}
    stop: dict  # {"kind": "fixed"} or the violation rule's {"kind", "tolerance", "every", "trigger_size", "confirm_size"}
    hparams: dict
    rule: str = "sum"
    warmup: dict | None = None  # {"epochs": E} (OpenUnlearning) or {"ratio": R} (the HF Trainer's warmup_ratio)
    lora: dict | None = None  # keyword arguments of models.add_lora
    packing: dict | None = None  # {"block_length": L}: SAGO's PretrainingDataset (data.pack_corpus)
    beyond_paper: bool = False  # a run the paper does not show, run with its trainer's settings


@dataclass(frozen=True)
class Scale:
    """How a recipe's numbers become a run's: `lr_factor` multiplies every learning rate,
    `size_factor` (None: the paper's forget-set size is not released) the global batch, and a
    packed corpus is cut into `block_length`-token blocks (None: the recipe's)."""

    lr_factor: float = 1.0
    size_factor: float | None = 1.0
    block_length: int | None = None
    why: str = "the paper's own numbers"

    def batch(self, paper_batch: int) -> int:
        """The global batch of a run: the paper's times the size ratio, at least 1; one example
        (or block) where the paper's forget-set size is unknown."""
        if self.size_factor is None:
            return 1
        return max(1, round(paper_batch * self.size_factor))

    def describe(self) -> str:
        """The rule in one sentence, with its factors (printed by every chapter that uses it)."""
        if self == PAPER_SCALE:
            return "Recipes run at the paper's own numbers (no scaling)."
        batch = ("the global batch x the ratio of forget-set sizes " + (f"({self.size_factor:.3g})" if self.size_factor
                 is not None else "(the paper's is not released: one example or block per step)") + ", at least 1")
        block = f"; corpora packed into {self.block_length}-token blocks" if self.block_length else ""
        return (f"Scaling rule: every learning rate x {self.lr_factor:g} ({self.why}); {batch}{block}; epochs, step "
                "budgets, warm-up shares, stopping rules and method settings as the recipe, so its ratios hold.")


PAPER_SCALE = Scale()


@dataclass(frozen=True)
class Recipe:
    """One paper's runs on one benchmark (a YAML file of this folder), with their sources."""

    name: str
    title: str
    paper: str
    benchmark: str
    scale_from: dict | None  # the paper's start model: {"finetune_lr": ..., "forget_size": ... or None}
    runs: dict[str, RunRecipe]
    sources: dict[str, str] = field(default_factory=dict)

    def run(self, name: str) -> RunRecipe:
        if name not in self.runs:
            raise ValueError(f"recipe {self.name} has no run {name!r}; it has {', '.join(self.runs)}")
        return self.runs[name]

    def source(self, run: str, key: str) -> str | None:
        """Where a value comes from: the most specific entry of `sources` for `run.key` (the key
        itself, then its parents; `*.` entries hold for every run)."""
        parts = key.split(".")
        for depth in range(len(parts), 0, -1):
            for prefix in (run, "*"):
                found = self.sources.get(".".join([prefix, *parts[:depth]]))
                if found is not None:
                    return found
        return None

    def spec(self, run: str, model: str | Path, scale: Scale, *, n_forget: int, n_retain: int,
             changes: "Changes | None" = None, benchmark: str | None = None) -> RunSpec:
        """The `runs.RunSpec` of one run of this recipe from `model` under `scale` (`build_spec`),
        on the recipe's benchmark or `benchmark` (one of the same schema: tofu-real for masc/tofu)."""
        return build_spec(self.run(run), benchmark or self.benchmark, model, scale, n_forget=n_forget,
                          n_retain=n_retain, changes=changes or Changes())


# the most a count of `Changes` may be: a larger one is a typing mistake
MOST = {"batch_size": 4096, "grad_accum": 4096, "max_steps": 1_000_000}


class InvalidChange(ValueError):
    """A value of `Changes` out of its range; `named(flag)` says it under the flag a user typed."""

    def __init__(self, name: str, requirement: str, value) -> None:
        self.name, self.requirement, self.value = name, requirement, value
        super().__init__(self.named(name))

    def named(self, name: str) -> str:
        return f"{name} must be {self.requirement}, got {self.value!r}"


@dataclass(frozen=True)
class Changes:
    """What a caller changes in a recipe run (the command line's flags, a chapter's variations);
    None keeps the recipe's value. Every value is checked here, where it enters `build_spec`.

    `batch_size` replaces the global batch (examples per optimizer step, after scaling), which
    `grad_accum` micro-batches on each of `processes` processes share; `max_steps` replaces the
    budget by a step count, `epochs` by passes over the forget set; `stop` replaces the stopping
    rule (a kind, with the recipe's settings when it is the recipe's kind, or a whole StopConfig)
    and `tolerance` its tolerance; `lora` replaces the recipe's adapters and `lora_rank` their
    rank; `hparams` are merged over the recipe's; `lr`, `optimizer` and
    `optim` (any other optimiser values) replace the scaled optimiser's; an `OptimConfig` as
    `optim` is the run's optimiser as it stands (the budget still counts the recipe's batch)."""

    lr: float | None = None
    batch_size: int | None = None
    grad_accum: int = 1
    processes: int = 1
    epochs: float | None = None
    max_steps: int | None = None
    optimizer: str | None = None
    optim: "dict | OptimConfig" = field(default_factory=dict)
    rule: str | None = None
    stop: "str | StopConfig | None" = None
    tolerance: float | None = None
    hparams: dict = field(default_factory=dict)
    seed: int | None = None
    probe_set: str | None = None
    lora: dict | None = None
    lora_rank: int | None = None
    forget_split: str | None = None
    retain_split: str | None = None
    record_geometry: bool | None = None

    def __post_init__(self) -> None:
        for name in ("batch_size", "grad_accum", "processes", "max_steps", "lora_rank"):
            value = getattr(self, name)
            most = MOST.get(name, math.inf)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most):
                raise InvalidChange(name, "an integer >= 1" + (f" and at most {most}" if name in MOST else ""), value)
        for name in ("lr", "epochs"):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise InvalidChange(name, "a finite number > 0", value)


def build_spec(run: RunRecipe, benchmark: str, model: str | Path, scale: Scale, *, n_forget: int, n_retain: int,
               changes: Changes = Changes()) -> RunSpec:
    """The one place a run's specification is made: the recipe run under `scale`, with `changes`.
    `n_forget` and `n_retain` are the sizes of the forget and retain sets as trained on (blocks
    when packed), which size epochs and warm-ups. The book's protocol (`protocol.Protocol`), a
    paper's recipe, the command line and the chapters all come here."""
    settings = _changed(scaled(run, scale), changes)
    split = changes.grad_accum * changes.processes
    if settings.optim["batch_size"] % split:
        raise ValueError(f"grad_accum: the global batch of {settings.optim['batch_size']} does not split into "
                         f"{changes.grad_accum} micro-batches on each of {changes.processes} process(es)")
    stop = changes.stop if isinstance(changes.stop, StopConfig) else StopConfig(**settings.stop)
    if changes.tolerance is not None:
        stop = replace(stop, tolerance=changes.tolerance)
    lora = changes.lora if changes.lora is not None else settings.lora
    lora = lora if changes.lora_rank is None else {**(lora or {}), "r": changes.lora_rank}
    given = {name: getattr(changes, name) for name in ("seed", "probe_set", "forget_split", "retain_split",
                                                      "record_geometry") if getattr(changes, name) is not None}
    optim = changes.optim if isinstance(changes.optim, OptimConfig) else replace(
        optim_config(settings, n_forget, n_retain), batch_size=settings.optim["batch_size"] // split,
        grad_accum=changes.grad_accum)
    return RunSpec(benchmark, settings.method, str(model), rule=changes.rule or settings.rule,
                   hparams={**settings.hparams, **changes.hparams}, stop=stop,
                   max_steps=budget_steps(settings, n_forget, n_retain), optim=optim, lora=lora,
                   packing=(settings.packing or {}).get("block_length"), **given)


def _changed(run: RunRecipe, changes: Changes) -> RunRecipe:
    """The (scaled) recipe run with the budget, optimiser and stopping kind of `changes`."""
    budget = ({"steps": changes.max_steps} if changes.max_steps is not None else
              {"epochs": changes.epochs, "anchor": "forget"} if changes.epochs is not None else run.budget)
    named = {"lr": changes.lr, "batch_size": changes.batch_size, "optimizer": changes.optimizer}
    some = changes.optim if isinstance(changes.optim, dict) else {}
    optim = {**run.optim, **some, **{k: v for k, v in named.items() if v is not None}}
    stop = run.stop
    if isinstance(changes.stop, str) and changes.stop != run.stop["kind"]:
        stop = {"kind": changes.stop}
    return replace(run, budget=budget, optim=optim, stop=stop)


def scaled(run: RunRecipe, scale: Scale) -> RunRecipe:
    """The run under the laboratory rule (`Scale`): rates, global batch and block length scaled,
    everything else as the recipe."""
    optim = {**run.optim, "lr": run.optim["lr"] * scale.lr_factor, "batch_size": scale.batch(run.optim["batch_size"])}
    packing = run.packing
    if packing is not None and scale.block_length is not None:
        packing = {**packing, "block_length": scale.block_length}
    return replace(run, optim=optim, packing=packing)


def budget_steps(run: RunRecipe, n_forget: int, n_retain: int) -> int:
    """Optimizer steps of the run's budget: its step count, or its epochs over the forget set
    (OpenUnlearning, SAGO's RWKU) or over the longer loader (the MASC code, `anchor: max`)."""
    if "steps" in run.budget:
        return int(run.budget["steps"])
    return steps_for_epochs(n_forget, n_retain, run.optim["batch_size"], run.budget["epochs"], run.budget["anchor"])


def warmup_steps(run: RunRecipe, n_forget: int, n_retain: int) -> int:
    """Warm-up steps: OpenUnlearning's `int(warmup_epochs * len(forget) // global batch)`, or the
    HF Trainer's `ceil(warmup_ratio * total steps)`, or none."""
    if run.warmup is None:
        return 0
    if "epochs" in run.warmup:
        return int(run.warmup["epochs"] * n_forget // run.optim["batch_size"])
    return math.ceil(run.warmup["ratio"] * budget_steps(run, n_forget, n_retain))


def optim_config(run: RunRecipe, n_forget: int, n_retain: int) -> OptimConfig:
    """The engine's `OptimConfig` of a (scaled) run: one micro-batch of the global batch."""
    o = run.optim
    return OptimConfig(lr=o["lr"], weight_decay=o["weight_decay"], batch_size=o["batch_size"],
                       max_grad_norm=o["max_grad_norm"], optimizer=o["optimizer"], schedule=o["schedule"],
                       warmup_steps=warmup_steps(run, n_forget, n_retain), decay_groups=o["decay_groups"])


def laboratory_scale(recipe: Recipe, *, model_lr: float | None, forget_size: int,
                     block_length: int | None = LABORATORY_BLOCK) -> Scale:
    """The laboratory rule for a recipe run from a model that learned its facts at `model_lr`
    (None: a real pretrained checkpoint, which runs the recipe's own rates) on a forget set of
    `forget_size` examples (or blocks).

    Rates: the papers' recipes are for 7B models fine-tuned at about 1e-5, while the laboratory's
    tiny models learned their facts at about 2e-3: every rate is multiplied by the ratio of the two
    fine-tuning rates. Batches: times the ratio of the forget-set sizes, so an epoch has the paper's
    number of steps. Blocks: `block_length` tokens (64 by default; the laboratory's corpora hold a
    few thousand tokens, so the papers' 512-token blocks would leave a handful of blocks and an
    epoch of a handful of steps)."""
    if recipe.scale_from is None:  # a recipe for every model (the book's protocol)
        return PAPER_SCALE
    paper_lr, paper_size = recipe.scale_from["finetune_lr"], recipe.scale_from.get("forget_size")
    if model_lr is None:
        factor, why = 1.0, "a real pretrained checkpoint runs the recipe's own rates"
    else:
        if not model_lr > 0:
            raise ValueError(f"model_lr must be > 0, got {model_lr!r}")
        factor, why = model_lr / paper_lr, f"the start model's fine-tuning rate {model_lr:g} / the paper's {paper_lr:g}"
    size = None if not paper_size else forget_size / paper_size
    has_packing = any(run.packing for run in recipe.runs.values())
    return Scale(lr_factor=factor, size_factor=size, block_length=block_length if has_packing else None, why=why)


def learned_rate(model_dir: Path) -> float | None:
    """The rate at which a learned model took in its facts (its `learning.json`), which the
    laboratory rule scales the recipe's rates by; None for a real checkpoint or a base model
    (those run the recipe's own rates)."""
    info = Path(model_dir) / "learning.json"
    learned = read_json(info) if info.is_file() else None
    return None if learned is None or learned.get("base") else float(learned["train"]["lr"])


def names() -> list[str]:
    """Every recipe of this folder, e.g. ['masc/muse-books', 'masc/muse-news', ...]."""
    return sorted(str(p.relative_to(RECIPES_DIR).with_suffix("")) for p in RECIPES_DIR.glob("*/*.yaml"))


PROTOCOL = "book/protocol"  # the book's shared protocol, `unlearning unlearn`'s default (`protocol_run`)


def protocol_run(method: str, stop_kind: str | None = None) -> RunRecipe:
    """The book's protocol's run of `method` (the recipe `book/protocol`): the file's run of the
    stopping kind `stop_kind`, the method's own when None (violation for MASC, fixed otherwise)."""
    kind = StopConfig(stop_kind or get_method(method).default_stop).kind  # checked once, by StopConfig
    return replace(_protocol_recipe().run(kind), method=method)


@lru_cache(maxsize=1)
def _protocol_recipe() -> Recipe:
    """The protocol's recipe, read and checked once per process (every chapter run asks for it)."""
    return load(PROTOCOL)


def load(name: str) -> Recipe:
    """The recipe `name` (e.g. 'masc/tofu'), checked: known fields only, every value with a source."""
    path = RECIPES_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"recipe must be one of {', '.join(names())}; got {name!r}")
    raw = yaml.safe_load(path.read_text())
    runs = {}
    for key, fields in raw["runs"].items():
        unknown = sorted(set(fields) - set(RUN_FIELDS))
        if unknown or set(fields["optim"]) != set(OPTIM_FIELDS):
            raise ValueError(f"recipe {name}, run {key}: unknown fields {unknown} or optim fields "
                             f"{sorted(fields['optim'])} (expected {', '.join(OPTIM_FIELDS)})")
        for number in ("lr", "weight_decay", "batch_size"):
            value = fields["optim"][number]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"recipe {name}, run {key}: optim.{number} must be a number, got {value!r} "
                                 "(YAML reads 1e-5 as text: write 1.0e-5)")
        runs[key] = RunRecipe(name=key, **fields)
    recipe = Recipe(name=name, title=raw["title"], paper=raw["paper"], benchmark=raw["benchmark"],
                    scale_from=raw["scale_from"], runs=runs, sources=raw.get("sources", {}))
    missing = [f"{run}.{key}" for run, key in value_keys(recipe) if recipe.source(run, key) is None]
    if missing:
        raise ValueError(f"recipe {name}: no source for {', '.join(missing)}")
    return recipe


def value_keys(recipe: Recipe) -> list[tuple[str, str]]:
    """(run, dotted key) of every value of every run: the leaves that need a source."""
    out = []

    def walk(run: str, prefix: str, value) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(run, f"{prefix}.{k}" if prefix else k, v)
        else:
            out.append((run, prefix))

    for run in recipe.runs.values():
        for name in RUN_FIELDS:
            if name != "beyond_paper":
                walk(run.name, name, getattr(run, name))
    return out
