"""Chapter 14's comparison on a real model (experiments.real_comparison): the signals that say
whether its metrics can move, and the claims judged with paired intervals over the same items,
widened by each side's spread over its seeds, on results written out by hand."""

import pandas as pd
import pytest
from helpers import tofu_metrics

from experiments.claims import CANNOT_TELL, HELD, NOT_HELD
from experiments.comparison import quantization_check
from experiments.real_comparison import RealComparison, real_comparison, real_signals, real_verdicts

AXES = {"forget_Q_A_ROUGE": 0.2, "forget_Q_A_Prob": 0.1, "forget_truth_ratio": 0.6}
GATES = {"forget_paraphrased_question_accuracy": 0.9, "forget_paraphrase_accuracy": 0.5}


def _record(seconds, steps):
    return {"train_seconds": seconds, "probe_seconds": 0.0, "steps": steps, "stopped": True,
            "log": [{"step": i + 1, "seconds": seconds / steps} for i in range(steps)]}


def _comparison(masc_utility=0.50, seconds=(10.0, 12.0), gates=GATES, forget_quality=1e-6,
                baseline_seconds=(120.0,)) -> RealComparison:
    """MASC with a seed per entry of `seconds`, GradDiff with one per entry of `baseline_seconds`."""
    def row(method, name, rouge, utility, secs=0.0, steps=0, **extra):
        return {"method": method, "seconds": secs, "steps": steps, **tofu_metrics(name, rouge, utility), **extra}

    results = pd.DataFrame([
        row("Oracle", "oracle", 0.2, 0.52, forget_quality=1.0),
        row("Target", "target", 0.9, 0.52, forget_quality=forget_quality),
        row("MASC", "masc-0", 0.2, masc_utility, seconds[0], 30),
        row("GradDiff", "graddiff", 0.3, 0.30, 120.0, 250),
    ]).set_index("method")
    seeds = pd.DataFrame([{"method": "MASC", "seed": i, "seconds": s, "steps": 30,
                           **tofu_metrics(f"masc-{i}", 0.2, masc_utility)} for i, s in enumerate(seconds)]
                         + [{"method": "GradDiff", "seed": i, "seconds": s, "steps": 250,
                             **tofu_metrics("graddiff" if i == 0 else f"graddiff-{i}", 0.3, 0.30 - 0.01 * i)}
                            for i, s in enumerate(baseline_seconds)]).set_index(["method", "seed"])
    learning = {"tofu-real/target-135m": {"gates": gates}, "tofu-real/retain90-135m": {"gates": GATES}}
    runs = {"MASC": _record(seconds[0], 30), "GradDiff": _record(baseline_seconds[0], 250)}
    reseeded = {**{("MASC", i): _record(s, 30) for i, s in enumerate(seconds) if i},
                **{("GradDiff", i): _record(s, 250) for i, s in enumerate(baseline_seconds) if i}}
    return RealComparison("tofu-real/target-135m", "tofu-real/retain90-135m", results, runs, seeds, True, learning,
                          reseeded=reseeded)


def _check(masc_nf4: float):
    """MASC at forget ROUGE-L 0.2 in full precision, the target at 0.9 moving by -0.02 under NF4."""
    rows = [{"method": "Target", "precision": "fp32", **tofu_metrics("t", 0.9, 0.5)},
            {"method": "Target", "precision": "nf4", **tofu_metrics("t4", 0.88, 0.5)},
            {"method": "MASC", "precision": "fp32", **tofu_metrics("m", 0.2, 0.5)},
            {"method": "MASC", "precision": "nf4", **tofu_metrics("m4", masc_nf4, 0.5)}]
    return quantization_check(pd.DataFrame(rows), ["nf4"], controls=("Target",), benchmark="tofu-real")


def _signals(comparison=None):
    return real_signals(comparison or _comparison(), ["MASC", "GradDiff"], forget_items=40)


def test_the_signals_read_the_target_gates_and_the_most_damaged_model():
    signals = _signals()
    assert list(signals["holds"]) == [True, True, True, True]
    # utility moves: the target's 0.52 against GradDiff's 0.30, the most damaged model
    assert signals["value"].iloc[-1] == pytest.approx(0.22) and "GradDiff" in signals.index[-1]
    weak = real_signals(_comparison(gates={**GATES, "forget_paraphrase_accuracy": 0.2}, masc_utility=0.52), ["MASC"], 40)
    # 0.2 over 40 questions: an interval that covers chance 1/6; MASC alone does not move utility
    assert list(weak["holds"]) == [True, True, False, False]


def test_speed_is_judged_on_masc_s_slowest_seed_and_rounding_on_the_target_s_change():
    judged = real_verdicts(_comparison(), ["GradDiff"], _signals(), _check(0.22))
    assert judged.masc_seconds == 12.0 and judged.speedup.value == pytest.approx(10.0)
    assert judged.speed.verdict == HELD and judged.collapse == ""
    # removed 0.7, rose 0.02 under NF4 (inside its interval), still far below the quantized target: held
    assert judged.by_code["nf4"].verdict == HELD and judged.quantization.verdict == HELD
    assert _verdict_of(_check(0.45)) == NOT_HELD  # rose 0.25: knowledge came back
    # MASC keeps the best MU (0.50 against 0.30) and leads or ties every forget axis: held
    assert judged.tradeoff.verdict == HELD, judged.tradeoff.reason
    assert "widened by the spread over 2 and 1 training seeds" in judged.tradeoff.resolution


