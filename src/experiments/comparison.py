"""The MASC paper's comparisons (arXiv 2606.02920, Figure 1, its TOFU and MUSE tables), as chapters
6, 7 and 14 and the performance harness build them.

- `run_summary`: how each run went (steps, stop, seconds, forget and retain probabilities);
- `model_row` and `oracle_row`: the rows of a results table (a model's metrics, the seconds and
  steps of the run that made it); the retain-only oracle compared with itself has forget quality 1
  and no privacy leak;
- `tofu_comparison(lab, size, ...)`: every method's run of its paper's recipe on every forget split
  of TOFU-mini, evaluated, with the target and the oracle rows;
- `muse_comparison(lab, size, ...)`: MUSE News and Books the same way (the MASC paper's MUSE tables),
  `flat_muse_metrics` and `muse_verdicts`;
- `time_to_good_model(...)`: each run's trajectory through its kept checkpoints, when it first held
  a good model (`trajectory.good_model`) and the fair time that pays for finding it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from experiments import verdicts
from experiments.calibration import calibration, calibration_checkpoints, check, run_points, tofu_calibration, unjudged
from experiments.claims import record
from experiments.floors import agreeing, mark, near_level, separated
from experiments.intervals import Estimate, bootstrap, items_of, metric_difference, metric_value, time_ratio
from experiments.lab import Lab, Protocol, eval_config, oracle_of, tofu_oracle, tofu_recipe, tofu_run, tune_rmu
from experiments.plotting import DIVERGED
from experiments.tables import show_recipe
from experiments.trajectory import Criterion, good_model, held_point, quality_table, time_to_quality, trajectory
from experiments.verdicts import AXIS_METRICS
from unlearning.benchmarks import get_benchmark
from unlearning.stopping import StopConfig

SELF_COMPARED = {"forget_quality": 1.0, "privleak": 0.0}  # the oracle's metrics against itself


def run_summary(records: dict):
    """How each run of `records` (name -> run record) went: steps, whether it stopped by itself,
    its training and probing seconds, its mean answer probability on the forget and retain sets."""
    return pd.DataFrame([{"method": name, "steps": r["steps"], "stopped by itself": r["stopped"],
                          "train s": round(r["train_seconds"], 2), "probe s": round(r["probe_seconds"], 2),
                          "forget p": round(r["forget_probability"], 3), "retain p": round(r["retain_probability"], 3)}
                         for name, r in records.items()]).set_index("method")


def model_row(name: str, metrics: dict, record: dict | None = None, **labels) -> dict:
    """One row of a results table: `name`, the seconds (training plus probes) and steps of the run
    `record` that made the model (0 for a learned model), its `metrics`; `labels` come first
    (the forget split, say)."""
    seconds = record["train_seconds"] + record["probe_seconds"] if record else 0.0
    return {**labels, "method": name, "seconds": seconds, "steps": record["steps"] if record else 0, **metrics}


def oracle_row(oracle: dict, **labels) -> dict:
    """The retain-only oracle's row: its own metrics, compared with itself (`SELF_COMPARED`)."""
    return model_row("Oracle", {**oracle, **SELF_COMPARED}, **labels)


@dataclass
class TofuComparison:
    """The runs and evaluations of one TOFU comparison."""

    rows: list[dict]                       # per split: the oracle, the target, every method
    records: dict = field(default_factory=dict)  # (split, method) -> run record
    oracles: dict = field(default_factory=dict)  # split -> the oracle's metrics
    calibrations: dict = field(default_factory=dict)  # method -> its rate's calibration (`calibration.Calibration`)
    checks: list = field(default_factory=list)  # every run's `calibration.Check`, before the page judges

    def results(self):
        """The rows as a DataFrame (columns split, method, seconds, steps and every metric)."""
        return pd.DataFrame(self.rows)

    def split(self, forget_split: str):
        """One split's rows, indexed by method."""
        frame = self.results()
        return frame[frame.split == forget_split].set_index("method")


def tofu_comparison(lab: Lab, size: str, forget_splits, methods, *, tuned=None, checkpoints: tuple[int, ...] = (),
                    checkpoint_split: str | None = None) -> TofuComparison:
    """Every method of `methods` from TOFU-mini's target of `size` on every split of `forget_splits`
    (its paper's recipe, `protocol.tofu_run`; RMU with the settings `tuned` chose), each evaluated
    against the split's retain-only oracle; the runs of `checkpoint_split` keep their weights at
    `checkpoints` (the time to a good model)."""
    target = get_benchmark("tofu").target(size)
    comparison = TofuComparison([])
    comparison.calibrations = {m: tofu_calibration(lab, m, target, size) for m in methods if m != "RMU"}
    for split in forget_splits:
        config = eval_config("tofu", split)
        oracle = comparison.oracles[split] = lab.evaluate("tofu", lab.model(tofu_oracle(split, size)), config=config)
        start = lab.evaluate("tofu", lab.model(target), config=config, oracle=oracle)
        comparison.rows += [oracle_row(oracle, split=split), model_row("Target", start, split=split)]
        for method in methods:
            calibrated = comparison.calibrations.get(method)
            run = comparison.records[split, method] = tofu_run(
                lab, method, target, split, tuned=tuned, checkpoints=checkpoints if split == checkpoint_split else (),
                scale=calibrated and calibrated.scale)
            points = run_points(lab, "tofu", run, config, oracle)
            comparison.checks.append(check(f"{method}, {split}", points, start))
            comparison.rows.append(model_row(method, points[-1][1], run, split=split))
    return comparison


