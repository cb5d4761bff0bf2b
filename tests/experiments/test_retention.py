"""The SAGO paper's comparisons (experiments.retention): the RWKU claim row and the geometry runs'
specification."""

from dataclasses import dataclass

import pandas as pd

from experiments.claims import HELD
from experiments.retention import WMDP_BIO, geometry_runs, rwku_differences, rwku_record


def _probes(name, forget, neighbour, n=30):
    """RWKU evaluation items around the given summaries (every forget level at `forget`, every
    neighbour level at `neighbour`), noise centred to zero from a stream named by `name`."""
    import zlib

    import numpy as np

    from unlearning.benchmarks.rwku import FORGET_METRICS, NEIGHBOUR_METRICS

    rng = np.random.default_rng(zlib.crc32(name.encode()))

    def around(value):
        draw = rng.normal(0, 0.1, n)
        return list(value + draw - draw.mean())

    levels = {m.removesuffix("_rougeL_recall"): forget for m in FORGET_METRICS}
    levels |= {m.removesuffix("_rougeL_recall"): neighbour for m in NEIGHBOUR_METRICS}
    return {split: {"recall": around(value)} for split, value in levels.items()}


def _grid(rows):
    return pd.DataFrame([{"objective": o, "rule": r, "forget": f, "neighbour": n, "items": _probes(f"{o}-{r}", f, n)}
                         for o, r, f, n in rows])


def test_the_rwku_row_names_each_objective_s_gain_and_its_verdict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = _grid([("GradDiff", "sum", 0.30, 0.10), ("GradDiff", "pcgrad", 0.32, 0.20), ("GradDiff", "sago", 0.325, 0.35)])
    line = rwku_record("sago-rwku", results, ["GradDiff"], "smoke")
    # SAGO keeps 15 points more neighbour knowledge at forgetting within the interval of PCGrad's: held
    assert f"**{HELD}**" in line and (tmp_path / "book/generated/findings/sago-rwku.json").is_file()
    finding = (tmp_path / "book/generated/findings/sago-rwku.json").read_text()
    assert "paired bootstrap over" in finding and "kept +0.150" in finding
    empty = rwku_record("sago-rwku", results.iloc[:1], ["GradDiff"], "smoke", empty="no triple")
    assert "cannot tell" in empty
    assert "no triple" in (tmp_path / "book/generated/findings/sago-rwku.json").read_text()


def test_reseeded_runs_widen_the_rwku_interval():
    results = _grid([("GradDiff", "sum", 0.30, 0.10), ("GradDiff", "pcgrad", 0.32, 0.20), ("GradDiff", "sago", 0.32, 0.26)])
    alone = rwku_differences(results, ["GradDiff"])["GA+GD"][0]
    seeds = pd.DataFrame([{"rule": r, "seed": k, "forget": 0.32, "neighbour": n, "items": _probes(f"{r}{k}", 0.32, n)}
                          for r, values in {"pcgrad": (0.20, 0.10, 0.30), "sago": (0.26, 0.36, 0.16)}.items()
                          for k, n in enumerate(values)]).set_index(["rule", "seed"])
    seeds.attrs["objective"] = "GradDiff"
    widened = rwku_differences(results, ["GradDiff"], over_seeds=seeds)["GA+GD"][0]
    assert alone.positive and not widened.resolved  # a seed spread of 0.1 a rule swamps the 6-point gap
    assert "3 and 3 training seeds" in widened.how


@dataclass(frozen=True)
class _Spec:
    name: str
    options: dict
    optim: object


class _SpecLab:
    """Records the specifications it is asked to run."""

    def __init__(self):
        self.specs = []

    def recipe_spec(self, recipe, run_name, start, **options):
        from unlearning.engine import OptimConfig

        return _Spec(run_name, options, OptimConfig())

    def run_spec(self, spec, start):
        self.specs.append(spec)
        return {"log": [], "spec": spec}


def test_the_geometry_runs_log_the_geometry_of_each_rule_on_wmdp_bio(monkeypatch):
    from types import SimpleNamespace

    from experiments import retention

    calibrated = []

    def fake_calibration(lab, recipe, name, start, **where):
        calibrated.append((recipe, name, where["rule"], where["record_geometry"], where["forget"]))
        return SimpleNamespace(scale=f"{name} calibrated")

    monkeypatch.setattr(retention, "calibration", fake_calibration)
    lab = _SpecLab()
    runs = geometry_runs(lab, "GradDiff", ["sum", "sago"], "base-xs")
    assert list(runs) == ["sum", "sago"] and len(lab.specs) == 2
    # each rule at the rate its calibration chose, as chapter 11's grid runs it (geometry on, WMDP-Bio's accuracy)
    assert calibrated == [("sago/wmdp-bio", f"GradDiff/{r}", r, True, "wmdp-bio_accuracy") for r in ("sum", "sago")]
    assert all(s.options == {"rule": r, "record_geometry": True, "optimizer": None, "scale": f"GradDiff/{r} calibrated",
                             **WMDP_BIO} for s, r in zip(lab.specs, runs))
    geometry_runs(lab, "GradDiff", ["sago"], "base-xs", optimizer="sgd")
    assert lab.specs[-1].options["optimizer"] == "sgd"


