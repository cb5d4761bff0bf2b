"""The MASC paper's TOFU comparison on a real pretrained model (arXiv 2606.02920, Figure 1), as
chapter 14 runs it on SmolLM2-135M-Instruct fine-tuned on TOFU-format data:

- `curation_check`: which real facts the base checkpoint answers on this machine, against the list
  kept with the data (TOFU's real-author and world-fact sets hold only known facts);
- `real_comparison`: every method's paper recipe (RMU tuned under the book's protocol), evaluated
  against the retain-only oracle, MASC again with other seeds;
- `real_signals`: whether the metrics can say anything here (`verdicts.real_tofu_signals`);
- `real_verdicts`: the speed, trade-off and 4-bit claims, judged at the larger of one item and
  MASC's range over its seeds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from unlearning import verdicts
from unlearning.benchmarks import get_benchmark
from unlearning.claims import CANNOT_TELL, record
from unlearning.comparison import TOFU_COLUMNS, model_row, oracle_row
from unlearning.protocol import Lab, Protocol, tofu_recipe, tune_rmu

REAL_COLUMNS = {**{k: v for k, v in TOFU_COLUMNS.items() if k not in ("extraction_strength", "exact_memorization",
                                                                        "privleak")},
                "forget_paraphrased_Q_A_ROUGE": "paraphrased ROUGE-L", "ra_Q_A_ROUGE": "real authors ROUGE-L",
                "wf_Q_A_ROUGE": "world facts ROUGE-L", "privleak": "PrivLeak"}
SEED_COLUMNS = ["seconds", "steps", "forget_Q_A_ROUGE", "forget_Q_A_Prob", "forget_truth_ratio", "model_utility"]


def curation_check(lab: Lab, base_dir, checked: int = 0):
    """Each utility set's candidates (the first `checked`; 0: all) asked again of the base
    checkpoint at `base_dir`, against the questions kept in `tofu-real`'s data: a row per set."""
    import pandas as pd

    from unlearning.benchmarks.tofu import known_items
    from unlearning.models import load_model, load_tokenizer
    from unlearning.world.real_facts import candidates

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
    seeds: object         # DataFrame indexed by seed: MASC's rows (seed 0 the main run); empty without MASC
    stopped: bool         # every MASC run stopped by itself
    learning: dict        # learned model name (the target's, the oracle's) -> its learning.json
    tuned: object = None  # RMU's tuning (`protocol.Tuned`) when RMU ran

    def learned(self):
        """The target's and the oracle's recipe, training time, final loss and gates, a column each."""
        import pandas as pd

        return pd.DataFrame([{"model": name, "authors' answers": info["examples"], "epochs": info["train"]["epochs"],
                              "lr": info["train"]["lr"], "batch": info["train"]["batch_size"],
                              "seconds": info["train_seconds"], "final loss": info["epoch_losses"][-1], **info["gates"]}
                             for name, info in self.learning.items()]).set_index("model").T.map(lambda v: f"{v:.4g}")


def real_comparison(lab: Lab, size: str, forget_split: str, methods, config, *, protocol: Protocol, rmu_grid: dict,
                    seeds=(), with_base: bool = True, max_steps: int = 0, base_dir=None) -> RealComparison:
    """Every method of `methods` from `tofu-real`'s target of `size`: its paper's recipe (every run
    capped at `max_steps` when > 0), RMU tuned under `protocol` on `rmu_grid`; MASC again with each
    of `seeds`; each model evaluated with `config` against the split's retain-only oracle (and the
    checkpoint before fine-tuning at `base_dir` when `with_base`)."""
    import pandas as pd

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
    reseeded = {seed: run("MASC", seed) for seed in (seeds if "MASC" in methods else [])}
    masc = pd.DataFrame()
    if "MASC" in methods:  # seed 0 is the main run; its row has no method column (the results' index)
        masc = pd.DataFrame([{"seed": 0, **results.loc["MASC"].to_dict()}] + [
            {"seed": seed, **model_row("MASC", lab.evaluate("tofu-real", r["dir"], config=config, oracle=oracle), r)}
            for seed, r in reseeded.items()]).drop(columns="method", errors="ignore").set_index("seed")
    stopped = "MASC" in runs and all(r["stopped"] for r in [runs["MASC"], *reseeded.values()])
    learning = {name: json.loads((lab.model(name) / "learning.json").read_text()) for name in (target, oracle_name)}
    return RealComparison(target, oracle_name, results, runs, masc, bool(stopped), learning, tuned)


def real_signals(comparison: RealComparison, methods, utility_resolution: float):
    """`verdicts.real_tofu_signals` on one comparison, the most damaged model among the methods and
    the RMU grid's runs (a run the rule rejected counts: it shows whether model utility moves at all
    when a model breaks). A row per check."""
    import pandas as pd

    results, learning = comparison.results, comparison.learning
    damaged = {m: results.loc[m, "model_utility"] for m in methods}
    if comparison.tuned is not None:
        damaged.update({f"RMU grid, c = {r['steering x norm']:g} x norm": r["model_utility"] for r in comparison.tuned.rows})
    collapsed = min(damaged, key=damaged.get)
    return pd.DataFrame(verdicts.real_tofu_signals(
        results.loc["Target", "forget_quality"], learning[comparison.target]["gates"],
        learning[comparison.oracle]["gates"], results.loc["Target", "model_utility"] - damaged[collapsed], collapsed,
        utility_resolution)).set_index("check")