STOP_METRICS = {"forget_Q_A_ROUGE": "forget ROUGE-L", "forget_Q_A_Prob": "forget Prob", "forget_quality": "forget quality",
                "model_utility": "model utility"}


def tolerance_sweep(lab: Lab, target: str, forget_split: str, protocol, tolerances, config, oracle: dict):
    """MASC (arXiv 2606.02920, section 3.3) from TOFU's `target` under `protocol` once per
    violation tolerance, each model evaluated with `config` against `oracle`: a row per tolerance."""
    rows = []
    for tolerance in tolerances:
        run = lab.run("tofu", "MASC", target, protocol, forget_split=forget_split,
                      stop=StopConfig("violation", tolerance=tolerance))
        metrics = lab.evaluate("tofu", run["dir"], config=config, oracle=oracle)
        rows.append({"tolerance": tolerance, "steps": run["steps"], "stopped by itself": run["stopped"],
                     "train + probe s": run["train_seconds"] + run["probe_seconds"],
                     **{label: metrics[key] for key, label in STOP_METRICS.items()}})
    return pd.DataFrame(rows).set_index("tolerance")


def fixed_budgets(lab: Lab, target: str, forget_split: str, protocol, budgets, config, oracle: dict):
    """MASC's objective from TOFU's `target` for each fixed budget of `budgets` steps (deterministic
    runs: the checkpoints of one fixed-budget run), each evaluated with `config` against `oracle`,
    with the seconds of training and of evaluation that a checkpoint search pays: a row per budget."""
    rows = []
    for steps in budgets:
        run = lab.run("tofu", "MASC", target, protocol, forget_split=forget_split, stop=StopConfig("fixed"), max_steps=steps)
        metrics = lab.evaluate("tofu", run["dir"], config=config, oracle=oracle)
        rows.append({"steps": steps, "train s": run["train_seconds"], "eval s": metrics["eval_seconds"],
                     **{label: metrics[key] for key, label in STOP_METRICS.items()}})
    return pd.DataFrame(rows).set_index("steps")


@dataclass
class TimeToQuality:
    """Each run's trajectory, the criterion of a good model, the first point meeting it and the
    fair time to hold one (`trajectory.held_point`, `trajectory.selected_time`)."""

    criterion: Criterion
    trajectories: dict
    reached: dict
    points: dict  # method -> (the point where it holds a good model, evaluation seconds spent) or None
    held: dict = field(init=False)  # method -> seconds to hold a good model (None: never)

    def __post_init__(self):
        self.held = {m: None if p is None else p[0]["seconds"] + p[1] for m, p in self.points.items()}

    def table(self) -> list[dict]:
        """`trajectory.quality_table`, with the fair time of each method."""
        return [{**row, "holds a good model at (s)": self.held[row["method"]]}
                for row in quality_table(self.trajectories, self.reached)]


def time_to_good_model(lab: Lab, benchmark: str, forget_split: str, records: dict, start: dict, oracle: dict, *,
                       config=None, self_stopping=("MASC",)) -> TimeToQuality:
    """The time to a good model of every run of `records` (method -> record) on a TOFU-format
    benchmark: its trajectory from the start model's metrics `start` through its checkpoints, the
    criterion from the oracle within the paired interval over the same items (`trajectory.good_model`),
    and the fair time (a method in `self_stopping` holds its final model; any other pays for the
    evaluations that find its good checkpoint)."""
    config = config or eval_config(benchmark, forget_split)
    criterion = good_model(oracle, get_benchmark(benchmark).statistics)
    trajectories = {m: trajectory(lab, benchmark, record, start, config=config, oracle=oracle)
                    for m, record in records.items()}
    return TimeToQuality(criterion, trajectories,
                         {m: time_to_quality(points, criterion) for m, points in trajectories.items()},
                         {m: held_point(points, criterion, self_stopping=m in self_stopping)
                          for m, points in trajectories.items()})


def record_until(record: dict, step: int, seconds: float) -> dict:
    """A run's record cut at `step` (its per-step log up to there, `seconds` into the run): the
    part of a run a checkpoint cost, for `intervals.time_ratio`."""
    return {"train_seconds": seconds, "probe_seconds": 0.0, "log": record.get("log", [])[:step]}


