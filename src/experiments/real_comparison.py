"""The MASC paper's TOFU comparison on a real pretrained model (arXiv 2606.02920, Figure 1), as
chapter 14 runs it on SmolLM2-135M-Instruct fine-tuned on TOFU-format data:

- `curation_check`: which real facts the base checkpoint answers on this machine, against the list
  kept with the data (TOFU's real-author and world-fact sets hold only known facts);
- `real_comparison`: every method's paper recipe (RMU tuned under the book's protocol), evaluated
  against the retain-only oracle, every paper method again with other seeds;
- `real_signals`: whether the metrics can say anything here (`verdicts.real_tofu_signals`);
- `real_verdicts`: the speed, trade-off and 4-bit claims, every difference with its paired 95 %
  interval over the same items, widened by each side's spread over its seeds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from experiments import verdicts
from experiments.claims import CANNOT_TELL, record
from experiments.comparison import TOFU_COLUMNS, axis_differences, model_row, oracle_row
from experiments.intervals import (Estimate, binomial_half_width, floored, from_table, items_of, mean_items,
                                  metric_difference, time_ratio, with_seeds)
from experiments.lab import Lab, Protocol, tofu_recipe, tune_rmu
from laboratory.world.real_facts import candidates
from unlearning.benchmarks import get_benchmark
from unlearning.benchmarks.tofu import PARAPHRASE_CHANCE, known_items
from unlearning.models import load_model, load_tokenizer

REAL_COLUMNS = {**{k: v for k, v in TOFU_COLUMNS.items() if k not in ("extraction_strength", "exact_memorization",
                                                                        "privleak")},
                "forget_paraphrased_Q_A_ROUGE": "paraphrased ROUGE-L", "ra_Q_A_ROUGE": "real authors ROUGE-L",
                "wf_Q_A_ROUGE": "world facts ROUGE-L", "privleak": "PrivLeak"}
SEED_COLUMNS = ["seconds", "steps", "forget_Q_A_ROUGE", "forget_Q_A_Prob", "forget_truth_ratio", "model_utility"]


def curation_check(lab: Lab, base_dir, checked: int = 0):
    """Each utility set's candidates (the first `checked`; 0: all) asked again of the base
    checkpoint at `base_dir`, against the questions kept in `tofu-real`'s data: a row per set."""
    model, tokenizer, bench, rows = load_model(base_dir), load_tokenizer(base_dir), get_benchmark("tofu-real"), []
    for kind, split in (("real_authors", "real_authors_perturbed"), ("world_facts", "world_facts_perturbed")):
        items = candidates(kind)[:checked or None]
        kept = {it["question"] for it in bench.load(lab.data / "tofu-real", split)}
        answered = {it["question"] for it, ok in zip(items, known_items(model, tokenizer, items)) if ok}
        rows.append({"set": kind.replace("_", " "), "candidates": len(items), "answered here": len(answered),
                     "kept in the data": len(kept), "kept and answered here": len(kept & answered)})
    return pd.DataFrame(rows).set_index("set")


@dataclass
class RealComparison:
    """The runs and evaluations of chapter 14's comparison."""

    target: str           # the learned model every run starts from
    oracle: str           # the split's retain-only oracle
    results: object       # DataFrame indexed by method: Oracle, Target, Base (when evaluated), every method
    runs: dict            # method -> run record
    seeds: object         # DataFrame indexed by (method, seed): every method but RMU, seed 0 its main run
    stopped: bool         # every MASC run stopped by itself
    learning: dict        # learned model name (the target's, the oracle's) -> its learning.json
    tuned: object = None  # RMU's tuning (`protocol.Tuned`) when RMU ran
    reseeded: dict = field(default_factory=dict)  # (method, seed) -> its run record (seed 0: `runs`)

    def seeds_of(self, method: str):
        """`method`'s rows of `seeds`, indexed by seed (empty when it has none)."""
        has = len(self.seeds) and method in self.seeds.index.get_level_values("method")
        return self.seeds.xs(method, level="method") if has else pd.DataFrame()

    def record(self, method: str, seed: int) -> dict:
        """The run record of `method` with `seed` (0: the main run)."""
        return self.runs[method] if seed == 0 else self.reseeded[(method, seed)]

    def learned(self):
        """The target's and the oracle's recipe, training time, final loss and gates, a column each."""
        return pd.DataFrame([{"model": name, "authors' answers": info["examples"], "epochs": info["train"]["epochs"],
                              "lr": info["train"]["lr"], "batch": info["train"]["batch_size"],
                              "seconds": info["train_seconds"], "final loss": info["epoch_losses"][-1], **info["gates"]}
                             for name, info in self.learning.items()]).set_index("model").T.map(lambda v: f"{v:.4g}")


