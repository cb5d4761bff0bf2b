"""The SAGO paper's comparisons (arXiv 2604.14808), as chapters 10, 11, 12 and 15 build them.

- the grid (sago.md s. 9-11): each forget objective with a GD retain term under every update rule,
  and forget-only, each run with its own official settings (`sago_grid`, `sago_run_name`), and what
  SAGO keeps over PCGrad (`sago_gains`);
- WMDP (main table, Fig. 3, the granularity ablation): every objective under every update rule per
  split, the recovery of the target's MMLU, the metrics that cannot move (`flat_wmdp_metrics`) and
  the verdicts (`WmdpVerdicts`);
- RWKU (Fig. 4): the grid with RWKU's forget and neighbour summaries (`rwku_grid`), the forget
  levels the target hardly recalls (`flat_rwku_metrics`) and the table of every number.
"""

from __future__ import annotations

import pandas as pd

from experiments import verdicts
from experiments.calibration import Check, calibration, check, run_points, unjudged
from experiments.claims import record
from experiments.floors import mark, near_level
from experiments.intervals import mean_items, metric_difference, metric_value, with_seeds
from experiments.lab import Lab
from unlearning.benchmarks import EvalConfig, get_benchmark
from unlearning.benchmarks.rwku import FORGET_METRICS, TABLE_COLUMNS, summarise
from unlearning.benchmarks.wmdp import FOUR_CHOICE_CHANCE
from unlearning.methods import method_name
from unlearning.metrics.choice import recovery_percent
from unlearning.recipes import Recipe, Scale
from unlearning.recipes import load as load_recipe

GRANULARITY = ("pcgrad_global", "pcgrad", "sago")  # coarse to fine: one gate, one per module, one per coordinate
WMDP_COLUMNS = {"forget": "WMDP (own split)", "mmlu_accuracy": "MMLU", "recovery %": "recovery %", "alpha": "alpha"}


# the SAGO paper's grid (sago.md s. 9-11): three forget objectives with a GD retain term, each
# also run forget-only, under four update rules, each run with its official settings (the recipes
# sago/wmdp-bio, sago/wmdp-cyber and sago/rwku)
SAGO_OBJECTIVES = ("GradDiff", "NPO+GD", "SimNPO+GD")
FORGET_ONLY = {"GradDiff": "GA", "NPO+GD": "NPO", "SimNPO+GD": "SimNPO"}
SAGO_RULES = ("sum", "pcgrad_global", "pcgrad", "sago")


def sago_run_name(recipe: Recipe, objective: str, rule: str | None) -> tuple[str, str]:
    """The recipe's run for `objective` under `rule` (None: its forget-only variant), and a note
    when the recipe has none: a rule without an official configuration for this objective (SAGO
    releases global PCGrad for GA+GD only) runs with the objective's module-wise PCGrad settings."""
    if rule is None:
        return FORGET_ONLY[objective], ""
    name = f"{objective}/{rule}"
    if name in recipe.runs:
        return name, ""
    if rule == "pcgrad_global" and f"{objective}/pcgrad" in recipe.runs:
        return f"{objective}/pcgrad", f"no official {name}: {objective}/pcgrad's settings"
    raise ValueError(f"recipe {recipe.name} has no run for {name}")