def test_reseeded_baselines_average_their_items_and_widen_by_both_spreads():
    """GradDiff with three seeds: its fastest seed sets the speed ratio, its items are averaged over
    its seeds, and each interval is widened by both sides' spreads (a wider interval than MASC's
    alone, around the same mean for a metric that is equal at every seed)."""
    once = real_verdicts(_comparison(), ["GradDiff"], _signals(), _check(0.22))
    comparison = _comparison(baseline_seconds=(120.0, 60.0, 90.0))
    judged = real_verdicts(comparison, ["GradDiff"], _signals(comparison), _check(0.22))
    assert judged.speedup.value == pytest.approx(5.0)  # 60 s, GradDiff's fastest seed, over MASC's slowest 12 s
    assert "against each baseline's fastest of its 3 seeds" in judged.speed_text(comparison, ["GradDiff"])
    assert "over 2 and 3 training seeds" in judged.tradeoff.resolution
    utility = judged.differences["GradDiff"]["MU"]
    assert utility.value == pytest.approx(0.50 - 0.29)  # GradDiff's utilities 0.30, 0.29, 0.28 averaged
    alone = once.differences["GradDiff"]["MU"]
    assert utility.high - utility.low > alone.high - alone.low


def _verdict_of(check):
    return real_verdicts(_comparison(), ["GradDiff"], _signals(), check).quantization.verdict


def test_a_collapsed_masc_carries_no_speed_verdict():
    comparison = _comparison(masc_utility=0.05)
    judged = real_verdicts(comparison, ["GradDiff"], _signals(comparison), _check(0.22))
    assert judged.speed.verdict == CANNOT_TELL and "below the oracle's" in judged.speed.reason


def test_a_missing_signal_takes_model_utility_out_of_the_trade_off():
    comparison = _comparison(forget_quality=0.5)  # the KS test cannot tell the target from the oracle
    judged = real_verdicts(comparison, ["GradDiff"], _signals(comparison), _check(0.22))
    assert judged.tradeoff.verdict == CANNOT_TELL and "a signal is missing" in judged.tradeoff.reason


def test_without_masc_among_the_4_bit_models_the_check_cannot_tell():
    rows = [{"method": "Target", "precision": p, **tofu_metrics("t" + p, 0.9, 0.5)} for p in ("fp32", "nf4")]
    check = quantization_check(pd.DataFrame(rows), ["nf4"], controls=("Target",), benchmark="tofu-real")
    assert _verdict_of(check) == CANNOT_TELL


def test_the_claim_rows_are_written_for_the_profile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    comparison = _comparison()
    judged = real_verdicts(comparison, ["GradDiff"], _signals(comparison), _check(0.22))
    text = judged.records(comparison, _check(0.22), "smoke")
    assert text.count("**") == 6 and sorted(p.name for p in (tmp_path / "book/generated/findings").iterdir()) == [
        "masc-quantization-real.json", "masc-speed-real.json", "masc-tradeoff-real.json"]
    speed = judged.speed_text(comparison, ["GradDiff"])
    assert "**10.0x** faster than the fastest" in speed and speed.endswith("slowest of 2 seeds, which took 10-12 s)")
    assert "+0.200" in judged.differences_table().loc["GradDiff", "MU"]


class _RealLab:
    """Models are their names, runs their (method, seed); metrics a table by model, each with its
    learning.json written under `root`."""

    def __init__(self, root):
        import json

        self.root, self.runs = root, []
        for name in ("tofu-real/target-135m", "tofu-real/retain90-135m"):
            (root / name).mkdir(parents=True)
            (root / name / "learning.json").write_text(json.dumps({"gates": GATES}))

    def model(self, name):
        return self.root / name

    def recipe_run(self, recipe, method, target, *, benchmark, forget_split, seed=None, **cap):
        self.runs.append((recipe, method, seed, cap.get("max_steps")))
        return {"dir": f"{method}-{seed or 0}", "steps": 5, "stopped": True, "train_seconds": 2.0 + (seed or 0),
                "probe_seconds": 0.5, "log": []}

    def evaluate(self, benchmark, model_dir, config=None, oracle=None):
        return {**AXES, "model_utility": 0.4 if "GradDiff" in str(model_dir) else 0.5, "forget_quality": 0.01}


@pytest.mark.parametrize("seeds, seeded", [([], None), ([1, 2], None), ([1, 2], ["MASC"])])
def test_the_comparison_runs_each_recipe_and_again_with_each_seed(tmp_path, seeds, seeded):
    lab = _RealLab(tmp_path)
    real = real_comparison(lab, "135m", "forget10", ["GradDiff", "MASC"], None, protocol=None, rmu_grid={}, seeds=seeds,
                           seeded=seeded, with_base=False, max_steps=4)
    rerun = ["GradDiff", "MASC"] if seeded is None else seeded
    recipes = {"GradDiff": "openunlearning/tofu", "MASC": "masc/tofu"}
    assert lab.runs == [("openunlearning/tofu", "GradDiff", None, 4), ("masc/tofu", "MASC", None, 4)] + [
        (recipes[m], m, s, 4) for m in rerun for s in seeds]
    assert list(real.results.index) == ["Oracle", "Target", "GradDiff", "MASC"] and real.stopped
    assert (real.target, real.oracle) == ("tofu-real/target-135m", "tofu-real/retain90-135m")
    for m in ("GradDiff", "MASC"):
        own = [0, *seeds] if m in rerun else [0]
        assert list(real.seeds_of(m).index) == own and list(real.seeds_of(m)["seconds"]) == [2.5 + s for s in own]
        assert real.seeds_of(m).loc[0, "model_utility"] == real.results.loc[m, "model_utility"]
    assert sorted(real.reseeded) == [(m, s) for m in rerun for s in seeds]  # the reruns' records, for their timings
    assert real.results.loc["GradDiff", "model_utility"] == 0.4 and real.results.loc["Oracle", "forget_quality"] == 1.0