def held_ratios(quality: TimeToQuality, records: dict, baselines, masc: str = "MASC") -> tuple[bool, dict]:
    """Whether `masc` holds a good model, and each baseline's fair time over MASC's (both as
    `time_to_good_model` found them: MASC self-stopping, the baselines paying for evaluations) with the
    interval of both runs' per-step timings (`intervals.time_ratio`; the evaluations a baseline paid
    to find its checkpoint added as fixed seconds); None where a baseline never held one."""
    mine = quality.points[masc]
    masc_part = records[masc] if mine is None else record_until(records[masc], mine[0]["step"], mine[0]["seconds"])
    ratios = {}
    for name in baselines:
        found = quality.points[name]
        ratios[name] = None if found is None else time_ratio(
            record_until(records[name], found[0]["step"], found[0]["seconds"]), masc_part, extra=(found[1], 0.0))
    return mine is not None, ratios


TOFU_COLUMNS = {"seconds": "seconds", "steps": "steps", "forget_Q_A_ROUGE": "forget ROUGE-L", "forget_Q_A_Prob": "forget Prob",
                "forget_truth_ratio": "truth ratio", "forget_quality": "forget quality", "model_utility": "model utility",
                "extraction_strength": "ES", "exact_memorization": "EM", "privleak": "PrivLeak"}


def show_recipes(lab: Lab, methods, target: str, factors: dict | None = None, **options) -> None:
    """The recipe tables (`tables.show_recipe`) of every method of a TOFU comparison but RMU, which runs the
    book's protocol: one table per recipe, its methods together, each at its calibrated rate
    factor in `factors` (`calibration.tofu_calibration`)."""
    paper = [m for m in methods if m != "RMU"]
    for name in dict.fromkeys(tofu_recipe(m) for m in paper):
        show_recipe(lab, name, [m for m in paper if tofu_recipe(m) == name], target, factors=factors, **options)


def flat_tofu_metrics(main, methods) -> dict[str, str]:
    """The TOFU metrics of one split's results (`main`, indexed by method) that cannot move here
    (`experiments.floors`): forget probability and truth ratio alike for target and oracle, forget
    quality unable to tell them apart, model utility alike for the target and the most damaged run."""
    statistics = get_benchmark("tofu").statistics
    damaged = main.loc[list(methods), "model_utility"].idxmin()
    return {**agreeing(main, {"forget_Q_A_Prob": "forget Prob", "forget_truth_ratio": "truth ratio"}, statistics),
            **separated(main, "forget_quality", "forget quality"),
            **agreeing(main, {"model_utility": "model utility"}, statistics, other=damaged)}


def every_number(results, flat: dict, columns=TOFU_COLUMNS, elsewhere: str = ""):
    """The table of every number (rows by split and method where `results` has a split column),
    the columns of `flat` marked (`floors.mark`) and forget quality in scientific notation, with
    the note that explains the marks. Returns (styled table, note)."""
    index = ["split", "method"] if "split" in results.columns else (results.index.name or "method")
    frame = results.set_index(index) if "split" in results.columns else results
    table, note = mark(frame[[c for c in columns if c in frame.columns]].rename(columns=columns), flat, columns,
                       elsewhere=elsewhere)
    return table.style.format(precision=3, na_rep=DIVERGED).format(
        "{:.2e}", na_rep=DIVERGED, subset=[c for c in table.columns if c.startswith("forget quality")]), note