@dataclass
class RealVerdicts:
    """The MASC paper's claims judged on a real model."""

    speed: verdicts.Verdict
    tradeoff: verdicts.Verdict
    quantization: verdicts.Verdict
    by_code: dict         # 4-bit code -> MASC's Verdict
    axes: dict            # method -> radar axes of its final model
    judged_at: dict       # radar axis -> the smallest difference the comparison resolves
    judged_as: str        # what that resolution is
    speedup: float        # the fastest baseline's seconds over MASC's slowest seed
    masc_seconds: float

    def speed_text(self, comparison: RealComparison, baselines) -> str:
        """`verdicts.speed_sentence` for MASC's slowest seed, with the span of its seeds' times."""
        seconds, results = comparison.seeds["seconds"], comparison.results
        return verdicts.speed_sentence(self.masc_seconds, int(results.loc["MASC", "steps"]), comparison.stopped,
                                       results.loc[list(baselines), "seconds"].to_dict(), "tofu", digits=0) + (
            f" (MASC's slowest of {len(seconds)} seeds, which took {seconds.min():.0f}-{seconds.max():.0f} s)"
            if len(seconds) > 1 else "")

    def sentences(self, comparison: RealComparison, baselines, signals) -> dict[str, str]:
        """The parts of the chapter's conclusion, by the glue name it cites them with."""
        results = comparison.results
        return {"signal": "Every signal is there." if signals["holds"].all() else
                "Not every signal is there (table above): read the comparisons below with that in mind.",
                "speed": self.speed_text(comparison, baselines),
                "ties": ", ".join(f"{a} {r:.3f}" for a, r in self.judged_at.items()),
                "tradeoff": self.tradeoff.reason or self.tradeoff.verdict, "judged_as": self.judged_as,
                "rouge": " → ".join(f"{results.loc[k, 'forget_Q_A_ROUGE']:.2f} ({k})"
                                    for k in ("Target", "MASC", "Oracle")),
                "four_bit": "; ".join(f"{c.upper()} {v.verdict} ({v.reason})" for c, v in self.by_code.items())
                or "not run"}

    def records(self, comparison: RealComparison, check, profile: str) -> str:
        """The three claim rows (`claims.record`), as Markdown."""
        seeds = len(comparison.seeds)
        speed = (f"{self.speedup:.1f}x the fastest of the paper's baselines, MASC "
                 f"{'self-stopped' if comparison.stopped else 'at its cap'}"
                 + (f" (its slowest of {seeds} seeds)" if seeds > 1 else "")) if len(self.axes) > 1 else "-"
        tradeoff = (f"MU {self.axes['MASC']['MU']:.3f} against "
                    + ", ".join(f"{b} {a['MU']:.3f}" for b, a in self.axes.items() if b != "MASC")) if len(self.axes) > 1 else "-"
        quantized = f"MASC's forget ROUGE-L after 4-bit: {check.moves('MASC')}" if self.by_code else "-"
        return "\n\n".join([record("masc-speed-real", speed, self.speed, profile),
                            record("masc-tradeoff-real", tradeoff, self.tradeoff, profile),
                            record("masc-quantization-real", quantized, self.quantization, profile)])


def real_verdicts(comparison: RealComparison, baselines, signals, resolution: dict, check) -> RealVerdicts:
    """Judge MASC against `baselines` (the paper's, final models against final models, as its
    radar): its slowest seed against each baseline's one run (a ratio within MASC's own relative
    range of times cannot tell), the four axes at the larger of one item (`resolution`) and MASC's
    range over its seeds (MU left out when a `signals` check failed), and the 4-bit `check`
    (`comparison.quantization_check`) of its forget ROUGE-L."""
    results, seeds = comparison.results, comparison.seeds
    masc_seconds = float(seeds["seconds"].max())
    base_seconds = results.loc[list(baselines), "seconds"]
    timing = verdicts.value_range(seeds["seconds"]) / seeds["seconds"].min()
    failed = signals.index[~signals["holds"].astype(bool)]
    missing = {"MU": "a signal is missing, this check failed: " + "; ".join(failed)} if len(failed) else {}
    axes = {name: verdicts.tofu_axes(results.loc[name]) for name in ["MASC", *baselines]}
    if len(seeds) > 1:
        judged_at = verdicts.seed_resolution(resolution, [verdicts.tofu_axes(row) for _, row in seeds.iterrows()])
        judged_as = f"the larger of one item and MASC's range over {len(seeds)} seeds"
    else:
        judged_at, judged_as = resolution, "one item"
    by_code = check.cases.get("MASC", {})
    quantization = (verdicts.combine(list(by_code.values()), [c.upper() for c in by_code]) if by_code else
                    verdicts.Verdict(CANNOT_TELL, "MASC is not among this profile's 4-bit models"))
    return RealVerdicts(
        speed=verdicts.speed_against_paper(masc_seconds, base_seconds.to_dict(), "tofu", comparison.stopped, timing),
        tradeoff=verdicts.tofu_tradeoff(axes, judged_at, floors=missing, resolution_kind=judged_as),
        quantization=quantization, by_code=by_code, axes=axes, judged_at=judged_at, judged_as=judged_as,
        speedup=float((base_seconds / masc_seconds).min()) if len(base_seconds) else float("nan"),
        masc_seconds=masc_seconds)