def _wmdp_row(rule, bio, mmlu, n=200):
    """A WMDP evaluation with `bio` and `mmlu` accuracies over n questions each (right answers first)."""
    correct = {s: [1.0] * round(a * n) + [0.0] * (n - round(a * n)) for s, a in (("wmdp-bio", bio), ("mmlu", mmlu))}
    return {"split": "bio", "objective": "GradDiff", "rule": rule, "wmdp-bio_accuracy": bio, "mmlu_accuracy": mmlu,
            "forget": bio, "recovery %": 100 * mmlu / 0.6,
            "items": {s: {"correct": c} for s, c in {**correct, "wmdp-cyber": correct["wmdp-bio"]}.items()}}


def test_the_wmdp_verdicts_read_paired_accuracies_and_refuse_collapsed_runs():
    from experiments.claims import CANNOT_TELL
    from experiments.retention import WmdpVerdicts

    target = _wmdp_row("-", 0.6, 0.6)
    rules = {"sum": (0.26, 0.27), "pcgrad_global": (0.28, 0.51), "pcgrad": (0.27, 0.53), "sago": (0.28, 0.57)}
    main = pd.DataFrame([_wmdp_row(r, *a) for r, a in rules.items()])
    judged = WmdpVerdicts(main, target, {}, ["bio"], ["GradDiff"])
    # +GD's MMLU 0.27 over 200 questions cannot be told from chance: its run collapsed, no verdict
    case = judged.recovery["bio", "GradDiff"]
    assert case.verdict == CANNOT_TELL and "sum" in case.reason and "collapsed" in case.reason
    assert judged.granularity["bio", "GradDiff"].verdict == HELD  # 0.51 < 0.53 < 0.57, forgetting alike
    rules["sum"] = (0.26, 0.40)  # +GD keeps utility above chance: PCGrad and SAGO recover more, forgetting alike
    judged = WmdpVerdicts(pd.DataFrame([_wmdp_row(r, *a) for r, a in rules.items()]), target, {}, ["bio"],
                          ["GradDiff"])
    assert judged.recovery["bio", "GradDiff"].verdict == HELD
    assert "paired bootstrap over" in judged.resolution_text()
    # the same runs, SAGO's failing its check before judging (it did not forget): neither claim is signed
    from experiments.calibration import Check
    from experiments.intervals import Estimate
    forgot, stayed = Estimate(-0.1, -0.2, -0.05), Estimate(0.0, -0.1, 0.1)  # end minus start of the forget accuracy
    rows = [{**_wmdp_row(r, *a), "check": Check(r, 1.0, 1.0, stayed if r == "sago" else forgot, False)}
            for r, a in rules.items()]
    judged = WmdpVerdicts(pd.DataFrame(rows), target, {}, ["bio"], ["GradDiff"])
    for claim in (judged.recovery, judged.granularity):
        assert claim["bio", "GradDiff"].verdict == CANNOT_TELL
        assert "sago did not forget beyond its interval" in claim["bio", "GradDiff"].reason


def test_an_objective_whose_rule_did_not_forget_carries_no_rwku_verdict():
    from experiments import verdicts
    from experiments.calibration import Check
    from experiments.intervals import Estimate
    from experiments.retention import unmoved_rules

    def row(objective, rule, change):
        return {"objective": objective, "rule": rule, "check": Check(rule, 1.0, 1.0, change, False)}

    moved, still = Estimate(-0.1, -0.15, -0.05), Estimate(-0.05, -0.10, +0.01)
    results = pd.DataFrame([row("GradDiff", "pcgrad", moved), row("GradDiff", "sago", still),
                            row("SimNPO+GD", "pcgrad", moved), row("SimNPO+GD", "sago", moved),
                            row("SimNPO+GD", "sum", still)])  # +GD is not read by the claim
    unmoved = unmoved_rules(results, ["GradDiff", "SimNPO+GD"])
    assert list(unmoved) == ["GA+GD"] and "sago -0.050 [-0.100, +0.010]" in unmoved["GA+GD"]
    keeps = (Estimate(0.1, 0.05, 0.15), Estimate(0.0, -0.02, 0.02))  # SAGO keeps more at the same forgetting
    judged = verdicts.sago_keeps_more_over({"GA+GD": keeps, "SimNPO+GD": keeps}, unmoved=unmoved)
    assert judged.verdict == verdicts.HELD and "GA+GD: forgetting did not move" in judged.reason
    assert verdicts.sago_keeps_more_over({"GA+GD": keeps}, unmoved=unmoved).verdict == verdicts.CANNOT_TELL