def sago_grid(lab: Lab, benchmark: str, model: str, objectives=SAGO_OBJECTIVES, rules=SAGO_RULES, *,
              recipe: str | Recipe, forget_split: str | None = None, retain_split: str | None = None,
              retain_weights=(None,), evaluate_config: EvalConfig = EvalConfig(), scale: Scale | None = None,
              record_geometry: bool = True, forget_only: bool = True, forget_metric: str | None = None, **options):
    """Every (objective, rule, retain weight) run of the SAGO paper's grid, plus each
    objective's forget-only variant (unless `forget_only` is False), each with the settings of its run in `recipe` (per rule: the
    official rates, budgets and weights differ), and its metrics: one dict per run.

    Each run's rate is `scale`, or when None its calibration on `model` at the recipe's weights
    (`experiments.calibration`: `forget_metric` names the forget metric it reports, the
    benchmark's when None), which every retain weight of the sweep then shares; `factor` gives it.
    `retain_weights` sweeps alpha (None: the recipe's); geometry is recorded on every run with a
    retain term unless `record_geometry` is False (it compares four rules on every step's gradients:
    seconds a step on the real model), so the geometry chapter reads the same runs; `options` go to every RunSpec
    (e.g. `max_steps`, to cap the budgets).
    """
    recipe = load_recipe(recipe) if isinstance(recipe, str) else recipe
    splits = dict(benchmark=benchmark, forget_split=forget_split, retain_split=retain_split, **options)

    seedless = {k: v for k, v in options.items() if k != "seed"}  # one calibration serves every seed

    def scale_of(name: str, **changes) -> Scale:
        """The run's scale: `scale` when given, else its calibration."""
        return scale or calibration(lab, recipe.name, name, model, split=forget_split, forget=forget_metric,
                                    retain_split=retain_split, **seedless, **changes).scale

    start = lab.evaluate(benchmark, lab.model(model), config=evaluate_config)

    def checked(name: str, record: dict) -> dict:
        """The run's check before a chapter judges it (`calibration.check`) and its final metrics."""
        points = run_points(lab, benchmark, record, evaluate_config, None)
        return {"check": check(name, points, start, benchmark, forget_metric), **points[-1][1]}

    rows, where = [], f", {forget_split}" if forget_split else ""
    for objective in objectives:
        if forget_only:
            name, _ = sago_run_name(recipe, objective, None)
            chosen = scale_of(name, benchmark=benchmark)
            plain = lab.recipe_run(recipe, name, model, scale=chosen, **splits)
            rows.append({"objective": objective, "variant": "forget-only", "rule": "-", "alpha": 0.0, "recipe": name,
                         "factor": chosen.lr_factor, "run": plain, **checked(name + where, plain)})
        for rule in rules:
            name, note = sago_run_name(recipe, objective, rule)
            chosen = scale_of(name, benchmark=benchmark, rule=rule, record_geometry=record_geometry)
            for alpha in retain_weights:
                hparams = {} if alpha is None else {"alpha": alpha}
                run_record = lab.recipe_run(recipe, name, model, rule=rule, hparams=hparams, scale=chosen,
                                            record_geometry=record_geometry, **splits)
                variant = "+GD" if rule == "sum" else f"+GD+{rule}"
                rows.append({"objective": objective, "variant": variant, "rule": rule, "recipe": name + (
                             f" ({note})" if note else ""), "alpha": run_record["hparams"]["alpha"],
                             "factor": chosen.lr_factor, "run": run_record, **checked(
                                 name + ("" if name.endswith(rule) else f" as {rule}")
                                 + (f", alpha {alpha:g}" if alpha is not None else "") + where, run_record)})
    return rows


def sago_gains(results, objectives, retain: str = "neighbour") -> list[dict]:
    """Per objective with +GD, PCGrad and SAGO runs: its `retain` metric under each rule, SAGO -
    PCGrad in points (x100) and both rules' forget metric: the numbers of the SAGO paper's "SAGO
    keeps more" claim. `results` has columns objective, rule, forget and `retain`."""
    gains = []
    for objective in objectives:
        part = results[results.objective == objective].set_index("rule")
        if {"sum", "pcgrad", "sago"} <= set(part.index):
            gains.append({"objective": method_name(objective, "sago"), "key": objective,
                          **{rule: float(part.loc[rule, retain]) for rule in ("sum", "pcgrad", "sago")},
                          "points": 100 * float(part.loc["sago", retain] - part.loc["pcgrad", retain]),
                          "forget_pcgrad": float(part.loc["pcgrad", "forget"]),
                          "forget_sago": float(part.loc["sago", "forget"])})
    return gains