@dataclass
class TofuVerdicts:
    """The MASC paper's TOFU claims judged on one comparison (`experiments.verdicts`)."""

    speed: object           # the paper's question: MASC's run against the baselines' full budgets
    fair: object            # beyond the paper: the time to hold a good model, each paying for finding it
    tradeoff: object        # the radar axes at matched forgetting
    speedup: object         # the fastest baseline's seconds over MASC's (`intervals.Estimate`)
    held: dict              # method -> seconds to hold a good model (None: never)
    axes: dict              # method -> radar axes (baselines at their matched point)
    differences: dict       # baseline -> radar axis -> MASC minus the baseline (`intervals.Estimate`)
    read_at: dict           # method -> the step its axes were read at
    stopped: bool           # MASC stopped by itself
    speed_text: str         # `verdicts.speed_sentence` of MASC's run against the baselines'
    masc_rouge: float       # MASC's forget ROUGE-L, the level each baseline is matched at
    collapse: str = ""      # why MASC's run cannot stand for MASC ("" when it can: `verdicts.collapsed`)

    def held_text(self) -> str:
        return ", ".join(f"{k} {'never' if s is None else f'{s:.1f} s'}" for k, s in self.held.items())

    def sentences(self) -> dict:
        """The parts of the chapter's conclusion, by the glue name it cites them with."""
        return {"speed": self.speed_text + (f". {self.collapse}" if self.collapse else ""), "held": self.held_text(),
                "masc_rouge": self.masc_rouge, "tradeoff": self.tradeoff.reason or self.tradeoff.verdict,
                "resolution": self.tradeoff.resolution or "no interval (no baseline)"}

    def records(self, profile: str) -> str:
        """The three claim rows (`claims.record`), as Markdown."""
        mu = ", ".join(f"{b} {a['MU']:.3f}" for b, a in self.axes.items() if b != "MASC")
        return "\n\n".join([
            record("masc-speed", f"{self.speedup.value:.1f}x the fastest of the paper's baselines (full budgets), MASC "
                   f"{'self-stopped' if self.stopped else 'at its cap'}", self.speed, profile),
            record("masc-speed-to-good-model", self.held_text(), self.fair, profile),
            record("masc-tradeoff", f"at matched forgetting, MU {self.axes['MASC']['MU']:.3f} against {mu}",
                   self.tradeoff, profile)])

    def axes_table(self):
        """The radar axes at matched forgetting, with the step each was read at."""
        return pd.DataFrame(self.axes).T.assign(**{"read at step": list(self.read_at.values())}).round(3).rename_axis(
            "at matched forgetting")

    def differences_table(self):
        """MASC minus each baseline on every radar axis, with its paired 95 % interval."""
        return pd.DataFrame({b: {axis: d.text() for axis, d in axes.items()} for b, axes in self.differences.items()}
                            ).T.rename_axis("MASC minus")


def axis_differences(method: dict, other: dict, statistics: dict) -> dict:
    """`method` minus `other` on each of the MASC paper's radar axes (higher is better), with the
    paired 95 % interval over the same TOFU items (`intervals.metric_difference`)."""
    out = {}
    for axis, (metric, sign) in AXIS_METRICS.items():
        d = metric_difference(method, other, statistics[metric])
        out[axis] = d if sign > 0 else -d
    return out


def tofu_verdicts(main, records: dict, quality: TimeToQuality, baselines, flat: dict, checks=()) -> TofuVerdicts:
    """Judge MASC against `baselines` on one split's results (`main`, indexed by method, each row
    with its per-item scores; `records`: method -> run record; `quality`: their time to a good
    model; `flat`: metrics that cannot move): the speed against the paper's ratio (each run's
    timing resampled), the fair time to a good model, and the trade-off with each baseline read at
    the checkpoint that forgets as much as MASC's final model (paired intervals over the same
    items). A MASC run whose utility fell below the oracle's carries no speed verdict, and neither
    do runs that failed their check (`checks` of MASC's and the baselines' runs, `calibration.check`)."""
    masc, stopped = main.loc["MASC"], bool(records["MASC"]["stopped"])
    statistics, oracle = quality.criterion.statistics, quality.criterion.oracle
    seconds = main.loc[list(baselines), "seconds"]
    held = {name: quality.held[name] for name in ["MASC", *baselines]}
    matched = {b: verdicts.matched_point(quality.trajectories[b], masc["forget_Q_A_ROUGE"]) for b in baselines}
    axes = {"MASC": verdicts.tofu_axes(masc), **{b: verdicts.tofu_axes(p) for b, p in matched.items()}}
    differences = {b: axis_differences(masc, p, statistics) for b, p in matched.items()}
    collapse = "; ".join(reason for reason in (verdicts.collapsed(metric_difference(masc, oracle, statistics["model_utility"])),
                                               unjudged(checks)) if reason)
    fastest = seconds.idxmin() if len(seconds) else None
    ratio = (time_ratio(records[fastest], records["MASC"]) if fastest is not None
             else Estimate(float("nan"), float("nan"), float("nan")))
    reached, ratios = held_ratios(quality, records, baselines)
    return TofuVerdicts(
        speed=verdicts.speed_against_paper(ratio, "tofu", stopped, collapse),
        fair=verdicts.speed_to_good_model(reached, ratios),
        tradeoff=verdicts.tofu_tradeoff(differences, floors=verdicts.axis_floors(flat), matched=("1-ROUGE-L",),
                                        collapse=collapse),
        speedup=ratio, held=held, axes=axes, differences=differences,
        read_at={"MASC": int(masc["steps"]), **{b: int(p["step"]) for b, p in matched.items()}}, stopped=stopped,
        speed_text=verdicts.speed_sentence(masc["seconds"], int(masc["steps"]), stopped, seconds.to_dict(), "tofu", ratio),
        masc_rouge=float(masc["forget_Q_A_ROUGE"]), collapse=collapse)


SCALE_COLUMNS = {"parameters": "parameters", "steps": "steps", "seconds": "seconds", "forget_Q_A_ROUGE": "forget ROUGE-L",
                 "forget_Q_A_Prob": "forget Prob", "forget_truth_ratio": "truth ratio", "forget_quality": "forget quality",
                 "model_utility": "model utility"}