def real_comparison(lab: Lab, size: str, forget_split: str, methods, config, *, protocol: Protocol, rmu_grid: dict,
                    seeds=(), seeded=None, with_base: bool = True, max_steps: int = 0, base_dir=None) -> RealComparison:
    """Every method of `methods` from `tofu-real`'s target of `size`: its paper's recipe (every run
    capped at `max_steps` when > 0), RMU tuned under `protocol` on `rmu_grid`; the methods of
    `seeded` (None: all but RMU, which is tuned) again with each of `seeds`; each model evaluated
    with `config` against the split's oracle (and the checkpoint at `base_dir` when `with_base`)."""
    bench = get_benchmark("tofu-real")
    target, oracle_name = bench.target(size), bench.oracle(forget_split, size)
    oracle = lab.evaluate("tofu-real", lab.model(oracle_name), config=config)
    rows = [oracle_row(oracle), model_row("Target", lab.evaluate("tofu-real", lab.model(target), config=config,
                                                                 oracle=oracle))]
    if with_base:
        rows.append(model_row("Base", lab.evaluate("tofu-real", base_dir, config=config, oracle=oracle)))
    tuned = (tune_rmu(lab, "tofu-real", target, protocol, forget_metric="forget_Q_A_Prob", retain_metric="model_utility",
                      forget_split=forget_split, config=config, oracle=oracle, grid=rmu_grid) if "RMU" in methods else None)
    cap = {"max_steps": max_steps} if max_steps else {}

    def run(method, seed=None):
        if method == "RMU":
            return lab.run("tofu-real", "RMU", target, tuned.protocol, forget_split=forget_split, hparams=tuned.hparams)
        return lab.recipe_run(tofu_recipe(method), method, target, benchmark="tofu-real", forget_split=forget_split,
                              **({"seed": seed} if seed is not None else {}), **cap)

    runs = {method: run(method) for method in methods}
    rows += [model_row(m, lab.evaluate("tofu-real", r["dir"], config=config, oracle=oracle), r) for m, r in runs.items()]
    results = pd.DataFrame(rows).set_index("method")
    paper = [m for m in methods if m != "RMU"]  # RMU, tuned under the book's protocol, is not reseeded
    reseeded = {(m, seed): run(m, seed) for m in paper if seeded is None or m in seeded for seed in seeds}
    seed_rows = []  # each paper method: its main run (seed 0), then its reruns
    for m in paper:
        seed_rows.append({"method": m, "seed": 0, **results.loc[m].to_dict()})
        seed_rows += [{"seed": seed, **model_row(m, lab.evaluate("tofu-real", r["dir"], config=config, oracle=oracle), r)}
                      for (name, seed), r in reseeded.items() if name == m]
    table = pd.DataFrame(seed_rows).set_index(["method", "seed"]) if seed_rows else pd.DataFrame()
    masc_runs = [runs["MASC"], *(r for (m, _), r in reseeded.items() if m == "MASC")] if "MASC" in runs else []
    stopped = bool(masc_runs) and all(r["stopped"] for r in masc_runs)
    learning = {name: json.loads((lab.model(name) / "learning.json").read_text()) for name in (target, oracle_name)}
    return RealComparison(target, oracle_name, results, runs, table, stopped, learning, tuned, reseeded)


