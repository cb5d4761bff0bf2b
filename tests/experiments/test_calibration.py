"""The calibrated scaling rule (`experiments.calibration`): the ladder, its choice and the check,
on fake runs whose utilities are written out by hand."""

import math

import numpy as np
import pytest

from experiments.calibration import KEEP, Calibration, Rung, calibrate, check, check_summary, headline, ladder_table
from unlearning.recipes import Scale

BASE = Scale(lr_factor=200.0, size_factor=0.25, why="the start model's rate / the paper's")
START = {"model_utility": 0.40, "forget_Q_A_ROUGE": 0.9}
READ = {"utility": lambda m: m["model_utility"], "forget": lambda m: m["forget_Q_A_ROUGE"]}


def fake_runs(utilities_by_factor: dict, seen: list):
    """A `points_at` whose run at factor f has the utilities `utilities_by_factor[f]` at steps 2, 4,
    ... and a forget metric of f / 1000 at its end; records the factors asked for in `seen`."""
    def points_at(scale: Scale):
        seen.append(scale.lr_factor)
        values = utilities_by_factor[scale.lr_factor]
        points = [(2 * (i + 1), {"model_utility": u, "forget_Q_A_ROUGE": scale.lr_factor / 1000}) for i, u in enumerate(values)]
        return 1e-5 * scale.lr_factor, 2 * len(values), points
    return points_at


def test_the_ladder_descends_by_quarters_and_stops_at_the_first_rung_that_keeps_the_model():
    # floor = 0.75 * 0.40 = 0.30: 200 dips to 0.0, 50 to 0.29 (just under), 12.5 no lower than 0.31
    runs = {200.0: [0.40, 0.10, 0.0], 50.0: [0.40, 0.29, 0.35], 12.5: [0.40, 0.31, 0.33], 3.125: [0.4, 0.4, 0.4]}
    seen = []
    result = calibrate("GradDiff", BASE, fake_runs(runs, seen), START, **READ)
    assert seen == [200.0, 50.0, 12.5]  # 3.125 is never run
    assert result.chosen == 2 and result.scale.lr_factor == 12.5
    assert result.scale.size_factor == 0.25 and "calibrated" in result.scale.why
    assert [r.lowest() for r in result.rungs] == [0.0, 0.29, 0.31]
    rows = ladder_table({"GradDiff": result})
    assert rows["chosen"].tolist() == [False, False, True] and rows["kept"].tolist() == [False, False, True]
    assert rows["lowest utility / start"].tolist() == pytest.approx([0.0, 0.725, 0.775])
    assert rows["end forget"].tolist() == pytest.approx([0.2, 0.05, 0.0125])


def test_a_run_that_keeps_its_model_at_the_base_factor_runs_the_base_rule():
    seen = []
    result = calibrate("SimNPO+GD", BASE, fake_runs({200.0: [0.4, 0.39]}, seen), START, **READ)
    assert seen == [200.0] and result.chosen == 0 and result.scale.lr_factor == 200.0


def test_when_no_rung_keeps_the_model_the_smallest_is_taken_and_said():
    runs = {200.0 / 4 ** k: [0.1] for k in range(3)}
    result = calibrate("GA", BASE, fake_runs(runs, []), START, **READ, rungs=3)
    assert result.chosen is None and result.scale.lr_factor == 12.5 and "no factor" in result.scale.why


def test_without_a_ladder_the_scale_is_the_base():
    assert Calibration("MASC", BASE, 0.4, (), None).scale == BASE  # a real checkpoint: nothing was run


def test_a_diverged_point_never_keeps_the_model():
    rung = Rung(200.0, 2e-3, 10, ((2, 0.4), (10, math.nan)), math.nan)
    assert rung.lowest() == -math.inf and not rung.keeps(0.0)
    assert not Rung(1.0, 1e-5, 0, (), math.nan).keeps(0.0)  # no point at all: nothing shows the model kept


@pytest.mark.parametrize("keep, step, rungs", [(0.0, 4.0, 6), (1.5, 4.0, 6), (0.75, 1.0, 6), (0.75, 4.0, 0)])
def test_calibrate_refuses_a_ladder_that_cannot_be_climbed(keep, step, rungs):
    with pytest.raises(ValueError, match="keep"):
        calibrate("MASC", BASE, fake_runs({}, []), START, **READ,
                  keep=keep, step=step, rungs=rungs)


def metrics(utility: float, rouges) -> dict:
    """A TOFU evaluation with only what the check reads: model utility and the forget items' ROUGE-L."""
    rouges = np.asarray(rouges, dtype=float)
    return {"model_utility": utility, "forget_Q_A_ROUGE": float(rouges.mean()), "items": {"forget": {"rouge": rouges}}}


def test_the_check_reads_the_first_point_for_collapse_and_the_end_for_forgetting():
    start = metrics(0.40, [0.9] * 40)
    kept = check("MASC, forget10", [(2, metrics(0.36, [0.9] * 40)), (30, metrics(0.32, [0.3] * 40))], start)
    assert kept.first_share == pytest.approx(0.9) and kept.end_share == pytest.approx(0.8)
    assert not kept.collapsed and kept.moved and kept.forget_change.value == pytest.approx(-0.6)
    collapsed = check("GradDiff, forget10", [(2, metrics(0.2, [0.9] * 40)), (100, metrics(0.39, [0.9] * 40))], start)
    assert collapsed.collapsed and not collapsed.moved  # a collapse at step 2 is one, whatever the end recovers
    # one item of forty forgotten: within the paired interval, so forgetting did not move
    one = check("NPO, forget10", [(10, metrics(0.4, [0.9] * 39 + [0.0]))], start)
    assert not one.collapsed and not one.moved
    text = check_summary([kept, collapsed, one])
    assert "GradDiff, forget10" in text.split(";")[0] and "NPO, forget10" in text.split(";")[1]
    assert "MASC" not in text
    assert check_summary([kept]) == (f"no run collapsed at its first point (each kept at least {KEEP:.0%} of the "
                                     "start's utility); every run's forget metric fell beyond its paired interval.")


def test_a_headline_is_the_suites_entry_or_its_statistic_recomputed_from_the_items():
    assert headline({"model_utility": 0.4}, "tofu", "model_utility") == 0.4
    # RWKU's neighbour summary is the mean of its two levels' mean recalls: (0.5 + 0.25) / 2, by hand
    items = {"neighbor_level1": {"recall": [1.0, 0.0]}, "neighbor_level2": {"recall": [0.25, 0.25, 0.25, 0.25]}}
    assert headline({"items": items}, "rwku", "neighbour") == pytest.approx(0.375)
    assert math.isnan(headline({}, "rwku", "neighbour"))  # a diverged run has no items