MUSE_COLUMNS = {"seconds": "seconds", "steps": "steps", "verbmem_f": "VerbMem f", "knowmem_f": "KnowMem f",
                "knowmem_r": "KnowMem r", "privleak": "PrivLeak", "privleak_auc_min_k": "Min-K AUC",
                "privleak_auc_loss": "LOSS AUC", "privleak_auc_zlib": "zlib AUC"}


def muse_recipe(corpus: str, method: str) -> str:
    """The recipe a MUSE chapter runs `method` with on `corpus`: MASC's released run, or
    Unlearn-Simple's MUSE trainer (the MASC paper's baselines)."""
    return f"masc/{corpus}" if method == "MASC" else f"unlearn-simple/{corpus}"


def muse_comparison(lab: Lab, size: str, corpora, methods, rmu_grid: dict):
    """Every method of `methods` from each MUSE corpus's target of `size` (its paper's recipe; RMU
    tuned per target under the book's protocol, keeping the run that lowers VerbMem most while
    KnowMem retain holds), evaluated against the corpus's retrained oracle. Returns (the results
    table: a row per corpus and model, RMU's tuning per corpus)."""
    rows, tuning = [], {}
    for corpus in corpora:
        bench = get_benchmark(corpus)
        target, oracle = bench.target(size), lab.evaluate(corpus, lab.model(oracle_of(corpus, None, size)))
        if "RMU" in methods:
            tuning[corpus] = tune_rmu(lab, corpus, target, Protocol(), forget_metric="verbmem_f",
                                      retain_metric="knowmem_r", oracle=oracle, grid=rmu_grid)
        rows += [model_row("Oracle", {**oracle, "privleak": 0.0}, corpus=corpus),
                 model_row("Target", lab.evaluate(corpus, lab.model(target), oracle=oracle), corpus=corpus)]
        for method in methods:
            run = (lab.run(corpus, method, target, tuning[corpus].protocol, hparams=tuning[corpus].hparams)
                   if method == "RMU" else lab.recipe_run(muse_recipe(corpus, method), method, target))
            rows.append(model_row(method, lab.evaluate(corpus, run["dir"], oracle=oracle), run, corpus=corpus))
    return pd.DataFrame(rows), tuning


def flat_muse_metrics(results, corpora) -> dict[str, str]:
    """The MUSE metrics that cannot move here, per corpus: KnowMem forget where the target and the
    oracle cannot be told apart, KnowMem retain where the target itself cannot be told from zero
    (`experiments.floors`, paired intervals over the same items)."""
    flat = {}
    for corpus in corpora:
        part, statistics = results[results.corpus == corpus].set_index("method"), get_benchmark(corpus).statistics
        found = {**agreeing(part, {"knowmem_f": "KnowMem forget"}, statistics),
                 **near_level(metric_value(part.loc["Target"], statistics["knowmem_r"]), 0.0, "knowmem_r",
                              "KnowMem retain", "zero")}
        for column, reason in found.items():
            flat[column] = (flat[column] + "; " if column in flat else "") + f"{corpus}, {reason}"
    return flat


def muse_case(part, corpus: str, method: str = "MASC"):
    """`verdicts.verbatim_removed` for `method` on one corpus's rows (`part`, indexed by method):
    the target's memorisation beyond the oracle, what the method removed, what is left above the
    oracle (VerbMem, paired intervals over the same continuations)."""
    verbmem = get_benchmark(corpus).statistics["verbmem_f"]
    t, m, o = part.loc["Target"], part.loc[method], part.loc["Oracle"]
    return verdicts.verbatim_removed(metric_difference(t, o, verbmem), metric_difference(t, m, verbmem),
                                     metric_difference(m, o, verbmem))


def muse_verdicts(results, corpora, baselines) -> tuple[list, list[str]]:
    """Per corpus, whether MASC removed verbatim memorisation as the claim is registered
    (`muse_case`: VerbMem forget down to the oracle's, within the paired interval), and the
    sentence that says what it measured (KnowMem and PrivLeak shown, not judged). Returns
    (verdicts, sentences)."""
    cases, lines = [], []
    for corpus in corpora:
        part = results[results.corpus == corpus].set_index("method")
        m, t, o, base = part.loc["MASC"], part.loc["Target"], part.loc["Oracle"], part.loc[list(baselines)]
        cases.append(muse_case(part, corpus))
        lines.append(
            f"On {corpus}, MASC took {m['seconds']:.1f} s ({int(m['steps'])} steps) against {base['seconds'].min():.1f}-"
            f"{base['seconds'].max():.1f} s for the baselines; VerbMem {t['verbmem_f']:.2f} → {m['verbmem_f']:.2f} "
            f"(oracle {o['verbmem_f']:.2f}), KnowMem forget {t['knowmem_f']:.2f} → "
            f"{m['knowmem_f']:.2f} (oracle {o['knowmem_f']:.2f}), KnowMem retain {t['knowmem_r']:.2f} → "
            f"{m['knowmem_r']:.2f} (baselines {', '.join(f'{v:.2f}' for v in base['knowmem_r'])}), PrivLeak "
            f"{t['privleak']:.0f} → {m['privleak']:.0f}: {cases[-1].verdict}"
            + (f" ({cases[-1].reason})" if cases[-1].reason else "") + f" [{cases[-1].evidence}].")
    return cases, lines