def rwku_differences(results, objectives, benchmark: str = "rwku", over_seeds=None) -> dict:
    """Per objective of `sago_gains`: SAGO minus PCGrad on RWKU's neighbour and forget summaries,
    each with its paired 95 % interval over the same probes (`intervals.metric_difference`). Where
    `over_seeds` (`rules_over_seeds`) reran an objective's two rules, the difference is of the
    probes' means over the seeds, widened by the seed spread of each rule's summary
    (`intervals.with_seeds`). Objective label -> (neighbour gain, forget difference)."""
    statistics, out = get_benchmark(benchmark).statistics, {}
    for gain in sago_gains(results, objectives):
        part = results[results.objective == gain["key"]].set_index("rule")
        rows = {rule: part.loc[rule] for rule in ("pcgrad", "sago")}
        seeded = over_seeds is not None and gain["key"] == over_seeds.attrs.get("objective")
        if seeded:
            rows = {rule: {"items": mean_items(list(over_seeds.loc[rule, "items"]))} for rule in rows}
        pair = []
        for summary in ("neighbour", "forget"):
            d = metric_difference(rows["sago"], rows["pcgrad"], statistics[summary])
            if seeded:
                d = with_seeds(d, list(over_seeds.loc["sago", summary]), list(over_seeds.loc["pcgrad", summary]))
            pair.append(d)
        out[gain["objective"]] = tuple(pair)
    return out


def differences_text(differences: dict) -> str:
    """`rwku_differences` in words: SAGO - PCGrad on both summaries with their 95 % intervals."""
    return "; ".join(f"{label}: neighbour {gain.text()}, forget {forget.text()}"
                     for label, (gain, forget) in differences.items()) or "no +GD/PCGrad/SAGO triple"


def sago_versus_pcgrad(results, objectives, retain: str = "neighbour") -> list[str]:
    """One sentence per objective of `sago_gains`: the +GD, PCGrad and SAGO `retain` values,
    SAGO - PCGrad in points and both rules' forget metric."""
    return [f"{g['objective']}: {retain} {g['sum']:.2f} (+GD) / {g['pcgrad']:.2f} (PCGrad) / {g['sago']:.2f} (SAGO), "
            f"SAGO - PCGrad = {g['points']:+.1f} points, forget {g['forget_pcgrad']:.2f} vs {g['forget_sago']:.2f}"
            for g in sago_gains(results, objectives, retain)]


def wmdp_grid(lab: Lab, base: str, split: str, objectives, target: dict, **options):
    """The SAGO grid (`sago_grid`) of one WMDP split from the model `base` with the
    split's recipe and corpora: a row per run, `forget` the split's own four-choice accuracy and
    `recovery %` its MMLU against the target's (`target`: the base model's evaluation)."""
    frame = pd.DataFrame(sago_grid(lab, "wmdp", base, objectives, recipe=f"sago/wmdp-{split}",
                                   forget_split=f"{split}-forget-corpus", retain_split=f"{split}-retain-corpus",
                                   forget_metric=f"wmdp-{split}_accuracy", **options)).drop(columns="run")
    frame.insert(0, "split", split)
    frame["forget"] = frame[f"wmdp-{split}_accuracy"]
    frame["recovery %"] = [recovery_percent(m, target["mmlu_accuracy"]) for m in frame["mmlu_accuracy"]]
    return frame


def flat_wmdp_metrics(target: dict) -> dict[str, str]:
    """The accuracies the target cannot be told from chance on: the 95 % interval of its accuracy
    over its questions (`intervals.metric_value`, one question's step as its floor) covers 1/4.
    Nothing to unlearn there, no signal (`floors.near_level`)."""
    flat = {}
    for column in ("wmdp-bio_accuracy", "wmdp-cyber_accuracy", "mmlu_accuracy"):
        name = column.replace("_accuracy", "")
        flat.update(near_level(accuracy(target, column), FOUR_CHOICE_CHANCE, column, name.replace("wmdp", "WMDP"),
                               "chance, 1/4"))
    return flat