def real_signals(comparison: RealComparison, methods, forget_items: int):
    """`verdicts.real_tofu_signals` on one comparison: the target's paraphrase accuracies from its
    learning gates (a binomial 95 % interval over its `forget_items` questions, never narrower than
    one question), and model utility of the target minus the most damaged model among the methods
    (paired interval over the same items; RMU's grid runs, which the rule rejected, count too when
    their evaluations hold items). A row per check."""
    results, gates = comparison.results, comparison.learning[comparison.target]["gates"]
    paraphrase = {}
    for key, words in (("forget_paraphrased_question_accuracy", "paraphrased-question"),
                       ("forget_paraphrase_accuracy", "fully paraphrased")):
        acc = float(gates[key])
        paraphrase[words] = floored(from_table(acc, binomial_half_width(acc, forget_items, paired=False),
                                               f"binomial over {forget_items} questions"), 1 / forget_items)
    candidates = {m: results.loc[m] for m in methods}
    if comparison.tuned is not None:
        candidates.update({f"RMU grid, c = {r['steering x norm']:g} x norm": r for r in comparison.tuned.rows
                           if items_of(r) is not None})
    damaged = min(candidates, key=lambda m: float(candidates[m]["model_utility"]))
    drop = metric_difference(results.loc["Target"], candidates[damaged], get_benchmark("tofu-real").statistics["model_utility"])
    return pd.DataFrame(verdicts.real_tofu_signals(results.loc["Target", "forget_quality"], paraphrase, PARAPHRASE_CHANCE,
                                                   drop, damaged)).set_index("check")


@dataclass
class RealVerdicts:
    """The MASC paper's claims judged on a real model."""

    speed: verdicts.Verdict
    tradeoff: verdicts.Verdict
    quantization: verdicts.Verdict
    by_code: dict         # 4-bit code -> MASC's Verdict
    axes: dict            # method -> radar axes of its final model
    differences: dict     # baseline -> radar axis -> MASC minus the baseline (`intervals.Estimate`)
    speedup: object       # the fastest baseline's seconds over MASC's slowest seed (`intervals.Estimate`)
    masc_seconds: float
    collapse: str = ""

    def speed_text(self, comparison: RealComparison, baselines) -> str:
        """`verdicts.speed_sentence`: MASC's slowest seed (its seeds' span) against each baseline's fastest."""
        seconds, results = comparison.seeds_of("MASC")["seconds"], comparison.results
        fastest = {b: float(comparison.seeds_of(b)["seconds"].min()) for b in baselines}
        runs = max(len(comparison.seeds_of(b)) for b in baselines) if baselines else 1
        return verdicts.speed_sentence(self.masc_seconds, int(results.loc["MASC", "steps"]), comparison.stopped,
                                       fastest, "tofu", self.speedup, digits=0) + (
            f" (MASC's slowest of {len(seconds)} seeds, which took {seconds.min():.0f}-{seconds.max():.0f} s"
            + (f", against each baseline's fastest of its {runs} seeds" if runs > 1 else "") + ")"
            if len(seconds) > 1 else "") + (f". {self.collapse}" if self.collapse else "")

    def sentences(self, comparison: RealComparison, baselines, signals) -> dict[str, str]:
        """The parts of the chapter's conclusion, by the glue name it cites them with."""
        results = comparison.results
        return {"signal": "Every signal is there." if signals["holds"].all() else
                "Not every signal is there (table above): read the comparisons below with that in mind.",
                "speed": self.speed_text(comparison, baselines),
                "ties": self.tradeoff.evidence or "no baseline",
                "tradeoff": self.tradeoff.reason or self.tradeoff.verdict,
                "judged_as": self.tradeoff.resolution or "no interval",
                "rouge": " → ".join(f"{results.loc[k, 'forget_Q_A_ROUGE']:.2f} ({k})"
                                    for k in ("Target", "MASC", "Oracle")),
                "four_bit": "; ".join(f"{c.upper()} {v.verdict} ({v.reason})" for c, v in self.by_code.items())
                or "not run"}

    def differences_table(self):
        """MASC minus each baseline on every radar axis, with its 95 % interval."""
        return pd.DataFrame({b: {a: d.text() for a, d in axes.items()} for b, axes in self.differences.items()}
                            ).T.rename_axis("MASC minus")

    def records(self, comparison: RealComparison, check, profile: str) -> str:
        """The three claim rows (`claims.record`), as Markdown."""
        seeds = len(comparison.seeds_of("MASC"))
        speed = (f"{self.speedup.value:.1f}x the fastest of the paper's baselines, MASC "
                 f"{'self-stopped' if comparison.stopped else 'at its cap'}"
                 + (f" (its slowest of {seeds} seeds)" if seeds > 1 else "")) if len(self.axes) > 1 else "-"
        tradeoff = (f"MU {self.axes['MASC']['MU']:.3f} against "
                    + ", ".join(f"{b} {a['MU']:.3f}" for b, a in self.axes.items() if b != "MASC")) if len(self.axes) > 1 else "-"
        quantized = f"MASC's forget ROUGE-L after 4-bit: {check.moves('MASC')}" if self.by_code else "-"
        return "\n\n".join([record("masc-speed-real", speed, self.speed, profile),
                             record("masc-tradeoff-real", tradeoff, self.tradeoff, profile),
                             record("masc-quantization-real", quantized, self.quantization, profile)])