def muse_record(results, corpora, cases, profile: str) -> str:
    """The MUSE claim row (`claims.record`) of `muse_verdicts`' cases: VerbMem of the target, MASC
    and the oracle per corpus, every corpus's verdict combined."""
    rows = {c: results[results.corpus == c].set_index("method").loc[["Target", "MASC", "Oracle"], "verbmem_f"]
            for c in corpora}
    return record("masc-muse", "; ".join(f"{c}: VerbMem {t:.2f} → {m:.2f} (oracle {o:.2f})" for c, (t, m, o) in rows.items()),
                  verdicts.combine(cases, corpora), profile)


@dataclass
class ScaleStudy:
    """The scale study's runs: a row per size and model (`results`), each method's calibration at
    every size and the one factor every size runs (`factors`), and every run's check."""

    results: object
    calibrations: dict  # (size, method) -> calibration.Calibration
    factors: dict  # method -> the rate factor every size runs
    checks: list

    def ladders(self) -> dict:
        """Every calibration, labelled by method and size (`calibration.ladder_table`)."""
        return {f"{m}, size {size}": c for (size, m), c in self.calibrations.items()}


def scale_comparison(lab: Lab, sizes, methods, forget_split: str, recipe: str = "masc/scale") -> ScaleStudy:
    """The MASC paper's scale study: every method of `recipe` from the TOFU target of each size,
    evaluated against that size's retain-only oracle (a row per size and model, with the model's
    parameter count). As the paper runs one rate at every size, each method runs at the smallest
    of the factors its calibration chose at the sizes, so that every size keeps its model."""
    tofu, config, rows = get_benchmark("tofu"), eval_config("tofu", forget_split), []
    calibrations = {(size, m): calibration(lab, recipe, m, tofu.target(size), split=forget_split,
                                           oracle=tofu_oracle(forget_split, size)) for size in sizes for m in methods}
    factors = {m: min(calibrations[size, m].scale.lr_factor for size in sizes) for m in methods}  # one rate for all
    checks = []
    for size in sizes:
        target = tofu.target(size)
        labels = {"size": size, "parameters": json.loads((lab.model(target) / "learning.json").read_text())["parameters"]}
        oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
        start = lab.evaluate("tofu", lab.model(target), config=config, oracle=oracle)
        rows += [oracle_row(oracle, **labels), model_row("Target", start, **labels)]
        for method in methods:
            scale = replace(calibrations[size, method].scale, lr_factor=factors[method],
                            why=f"{calibrations[size, method].base.why}, one factor at every size")
            spec = lab.recipe_spec(recipe, method, target, scale=scale, forget_split=forget_split)
            run = lab.run_spec(spec, target, checkpoints=calibration_checkpoints(spec))
            points = run_points(lab, "tofu", run, config, oracle)
            checks.append(check(f"{method}, size {size}", points, start))
            rows.append(model_row(method, points[-1][1], run, **labels))
    return ScaleStudy(pd.DataFrame(rows), calibrations, factors, checks)


def size_steps(rows, statistic) -> tuple:
    """`statistic` of the largest size minus the smallest's, and of each size minus the one below,
    for rows of one model kind in size order (each with its per-item scores): paired intervals, the
    sizes being evaluated on the same items. Returns (net, steps)."""
    rows = list(rows)
    steps = [metric_difference(b, a, statistic) for a, b in zip(rows, rows[1:])]
    return (metric_difference(rows[-1], rows[0], statistic) if len(rows) > 1 else None), steps


