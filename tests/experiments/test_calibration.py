"""The calibrated scaling rule (`experiments.calibration`): the ladder, its choice and the check,
on fake runs whose utilities are written out by hand."""

import math

import pytest

from experiments.calibration import (KEEP, Calibration, Rung, calibrate, check, check_summary, headline, ladder_table,
                                    lost_utility)
from unlearning.recipes import Scale

BASE = Scale(lr_factor=200.0, size_factor=0.25, why="the start model's rate / the paper's")
START = {"model_utility": 0.40, "forget_Q_A_ROUGE": 0.9}
# a point lost its model below 0.30 (three quarters of 0.40); these fakes carry no items, so the value decides
READ = {"utility": lambda m: m["model_utility"], "forget": lambda m: m["forget_Q_A_ROUGE"],
        "lost": lambda m: m["model_utility"] < 0.30}


def fake_runs(utilities_by_factor: dict, seen: list, read: list | None = None):
    """A `points_at` whose run at factor f has the utilities `utilities_by_factor[f]` at steps 2, 4,
    ... and a forget metric of f / 1000; records the factors run in `seen` and the (factor, step)
    of every point evaluated in `read`."""
    def points_at(scale: Scale):
        seen.append(scale.lr_factor)
        values = utilities_by_factor[scale.lr_factor]

        def evaluate(step, u):
            (read if read is not None else []).append((scale.lr_factor, step))
            return {"model_utility": u, "forget_Q_A_ROUGE": scale.lr_factor / 1000}
        points = [(2 * (i + 1), lambda s=2 * (i + 1), u=u: evaluate(s, u)) for i, u in enumerate(values)]
        return 1e-5 * scale.lr_factor, 2 * len(values), points
    return points_at


def test_the_ladder_descends_by_quarters_and_stops_at_the_first_rung_that_keeps_the_model():
    # 200 ends at 0.0; 50 ends kept but dips to 0.29 on the way; 12.5 no lower than 0.31
    runs = {200.0: [0.40, 0.10, 0.0], 50.0: [0.40, 0.29, 0.35], 12.5: [0.40, 0.31, 0.33], 3.125: [0.4, 0.4, 0.4]}
    seen, read = [], []
    result = calibrate("GradDiff", BASE, fake_runs(runs, seen, read), START, **READ)
    assert seen == [200.0, 50.0, 12.5]  # 3.125 is never run
    # points are read from the end back, and a failed rung stops at the point that failed it
    assert read == [(200.0, 6), (50.0, 6), (50.0, 4), (12.5, 6), (12.5, 4), (12.5, 2)]
    assert result.chosen == 2 and result.scale.lr_factor == 12.5
    assert result.scale.size_factor == 0.25 and "calibrated" in result.scale.why
    assert [r.kept for r in result.rungs] == [False, False, True]
    assert [r.utility for r in result.rungs] == [((6, 0.0),), ((4, 0.29), (6, 0.35)), ((2, 0.4), (4, 0.31), (6, 0.33))]
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


def test_a_diverged_point_loses_the_model_and_reads_lowest():
    assert Rung(200.0, 2e-3, 10, False, ((2, 0.4), (10, math.nan)), math.nan).lowest() == -math.inf
    assert lost_utility({"model_utility": math.nan}, START, "tofu", "model_utility")


@pytest.mark.parametrize("step, rungs", [(1.0, 6), (4.0, 0)])
def test_calibrate_refuses_a_ladder_that_cannot_be_climbed(step, rungs):
    with pytest.raises(ValueError, match="step"):
        calibrate("MASC", BASE, fake_runs({}, []), START, **READ, step=step, rungs=rungs)


def test_a_model_has_lost_its_utility_only_beyond_the_paired_interval():
    # RWKU's neighbour summary over 40 + 40 probes, start 0.5: a point at 0.35 is below 0.375 (3/4 of
    # 0.5) by one probe's worth, inside the interval; at 0.2 it lies below it beyond the interval
    start = rwku(0.5, 0.9)
    assert not lost_utility(rwku(0.35, 0.9), start, "rwku", "neighbour")
    assert lost_utility(rwku(0.2, 0.9), start, "rwku", "neighbour")
    assert not lost_utility(rwku(0.5, 0.9), start, "rwku", "neighbour", keep=1.0)
    # without items the values alone decide
    assert lost_utility({"model_utility": 0.29}, START, "tofu", "model_utility")
    assert not lost_utility({"model_utility": 0.31}, START, "tofu", "model_utility")


def rwku(neighbour: float, forget: float, n: int = 40) -> dict:
    """An RWKU evaluation with only its items: n probes per level, the shares recalled in full."""
    def recall(share):
        return [1.0] * round(share * n) + [0.0] * (n - round(share * n))
    return {"items": {**{f"neighbor_level{i}": {"recall": recall(neighbour)} for i in (1, 2)},
                      **{f"forget_level{i}": {"recall": recall(forget)} for i in (1, 2, 3)}}}


def test_the_check_reads_the_first_point_for_collapse_and_the_end_for_forgetting():
    start = rwku(0.5, 0.9)
    kept = check("MASC", [(2, rwku(0.45, 0.9)), (30, rwku(0.4, 0.3))], start, "rwku")
    assert kept.first_share == pytest.approx(0.9) and kept.end_share == pytest.approx(0.8)
    assert not kept.collapsed and kept.moved and kept.forget_change.value == pytest.approx(-0.6)
    collapsed = check("GradDiff", [(2, rwku(0.1, 0.9)), (100, rwku(0.5, 0.9))], start, "rwku")
    assert collapsed.collapsed and not collapsed.moved  # a collapse at step 2 is one, whatever the end recovers
    # one probe of forty forgotten at each level: within the paired interval, so forgetting did not move
    one = check("NPO", [(10, rwku(0.5, 0.875))], start, "rwku")
    assert not one.collapsed and not one.moved
    text = check_summary([kept, collapsed, one])
    assert "GradDiff" in text.split(";")[0] and "NPO" in text.split(";")[1] and "MASC" not in text
    assert check_summary([kept]) == (f"no run collapsed at its first point (none fell below {KEEP:.0%} of the start's "
                                     "utility beyond its interval); every run's forget metric fell beyond its paired "
                                     "interval.")


def test_a_headline_is_the_suites_entry_or_its_statistic_recomputed_from_the_items():
    assert headline({"model_utility": 0.4}, "tofu", "model_utility") == 0.4
    # RWKU's neighbour summary is the mean of its two levels' mean recalls: (0.5 + 0.25) / 2, by hand
    items = {"neighbor_level1": {"recall": [1.0, 0.0]}, "neighbor_level2": {"recall": [0.25, 0.25, 0.25, 0.25]}}
    assert headline({"items": items}, "rwku", "neighbour") == pytest.approx(0.375)
    assert math.isnan(headline({}, "rwku", "neighbour"))  # a diverged run has no items