def _seeded_side(comparison: RealComparison, method: str) -> tuple[dict, list[dict]]:
    """`method`'s side of a paired difference: its items averaged over its seeds (its main row
    when it ran once), and its radar axes at each seed (one entry when it ran once)."""
    rows = comparison.seeds_of(method)
    if len(rows) < 2:
        return comparison.results.loc[method], [verdicts.tofu_axes(comparison.results.loc[method])]
    return {"items": mean_items(list(rows["items"]))}, [verdicts.tofu_axes(r) for _, r in rows.iterrows()]


def seeded_differences(comparison: RealComparison, baselines) -> dict:
    """MASC minus each baseline on the radar axes (`comparison.axis_differences`), each side's
    items averaged over its seeds, the interval widened by the spread of each axis over both
    sides' seeds (a side run once borrows the other's spread; `intervals.with_seeds`)."""
    statistics = get_benchmark("tofu-real").statistics
    masc, masc_axes = _seeded_side(comparison, "MASC")
    out = {}
    for b in baselines:
        other, other_axes = _seeded_side(comparison, b)
        d = axis_differences(masc, other, statistics)
        out[b] = {a: with_seeds(e, [x[a] for x in masc_axes], [x[a] for x in other_axes]) for a, e in d.items()}
    return out


def real_verdicts(comparison: RealComparison, baselines, signals, check) -> RealVerdicts:
    """Judge MASC against `baselines` (the paper's, final models against final models, as its
    radar): its slowest seed's time against the fastest run of any baseline and seed (each run's
    steps resampled, `intervals.time_ratio`), the four axes as paired differences over the same
    items widened by the seeds' spread (`seeded_differences`; MU left out when a `signals` check
    failed), and the 4-bit `check` (`comparison.quantization_check`) of its forget ROUGE-L. A MASC
    run whose utility is below the oracle's beyond the interval carries no verdict at all."""
    results, seeds = comparison.results, comparison.seeds_of("MASC")
    masc_seconds = float(seeds["seconds"].max())
    masc_record = comparison.record("MASC", int(seeds["seconds"].idxmax()))
    base_runs = [(float(row["seconds"]), b, int(seed)) for b in baselines for seed, row in comparison.seeds_of(b).iterrows()]
    ratio = (time_ratio(comparison.record(*min(base_runs)[1:]), masc_record) if base_runs
             else Estimate(float("nan"), float("nan"), float("nan")))
    failed = signals.index[~signals["holds"].astype(bool)]
    missing = {"MU": "a signal is missing, this check failed: " + "; ".join(failed)} if len(failed) else {}
    axes = {name: verdicts.tofu_axes(results.loc[name]) for name in ["MASC", *baselines]}
    differences = seeded_differences(comparison, baselines)
    collapse = verdicts.collapsed(metric_difference(results.loc["MASC"], results.loc["Oracle"],
                                                    get_benchmark("tofu-real").statistics["model_utility"]))
    by_code = check.cases.get("MASC", {})
    quantization = (verdicts.Verdict(CANNOT_TELL, collapse) if collapse and by_code else
                    verdicts.combine(list(by_code.values()), [c.upper() for c in by_code]) if by_code else
                    verdicts.Verdict(CANNOT_TELL, "MASC is not among this profile's 4-bit models"))
    return RealVerdicts(
        speed=verdicts.speed_against_paper(ratio, "tofu", comparison.stopped, collapse),
        tradeoff=verdicts.tofu_tradeoff(differences, floors=missing, collapse=collapse),
        quantization=quantization, by_code=by_code, axes=axes, differences=differences, speedup=ratio,
        masc_seconds=masc_seconds, collapse=collapse)