@dataclass
class ScaleVerdicts:
    """The scale study's claim judged on `scale_comparison`'s results (`verdicts.scale_invariant`):
    paired intervals over the same TOFU items, which every size is evaluated on."""

    results: object
    methods: list
    metric: str = "forget_Q_A_ROUGE"
    checks: tuple = ()  # MASC's runs' checks (`calibration.check`): one that failed takes the verdict away
    verdict: object = field(init=False)
    removals: dict = field(init=False)
    gap_changes: dict = field(init=False)
    utility: object = field(init=False)

    def __post_init__(self):
        stats = get_benchmark("tofu").statistics
        forget, mu = stats[self.metric], stats["model_utility"]
        masc, target, oracle = (list(self._rows(m).iterrows()) for m in ("MASC", "Target", "Oracle"))
        sizes = [str(row["size"]) for _, row in masc]
        self.removals = {s: metric_difference(t, m, forget) for s, (_, t), (_, m) in zip(sizes, target, masc)}
        pairs = list(zip(range(len(sizes)), range(1, len(sizes))))
        if len(sizes) > 2:
            pairs.append((0, len(sizes) - 1))
        self.gap_changes = {}
        for i, j in pairs:
            models = {"m_i": items_of(masc[i][1]), "o_i": items_of(oracle[i][1]), "m_j": items_of(masc[j][1]),
                      "o_j": items_of(oracle[j][1])}
            self.gap_changes[f"{sizes[i]}→{sizes[j]}"] = bootstrap(
                models, lambda x: (forget(x["m_j"]) - forget(x["o_j"])) - (forget(x["m_i"]) - forget(x["o_i"])))
        net, steps = size_steps((row for _, row in masc), mu) if masc else (None, [])
        self.utility = (verdicts.grows_with_size(net, steps) if net is not None
                        else verdicts.Verdict("cannot tell here", "one model size in this profile"))
        collapses = [verdicts.collapsed(metric_difference(m, o, mu), f"MASC at size {s}")
                     for s, (_, m), (_, o) in zip(sizes, masc, oracle)]
        floor = ("MASC's forget ROUGE-L is zero at every size: flat by the metric's floor, not by the method"
                 if masc and all(float(m[self.metric]) <= 0 for _, m in masc) else "")
        self.verdict = verdicts.scale_invariant(self.removals, self.gap_changes, self.utility, floor,
                                                "; ".join(c for c in [*collapses, unjudged(self.checks)] if c))

    def _rows(self, method: str):
        return self.results[self.results.method == method]

    def sentences(self) -> dict:
        """The parts of the chapter's conclusion, by the glue name it cites them with."""
        part = self.results[self.results.method.isin(self.methods)].groupby("method", sort=False)
        oracle = self._rows("Oracle")
        return {"runs": "; ".join(f"{method}: forget ROUGE-L {' / '.join(f'{v:.2f}' for v in rows[self.metric])}, model "
                                  f"utility {' / '.join(f'{v:.2f}' for v in rows.model_utility)}" for method, rows in part),
                "oracles": " / ".join(f"{v:.2f}" for v in oracle[self.metric]),
                "removed": ", ".join(f"{s} {e.text()}" for s, e in self.removals.items()),
                "gaps": ", ".join(f"{p} {e.text()}" for p, e in self.gap_changes.items()) or "one size",
                "utility": self.utility.evidence or self.utility.reason,
                "resolution": self.verdict.resolution or "no interval",
                "verdict": self.verdict.verdict + (f" ({self.verdict.reason})" if self.verdict.reason else "")}

    def records(self, profile: str) -> str:
        """The claim row (`claims.record`), as Markdown."""
        masc = self._rows("MASC")
        return record("masc-scale-invariant", f"MASC forget ROUGE-L {' / '.join(f'{v:.2f}' for v in masc[self.metric])} "
                      f"(oracles {' / '.join(f'{v:.2f}' for v in self._rows('Oracle')[self.metric])}); utility "
                      f"{' / '.join(f'{v:.2f}' for v in masc.model_utility)}", self.verdict, profile)


def quantized_results(lab: Lab, benchmark: str, folders: dict, codes, config, oracle: dict | None = None,
                      full: dict | None = None):
    """Every model of `folders` (name -> folder) in full precision ("fp32") and after each 4-bit
    code of `codes` (`Lab.quantized`), evaluated with `config`; `full` (name -> metrics) gives
    full-precision evaluations already made. A row per model and precision."""
    rows = []
    for name, folder in folders.items():
        for precision in ["fp32", *codes]:
            if precision == "fp32" and full is not None:
                metrics = dict(full[name])
            else:
                model_dir = folder if precision == "fp32" else lab.quantized(folder, precision)
                metrics = lab.evaluate(benchmark, model_dir, config=config, oracle=oracle)
            rows.append({"method": name, "precision": precision, **metrics})
    return pd.DataFrame(rows)


@dataclass
class QuantizationCheck:
    """What 4-bit rounding did to each unlearned model against the controls (the target and the
    oracle, which nobody unlearned): `verdicts.survives_quantization` per model and code, every
    difference with its paired interval over the same items."""

    changes: dict   # name -> code -> change of the forget metric (positive: knowledge coming back)
    control: dict   # code -> the larger *rise* of the two controls, 0 when both fall (signed)
    cases: dict     # unlearned name -> code -> Verdict
    utility: dict   # name -> code -> (model utility in full precision, after the code)

    SAID = {"held": "its forgetting survives", "did not hold": "knowledge comes back", "cannot tell here": "cannot tell"}

    def lines(self) -> list[str]:
        """One line per unlearned model: its change under each code and the verdict's reason."""
        return [f"{m}: " + ", ".join(f"{c.upper()} {self.changes[m][c]:+.2f} ({self.SAID[v.verdict]}: {v.reason})"
                                     for c, v in codes.items()) for m, codes in self.cases.items()]

    def moves(self, name: str) -> str:
        """How each code moved model `name`'s forget metric: "NF4 +0.01, FP4 -0.02"."""
        return ", ".join(f"{c.upper()} {change:+.2f}" for c, change in self.changes[name].items())

    def record(self, profile: str, method: str = "MASC") -> str:
        """The claim row of `method` (`claims.record`): its changes, the controls', its codes combined."""
        codes = self.cases[method]
        return record("masc-quantization", f"{method}'s forget ROUGE-L after 4-bit: {self.moves(method)} (controls rise "
                      + ", ".join(f"{c.upper()} {self.control[c]:+.2f}" for c in codes) + ")",
                      verdicts.combine(list(codes.values()), [c.upper() for c in codes]), profile)