def _quantum(metrics, column: str) -> float:
    """One question of the set behind an accuracy column: the step of its scale."""
    items = metrics["items"][column.removesuffix("_accuracy")]["correct"]
    return 1 / max(len(items), 1)


def accuracy(metrics, column: str):
    """An accuracy of a WMDP evaluation with its 95 % interval over its questions."""
    return metric_value(metrics, get_benchmark("wmdp").statistics[column], quantum=_quantum(metrics, column))


def accuracy_difference(a, b, column: str):
    """a - b on an accuracy of two WMDP evaluations on the same questions (paired interval, one
    question's step as its floor)."""
    return metric_difference(a, b, get_benchmark("wmdp").statistics[column], quantum=_quantum(a, column))


def wmdp_table(main, flat: dict, splits):
    """The main table (a row per split, objective and variant) with the columns that cannot move
    marked; the note names them (and any flat metric the table does not show). Returns (table, note)."""
    table = main.set_index(["split", "objective", "variant"])[list(WMDP_COLUMNS)].rename(columns=WMDP_COLUMNS)
    shown = {"mmlu_accuracy": "MMLU"} | ({"forget": "WMDP (own split)"} if all(
        f"wmdp-{split}_accuracy" in flat for split in splits) else {})
    table, note = mark(table, {k: v for k, v in flat.items() if k in shown}, shown,
                       elsewhere="Knowledge with signal, on a real pretrained model: {doc}`14-tofu-real`.")
    return table, note + " ".join(f" {v}" for k, v in flat.items() if k not in shown)


def granularity_table(main):
    """MMLU per split and objective under each rule, plain summation then coarse to fine."""
    gran = main[main.rule.isin(["sum", *GRANULARITY])]
    return gran.pivot_table(index=["split", "objective"], columns="rule", values="mmlu_accuracy")[["sum", *GRANULARITY]]


def collapsed_runs(part, rules) -> str:
    """Why a WMDP comparison of `rules` (rows of `part`, by rule) cannot stand for the methods ("" when
    it can): a run whose MMLU cannot be told from chance (its interval over the questions does not
    lie above 1/4) lost its utility altogether, unlike the SAGO paper's runs, and no verdict rests
    on a collapsed run, nor on one that failed its check before judging."""
    low = [r for r in rules if not accuracy(part.loc[r], "mmlu_accuracy").above(FOUR_CHOICE_CHANCE)]
    if not low:  # the check before judging (`calibration.unjudged`), where the rows carry one
        return unjudged([c for c in (part.loc[r].get("check") for r in rules) if isinstance(c, Check)])
    return (f"MMLU of {', '.join(low)} cannot be told from chance ("
            + ", ".join(f"{r} {accuracy(part.loc[r], 'mmlu_accuracy').text(3, signed=False)}" for r in low)
            + "): a collapsed run, not the method as its paper reports it")