def _recovery(statistic, controls):
    """The statistic of a recovery over models named u (unlearned), qu (its 4-bit copy) and each
    control c and its copy qc: u's rise minus the largest control rise where a control rises."""
    def recovery(x):
        control = np.maximum.reduce([np.zeros_like(statistic(x["u"]))] + [statistic(x[f"q{c}"]) - statistic(x[c])
                                                                          for c in controls])
        return statistic(x["qu"]) - statistic(x["u"]) - control
    return recovery


def quantization_check(results, codes, key: str = "forget_Q_A_ROUGE", controls=("Target", "Oracle"),
                       benchmark: str = "tofu", oracle: str = "Oracle") -> QuantizationCheck:
    """Judge every model of `results` (`quantized_results`, each row with its per-item scores) but
    the controls, per code (`verdicts.survives_quantization`): what unlearning removed in full
    precision (target - model), the model's rise under the code beyond the controls' rise (signed:
    a control that falls excuses nothing), and what is still forgotten after the code (quantized
    target - quantized model), each a paired interval over the same items; model utility after
    the code is shown with the reason. A model whose full-precision utility is below the `oracle`
    row's beyond the interval (`verdicts.collapsed`) carries no verdict."""
    statistics = get_benchmark(benchmark).statistics
    statistic = statistics[key]
    rows = {m: part.set_index("precision") for m, part in results.groupby("method", sort=False)}
    full = {m: float(r.loc["fp32", key]) for m, r in rows.items()}
    changes = {m: {c: float(r.loc[c, key]) - full[m] for c in codes} for m, r in rows.items()}
    control = {c: max(0.0, *(changes[m][c] for m in controls)) for c in codes}
    utility = {m: {c: (float(r.loc["fp32", "model_utility"]), float(r.loc[c, "model_utility"])) for c in codes}
               for m, r in rows.items() if "model_utility" in r.columns}
    target = controls[0]
    cases = {}
    for m in rows:
        if m in controls:
            continue
        collapse = (verdicts.collapsed(metric_difference(rows[m].loc["fp32"], rows[oracle].loc["fp32"],
                                                         statistics["model_utility"]), m)
                    if oracle in rows and "model_utility" in statistics else "")
        cases[m] = {}
        for c in codes:
            models = {"u": items_of(rows[m].loc["fp32"]), "qu": items_of(rows[m].loc[c]),
                      **{k: items_of(rows[k].loc["fp32"]) for k in controls},
                      **{f"q{k}": items_of(rows[k].loc[c]) for k in controls}}
            shown = (f"model utility {utility[m][c][0]:.3f} → {utility[m][c][1]:.3f} after {c.upper()}"
                     if m in utility and utility[m][c][1] == utility[m][c][1] else "")
            cases[m][c] = verdicts.survives_quantization(
                metric_difference(rows[target].loc["fp32"], rows[m].loc["fp32"], statistic),
                bootstrap(models, _recovery(statistic, controls)),
                metric_difference(rows[target].loc[c], rows[m].loc[c], statistic), shown, collapse)
    return QuantizationCheck(changes, control, cases, utility)


def small_update_run(lab: Lab, target: str, size: str, forget_split: str, share: float) -> dict:
    """The small-update contrast of the 4-bit check (Zhang et al.): GradDiff with its TOFU recipe at
    `share` of the rate its calibration gives it, a small weight change that rounding can undo."""
    scale = tofu_calibration(lab, "GradDiff", target, size).scale
    small = replace(scale, lr_factor=scale.lr_factor * share, why=f"{scale.why}, then x {share:g}: the small-update contrast")
    return lab.recipe_run(tofu_recipe("GradDiff"), "GradDiff", target, forget_split=forget_split, scale=small)


def precision_table(results, names, values=("forget_Q_A_ROUGE", "forget_Q_A_Prob", "forget_quality", "model_utility")):
    """`quantized_results` as a table of the models `names`, a column per metric and precision."""
    return results.pivot_table(index="method", columns="precision", values=list(values)).loc[list(names)]