class WmdpVerdicts:
    """The SAGO paper's WMDP claims on one grid: utility recovered by PCGrad and SAGO over +GD at no
    weaker forgetting (`verdicts.utility_recovered`), and retention ordered by granularity
    (`verdicts.ordered_by_granularity`), each difference of two runs' accuracies with its paired
    95 % interval over the same questions (`accuracy_difference`)."""

    def __init__(self, main, target: dict, flat: dict, splits, objectives):
        self.main, self.target, self.splits = main, target, list(splits)
        self.cases = [(split, o) for split in splits for o in objectives]
        self.recovery = {}
        for split, objective in self.cases:
            part, column = self.part(split, objective), f"wmdp-{split}_accuracy"
            no_signal = (verdicts.knowledge_to_remove(accuracy(target, column), FOUR_CHOICE_CHANCE)
                         or flat.get("mmlu_accuracy", "") or collapsed_runs(part, ("sum", "pcgrad", "sago")))
            self.recovery[split, objective] = verdicts.utility_recovered(
                {r: (accuracy_difference(part.loc[r], part.loc["sum"], "mmlu_accuracy"),
                     accuracy_difference(part.loc[r], part.loc["sum"], column)) for r in ("pcgrad", "sago")},
                no_signal=no_signal)
        self.granularity = {}
        for case in granularity_table(main).index:
            part, column = self.part(*case), f"wmdp-{case[0]}_accuracy"
            global_, module, sago = (part.loc[r] for r in GRANULARITY)
            collapse = collapsed_runs(part, GRANULARITY)
            if collapse:
                self.granularity[case] = verdicts.Verdict(verdicts.CANNOT_TELL, collapse)
                continue
            self.granularity[case] = verdicts.ordered_by_granularity(
                [accuracy_difference(module, global_, "mmlu_accuracy"), accuracy_difference(sago, module, "mmlu_accuracy")],
                accuracy_difference(sago, global_, "mmlu_accuracy"),
                [accuracy_difference(x, y, column) for x, y in ((module, global_), (sago, module), (sago, global_))])

    def part(self, split: str, objective: str):
        """One split's runs of one objective, by rule."""
        return self.main[(self.main.split == split) & (self.main.objective == objective)].set_index("rule")

    @staticmethod
    def label(case) -> str:
        return f"{case[0]} {method_name(case[1], 'sago')}"

    def measured(self, split: str, objective: str) -> str:
        """The recovery under +GD, PCGrad and SAGO and the forget accuracy of each, in one line."""
        part = self.part(split, objective)
        naive, pc, sago = part.loc["sum"], part.loc["pcgrad"], part.loc["sago"]
        return (f"{split} {method_name(objective, 'sago')}: recovery {naive['recovery %']:.0f} % (+GD) → "
                f"{pc['recovery %']:.0f} % (PCGrad) → {sago['recovery %']:.0f} % (SAGO) at forget accuracy "
                f"{naive['forget']:.2f} / {pc['forget']:.2f} / {sago['forget']:.2f}")

    def recovery_text(self) -> str:
        return "; ".join(f"{self.measured(*case)}: {v.verdict}" + (f" ({v.reason})" if v.reason else "")
                         for case, v in self.recovery.items())

    def granularity_text(self) -> str:
        return "; ".join(f"{self.label(case)} {v.verdict}" + (f" ({v.reason})" if v.reason else "")
                         for case, v in self.granularity.items())

    def resolution_text(self) -> str:
        hows = [v.resolution for v in (*self.recovery.values(), *self.granularity.values()) if v.resolution]
        return "; ".join(dict.fromkeys(hows)) or "no interval was read"

    def sentences(self) -> dict:
        """The parts of the chapter's conclusion, by the glue name it cites them with."""
        return {"recovery": self.recovery_text(), "granularity": self.granularity_text(),
                "resolutions": self.resolution_text()}

    def records(self, profile: str) -> str:
        """The two claim rows (`claims.record`), as Markdown."""
        pivot = granularity_table(self.main)
        mmlu = "; ".join(f"{self.label((split, o))} "
                         + " / ".join(f"{pivot.loc[(split, o), r]:.3f}" for r in ("pcgrad_global", "pcgrad", "sago"))
                         for split, o in pivot.index)
        return "\n\n".join([
            record("sago-wmdp-recovery", "; ".join(self.measured(*case) for case in self.cases),
                   verdicts.combine([self.recovery[c] for c in self.cases], [self.label(c) for c in self.cases]), profile),
            record("sago-granularity", "MMLU " + mmlu, verdicts.combine(
                list(self.granularity.values()), [self.label(c) for c in self.granularity]), profile)])


def rwku_grid(lab: Lab, benchmark: str, model: str, objectives, rules=None, **options):
    """The SAGO grid (`sago_grid`, the recipe `sago/rwku`) on an RWKU benchmark from `model`:
    a row per run with its metrics and RWKU's summaries (`forget`: mean of forget levels 1-3,
    `neighbour`: mean of neighbour levels 1-2; `benchmarks.rwku.summarise`), and the grid's budgets
    in optimizer steps. Returns (table, budgets)."""
    grid = sago_grid(lab, benchmark, model, objectives, SAGO_RULES if rules is None else rules, recipe="sago/rwku",
                     **options)
    results = pd.DataFrame(grid).drop(columns="run")
    results = results.join(pd.DataFrame([summarise(r) for _, r in results.iterrows()], index=results.index))
    return results, sorted({row["run"]["steps"] for row in grid})


def flat_rwku_metrics(target: dict, benchmark: str = "rwku") -> dict[str, str]:
    """The forget levels whose recall by the target cannot be told from zero (the 95 % interval of
    its mean over the level's probes covers 0; `floors.near_level`): RWKU measures the forgetting
    of what a model knows, so such a level is a floor."""
    statistics, flat = get_benchmark(benchmark).statistics, {}
    for column in FORGET_METRICS:
        flat.update(near_level(metric_value(target, statistics[column]), 0.0, column, TABLE_COLUMNS[column],
                               "zero recall: nothing known to forget"))
    return flat


def forgetting_moved(start: dict, results, benchmark: str = "rwku") -> tuple:
    """How far a grid moved RWKU's forget summary: its best run (the lowest forget summary), the
    start model minus it with its paired 95 % interval over the same probes, and why the grid
    cannot compare rules when that is not resolved (`verdicts.unmoved_forgetting`; "" when it can).
    Returns (best run's forget summary, drop, reason)."""
    best = results.loc[results["forget"].idxmin()]
    drop = metric_difference(start, best, get_benchmark(benchmark).statistics["forget"])
    return float(best["forget"]), drop, verdicts.unmoved_forgetting(drop)


def rwku_table(rows, flat: dict | None = None, elsewhere: str = ""):
    """Every RWKU number of `rows` (a table with objective, variant and the metrics), the columns of
    `flat` marked. Returns (table, note)."""
    table = pd.DataFrame(rows).set_index(["objective", "variant"])[list(TABLE_COLUMNS)].rename(columns=TABLE_COLUMNS)
    return mark(table, flat or {}, TABLE_COLUMNS, elsewhere=elsewhere)


def rwku_floor(target: dict, flat: dict) -> str:
    """Why the grid cannot separate the rules when the target's recall cannot be told from zero at
    every forget level (`flat_rwku_metrics` flags all three), else an empty string."""
    if not all(c in flat for c in FORGET_METRICS):
        return ""
    return ("the target's recall cannot be told from zero at any forget level ("
            + ", ".join(f"{TABLE_COLUMNS[c]} {target[c]:.2f}" for c in FORGET_METRICS) + "): a floor")


def curation_by_person(curation):
    """RWKU-real's curation log (a row per subject, role and probe split: candidates, kept, chosen)
    per person and role: candidate probes, those the original model answered and were kept, the
    share answered, and whether the person was chosen."""
    per_person = curation.groupby(["subject", "role"], sort=False).agg(candidates=("candidates", "sum"),
                                                                       kept=("kept", "sum"), chosen=("chosen", "first"))
    per_person["answered"] = per_person["kept"] / per_person["candidates"]
    return per_person


def rules_over_seeds(lab: Lab, benchmark: str, model: str, objective: str, rules, seeds, results, **options):
    """The grid's runs of `objective` under `rules` again with each seed of `seeds` (the order of the
    packed blocks), beside seed 0's rows of `results`: the forget and neighbour summaries and the
    per-probe scores (`items`) per rule and seed; `attrs["objective"]` names the objective."""
    rows = [{"seed": 0, **row} for row in results[(results.objective == objective) & results.rule.isin(rules)].to_dict("records")]
    for seed in seeds:
        rows += [{"seed": seed, **row, **summarise(row)} for row in sago_grid(
            lab, benchmark, model, [objective], rules, recipe="sago/rwku", forget_only=False, seed=seed, **options)]
    frame = pd.DataFrame(rows).set_index(["rule", "seed"])[["forget", "neighbour", "items"]]
    frame.attrs["objective"] = objective
    return frame


def rwku_record(claim: str, results, objectives, profile: str, benchmark: str = "rwku", over_seeds=None,
                no_signal: str = "", empty: str = "-") -> str:
    """The RWKU claim row (`claims.record`): SAGO's neighbour gain over PCGrad per objective of the
    grid `results` (`sago_gains`), judged by `verdicts.sago_keeps_more_over` on the paired
    differences of `rwku_differences` (seeds added where `over_seeds` reran them); `empty` stands
    for a grid without a +GD, PCGrad and SAGO triple."""
    gains = sago_gains(results, objectives)
    measured = "; ".join(f"{g['objective']} {g['points']:+.1f} points (forget {g['forget_pcgrad']:.2f} vs "
                         f"{g['forget_sago']:.2f})" for g in gains)
    return record(claim, measured or empty, verdicts.sago_keeps_more_over(
        rwku_differences(results, objectives, benchmark, over_seeds), no_signal=no_signal,
        unmoved=unmoved_rules(results, objectives)), profile)


def unmoved_rules(results, objectives, rules=("pcgrad", "sago")) -> dict[str, str]:
    """Objective label -> why, for each objective whose run under one of `rules` did not forget
    beyond its interval (its row's `check`, `calibration.check`; rows without one are not read)."""
    out = {}
    for objective in objectives:
        part = results[(results.objective == objective) & results.rule.isin(rules)]
        still = [f"{row.rule} {row.check.forget_change.text()}" for row in part.itertuples()
                 if isinstance(getattr(row, "check", None), Check) and not row.check.moved]
        if still:
            out[method_name(objective, "sago")] = f"forgetting did not move beyond its interval ({', '.join(still)})"
    return out


WMDP_BIO = dict(benchmark="wmdp", forget_split="bio-forget-corpus", retain_split="bio-retain-corpus")


def geometry_runs(lab: Lab, objective: str, rules, start: str, optimizer: str | None = None,
                  recipe: str = "sago/wmdp-bio") -> dict:
    """Chapter 10's runs (SAGO paper, geometry table): `objective` under each rule of `rules` from
    `start` on WMDP-Bio with the recipe's settings for that rule, the gradient geometry logged at
    every step, under `optimizer` (the recipe's own when None), each at the rate its calibration
    chose under the recipe's optimizer (the runs of chapter 11's grid). Rule -> run record."""
    loaded, runs = load_recipe(recipe), {}
    for rule in rules:
        name = sago_run_name(loaded, objective, rule)[0]
        spec = lab.recipe_spec(loaded, name, start, rule=rule, record_geometry=True, optimizer=optimizer,
                               scale=_geometry_scale(lab, recipe, name, rule, start), **WMDP_BIO)
        runs[rule] = lab.run_spec(spec, start)
    return runs


def geometry_factors(lab: Lab, objective: str, rules, start: str, recipe: str = "sago/wmdp-bio") -> dict[str, float]:
    """The calibrated rate factor of each recipe run of `geometry_runs` (for its recipe table)."""
    loaded = load_recipe(recipe)
    names = {rule: sago_run_name(loaded, objective, rule)[0] for rule in rules}
    return {name: _geometry_scale(lab, recipe, name, rule, start).lr_factor for rule, name in names.items()}


def _geometry_scale(lab: Lab, recipe: str, name: str, rule: str, start: str):
    """A geometry run's scale: its calibration as chapter 11's grid runs it on WMDP-Bio."""
    return calibration(lab, recipe, name, start, split=WMDP_BIO["forget_split"], benchmark="wmdp",
                       forget="wmdp-bio_accuracy", retain_split=WMDP_BIO["retain_split"], rule=rule,
                       record_geometry=True).scale

