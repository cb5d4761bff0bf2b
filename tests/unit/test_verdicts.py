"""Each claim's decision rule (`unlearning.verdicts`) on hand-made results: every rule is shown
saying held, partly, did not hold and cannot tell here, and its thresholds are checked against
values worked out by hand."""

import math

import pytest

from unlearning.claims import CANNOT_TELL, HELD, NOT_HELD, PARTLY
from unlearning.trajectory import Criterion, selected_time
from unlearning import verdicts as v


def test_resolutions_by_hand():
    assert v.item_resolution(40) == 0.025
    # 0.5 accuracy over 400 questions: 1.96 * sqrt(0.25 / 400) = 0.049; paired: x sqrt(2) = 0.0693
    assert v.accuracy_resolution(0.5, 400, paired=False) == pytest.approx(0.0490, abs=1e-4)
    assert v.accuracy_resolution(0.5, 400) == pytest.approx(0.0693, abs=1e-4)
    assert v.accuracy_resolution(1.0, 10) == 0.1  # no sampling width at 1.0: one question is the floor
    assert v.value_range([0.3, 0.5, 0.4]) == pytest.approx(0.2) and v.value_range([0.3]) == 0
    with pytest.raises(ValueError):
        v.item_resolution(0)


def test_the_papers_speedups_are_read_off_its_table():
    mean, low, high = v.paper_speedup("tofu")  # SimNPO 545 (490-595) against MASC 88 (64-113)
    assert (mean, low, high) == pytest.approx((545 / 88, 490 / 113, 595 / 64))
    assert v.paper_speedup("muse-news")[0] == pytest.approx(1880 / 140)  # the paper's ~13x
    assert v.paper_speedup("muse-books")[0] == pytest.approx(575 / 64)   # ~9x


def test_speed_against_the_paper_says_each_verdict():
    low = v.paper_speedup("tofu")[1]  # 4.34x
    assert v.speed_against_paper(10, {"GA": 50, "NPO": 80}, "tofu", True).verdict == HELD
    assert v.speed_against_paper(10, {"GA": 30}, "tofu", True).verdict == PARTLY       # 3x < 4.34x
    assert v.speed_against_paper(10, {"GA": 10 * low + 1}, "tofu", False).verdict == PARTLY  # did not stop itself
    assert v.speed_against_paper(10, {"GA": 8}, "tofu", True).verdict == NOT_HELD
    assert v.speed_against_paper(10, {"GA": 10.5}, "tofu", True, timing_resolution=0.1).verdict == CANNOT_TELL
    assert v.speed_against_paper(10, {}, "tofu", True).verdict == CANNOT_TELL


def test_a_baseline_pays_for_the_evaluations_that_find_its_good_checkpoint():
    criterion = Criterion("forget", 0.2, 0.05, "utility", 0.5)
    rows = [{"step": 0, "seconds": 0, "forget": 0.9, "utility": 0.8},
            {"step": 2, "seconds": 4, "forget": 0.6, "utility": 0.8, "eval_seconds": 10},
            {"step": 4, "seconds": 8, "forget": 0.22, "utility": 0.7, "eval_seconds": 10},
            {"step": 8, "seconds": 16, "forget": 0.0, "utility": 0.1, "eval_seconds": 10}]
    assert selected_time(rows, criterion, self_stopping=False) == 8 + 20   # two evaluations to find step 4
    assert selected_time(rows, criterion, self_stopping=True) is None     # its final model is not good
    assert selected_time(rows[:3], criterion, self_stopping=True) == 8
    assert v.speed_to_good_model(5, {"GA": 28, "NPO": None}).verdict == HELD
    assert v.speed_to_good_model(30, {"GA": 28}).verdict == NOT_HELD
    assert v.speed_to_good_model(None, {"GA": 28}).verdict == NOT_HELD
    assert v.speed_to_good_model(None, {"GA": None}).verdict == CANNOT_TELL
    assert v.speed_to_good_model(5, {"GA": None}).verdict == HELD


def _axes(rouge, prob, tr, mu):
    return {"1-ROUGE-L": rouge, "1-Prob": prob, "Truth Ratio": tr, "MU": mu}


def test_the_paper_numbers_make_masc_hold_the_tradeoff_statement():
    # masc.md s. 15: MASC 0.61/0.65/0.62/0.65 is best or tied on 3 of 4 axes (not 1-Prob) at +-0.03
    paper = {"NPO+KLR": _axes(0.37, 0.71, 0.59, 0.50), "GA+GDR": _axes(0.58, 0.79, 0.50, 0.55),
             "SimNPO": _axes(0.34, 0.48, 0.55, 0.58), "MASC": _axes(0.61, 0.65, 0.62, 0.65)}
    res = dict.fromkeys(v.TOFU_AXES, 0.03)
    assert v.tofu_tradeoff(paper, res).verdict == HELD
    worse_mu = {**paper, "MASC": _axes(0.61, 0.65, 0.62, 0.50)}
    assert v.tofu_tradeoff(worse_mu, res).verdict == PARTLY
    assert v.tofu_tradeoff({**paper, "MASC": _axes(0.1, 0.1, 0.1, 0.1)}, res).verdict == NOT_HELD
    # everyone destroyed: MASC "ties" on every axis, and the statement still fails
    dead = {"GA": _axes(1.0, 1.0, 0.7, 0.0), "MASC": _axes(1.0, 1.0, 0.7, 0.0)}
    assert v.tofu_tradeoff(dead, res).verdict == NOT_HELD and "collapsed" in v.tofu_tradeoff(dead, res).reason
    assert v.tofu_tradeoff(paper, res, floors={"MU": "MU on a floor"}).verdict == CANNOT_TELL
    assert v.tofu_tradeoff(paper, res, floors={"1-Prob": "a", "Truth Ratio": "b"}).verdict == CANNOT_TELL
    # a tie within the resolution counts as best
    tied = {"GA": _axes(0.5, 0.5, 0.5, 0.52), "MASC": _axes(0.5, 0.1, 0.5, 0.50)}
    assert v.tofu_tradeoff(tied, dict.fromkeys(v.TOFU_AXES, 0.025)).verdict == HELD
    assert v.tofu_tradeoff(tied, dict.fromkeys(v.TOFU_AXES, 0.01)).verdict == PARTLY


def test_matched_point_reads_a_baseline_where_it_forgets_as_much():
    points = [{"forget_Q_A_ROUGE": 0.875, "step": 0}, {"forget_Q_A_ROUGE": 0.5, "step": 2},
              {"forget_Q_A_ROUGE": 0.25, "step": 4}, {"forget_Q_A_ROUGE": 0.0, "step": 8}]
    assert v.matched_point(points, 0.3)["step"] == 4
    assert v.matched_point(points, 0.375)["step"] == 4  # equally far from 0.5 and 0.25: the later point
    assert v.matched_point(points, -1)["step"] == 8


def test_verbatim_removed_says_each_verdict():
    assert v.verbatim_removed(0.9, 0.12, 0.1, 0.025).verdict == HELD
    assert v.verbatim_removed(0.9, 0.5, 0.1, 0.025).verdict == NOT_HELD
    assert v.verbatim_removed(0.11, 0.0, 0.1, 0.025).verdict == CANNOT_TELL  # nothing memorised to remove
    assert v.verbatim_removed(0.9, 0.1, 0.1, 0.025, 0.0, [0.3, 0.4, 0.2]).verdict == PARTLY  # removed by collapse


def test_combine_sets_aside_the_cases_that_cannot_tell():
    h, p, n, c = (v.Verdict(x, "why") for x in (HELD, PARTLY, NOT_HELD, CANNOT_TELL))
    assert v.combine([h, h], ["a", "b"]).verdict == HELD
    assert v.combine([h, c], ["a", "b"]).verdict == HELD and "b: why" in v.combine([h, c], ["a", "b"]).reason
    assert v.combine([h, n], ["a", "b"]).verdict == PARTLY
    assert v.combine([p, p], ["a", "b"]).verdict == PARTLY
    assert v.combine([n, c], ["a", "b"]).verdict == NOT_HELD
    assert v.combine([c, c], ["a", "b"]).verdict == CANNOT_TELL


def test_grows_with_size_says_each_verdict():
    assert v.grows_with_size([0.2, 0.4, 0.6], 0.025).verdict == HELD
    assert v.grows_with_size([0.2, 0.6, 0.4], 0.025).verdict == PARTLY
    assert v.grows_with_size([0.6, 0.4, 0.2], 0.025).verdict == NOT_HELD
    assert v.grows_with_size([0.2, 0.21, 0.22], 0.025).verdict == CANNOT_TELL
    assert v.grows_with_size([0.2], 0.025).verdict == CANNOT_TELL
    assert v.grows_with_size([0.2, 0.19, 0.6], 0.025).verdict == HELD  # a dip within one item is no fall


def test_scale_invariance_is_judged_against_the_oracles_spread():
    oracle = [0.30, 0.35, 0.40]  # the oracles' own spread across sizes: 0.10
    assert v.scale_invariant([0.31, 0.36, 0.38], oracle, [0.3, 0.4, 0.5], 0.025).verdict == HELD
    assert v.scale_invariant([0.1, 0.4, 0.7], oracle, [0.3, 0.4, 0.5], 0.025).verdict == PARTLY
    assert v.scale_invariant([0.1, 0.4, 0.7], oracle, [0.5, 0.4, 0.3], 0.025).verdict == NOT_HELD
    assert v.scale_invariant([0, 0, 0], oracle, [0, 0, 0], 0.025, floor_reason="zero at every size").verdict == CANNOT_TELL
    # a forget metric within one item of zero at every size is a floor, found by the rule itself
    floor = v.scale_invariant([0.0, 0.02, 0.01], oracle, [0.3, 0.4, 0.5], 0.025)
    assert floor.verdict == CANNOT_TELL and "floor" in floor.reason
    assert v.scale_invariant([0.3], [0.3], [0.5], 0.025).verdict == CANNOT_TELL


def test_recovery_share_by_hand_and_the_quantization_verdicts():
    assert v.recovery_share(0.2, 0.5, 0.8) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        v.recovery_share(0.8, 0.8, 0.8)
    assert v.survives_quantization(0.2, 0.21, 0.8, 0.025).verdict == HELD
    assert v.survives_quantization(0.2, 0.5, 0.8, 0.025).verdict == NOT_HELD
    assert "50%" in v.survives_quantization(0.2, 0.5, 0.8, 0.025).reason
    assert v.survives_quantization(0.79, 0.8, 0.8, 0.025).verdict == CANNOT_TELL  # forgot nothing: no pass
    # quantization moves the control by 0.1 on its own: a rise of 0.08 is inside that
    assert v.survives_quantization(0.2, 0.28, 0.8, 0.025, control_change=-0.1).verdict == HELD


def test_construction_checks_and_tendencies():
    assert v.construction_check({"pcgrad": 0.0, "sago": 0.2}).verdict == HELD
    assert v.construction_check({"pcgrad": -1e-9}).verdict == HELD  # float rounding
    assert v.construction_check({"sago": -0.01}).verdict == NOT_HELD
    assert v.construction_check({}).verdict == CANNOT_TELL
    assert [v.more_often(s, 10).verdict for s in (10, 7, 5)] == [HELD, PARTLY, NOT_HELD]
    assert v.more_often(0, 0).verdict == CANNOT_TELL


def test_knowledge_to_remove_uses_the_sampling_interval_not_a_typed_cut():
    assert v.knowledge_to_remove(0.60, 0.25, 100) == ""
    assert "no knowledge to remove" in v.knowledge_to_remove(0.30, 0.25, 100)  # 0.05 < 1.96*sqrt(.21/100)=0.09
    assert v.knowledge_to_remove(0.30, 0.25, 2000) == ""                       # 0.05 > 0.02


def test_utility_recovered_says_each_verdict():
    gd = {"forget": 0.30, "utility": 0.30}
    res = dict(forget_resolution=0.05, utility_resolution=0.05)
    assert v.utility_recovered(gd, {"pcgrad": {"forget": 0.3, "utility": 0.5}, "sago": {"forget": 0.32, "utility": 0.6}},
                               **res).verdict == HELD
    assert v.utility_recovered(gd, {"pcgrad": {"forget": 0.3, "utility": 0.32}, "sago": {"forget": 0.3, "utility": 0.6}},
                               **res).verdict == PARTLY
    assert v.utility_recovered(gd, {"pcgrad": {"forget": 0.5, "utility": 0.9}}, **res).verdict == NOT_HELD
    assert v.utility_recovered(gd, {"pcgrad": {"forget": 0.3, "utility": 0.31}}, **res).verdict == CANNOT_TELL
    assert v.utility_recovered(gd, {"pcgrad": {"forget": 0.3, "utility": 0.9}}, **res, no_signal="chance").verdict == CANNOT_TELL


def test_granularity_needs_comparable_forgetting():
    assert v.ordered_by_granularity([0.40, 0.45, 0.50], [0.3, 0.3, 0.3], 0.02, 0.02).verdict == HELD
    assert v.ordered_by_granularity([0.40, 0.55, 0.50], [0.3, 0.3, 0.3], 0.02, 0.02).verdict == PARTLY
    assert v.ordered_by_granularity([0.50, 0.45, 0.40], [0.3, 0.3, 0.3], 0.02, 0.02).verdict == NOT_HELD
    assert v.ordered_by_granularity([0.40, 0.41, 0.41], [0.3, 0.3, 0.3], 0.02, 0.02).verdict == CANNOT_TELL
    assert v.ordered_by_granularity([0.40, 0.45, 0.50], [0.1, 0.3, 0.5], 0.02, 0.02).verdict == CANNOT_TELL


def test_sago_keeps_more_needs_a_gap_larger_than_one_probe():
    row = {"points": 8.0, "forget_sago": 0.30, "forget_pcgrad": 0.30}
    assert v.sago_keeps_more(row, 0.05, 0.05).verdict == HELD
    assert v.sago_keeps_more({**row, "points": -8.0}, 0.05, 0.05).verdict == NOT_HELD
    assert v.sago_keeps_more({**row, "forget_sago": 0.5}, 0.05, 0.05).verdict == NOT_HELD
    assert v.sago_keeps_more({**row, "points": 3.0}, 0.05, 0.05).verdict == CANNOT_TELL  # 0.03 < one probe (0.05)
    assert math.isclose(v.Z_95, 1.96, abs_tol=1e-3)


def test_a_seeds_range_wider_than_one_item_becomes_the_resolution_and_can_turn_a_win_into_a_tie():
    one_item = dict.fromkeys(v.TOFU_AXES, 0.025)
    seeds = [_axes(0.50, 0.40, 0.60, 0.45), _axes(0.58, 0.41, 0.60, 0.47), _axes(0.54, 0.40, 0.61, 0.46)]
    res = v.seed_resolution(one_item, seeds)
    # 1-ROUGE-L ranges over 0.08 > one item; the other axes move less than one item
    assert res == pytest.approx({"1-ROUGE-L": 0.08, "1-Prob": 0.025, "Truth Ratio": 0.025, "MU": 0.025})
    # MASC behind GA by 0.05 on 1-ROUGE-L: a loss at one item, a tie within the seeds' range
    runs = {"GA": _axes(0.60, 0.40, 0.60, 0.44), "MASC": _axes(0.55, 0.40, 0.61, 0.46)}
    runs["GA"]["1-Prob"] = 0.50  # MASC behind on 1-Prob by more than either resolution
    assert v.tofu_tradeoff(runs, one_item).verdict == PARTLY
    held = v.tofu_tradeoff(runs, res, resolution_kind="the larger of one item and 3 seeds' range")
    assert held.verdict == HELD and "3 seeds" in held.resolution
    with pytest.raises(ValueError):
        v.seed_resolution(one_item, [])
    # SAGO 3 points ahead: held at a 0.02 resolution, cannot tell once seeds range over 0.04
    row = {"points": 3.0, "forget_sago": 0.30, "forget_pcgrad": 0.30}
    assert v.sago_keeps_more(row, 0.02, 0.02).verdict == HELD
    spread = v.sago_keeps_more(row, 0.02, 0.04, resolution_kind="3 seeds' range")
    assert spread.verdict == CANNOT_TELL and "3 seeds" in spread.resolution


def test_the_speed_sentence_gives_the_ratio_to_the_fastest_and_the_papers_span():
    text = v.speed_sentence(10.0, 48, True, {"GradDiff": 80.0, "SimNPO+GD": 50.0}, "tofu")
    # 50 / 10 = 5.0x; the paper: SimNPO 545 / MASC 88 = 6.2x, 490 / 113 = 4.3x to 595 / 64 = 9.3x
    assert "by itself after 48 steps in 10.0 s" in text and "50.0-80.0 s" in text and "**5.0x**" in text
    assert "the paper: 6.2x, 4.3-9.3x" in text
    assert "at its step cap" in v.speed_sentence(10.0, 48, False, {"GA": 20.0}, "tofu")
    assert "no baseline" in v.speed_sentence(10.0, 48, True, {}, "tofu")


def test_the_real_models_signal_checks_say_which_hold():
    accuracy = {"forget_paraphrased_question_accuracy": 0.6, "forget_paraphrase_accuracy": 0.1}
    oracle = {"forget_paraphrased_question_accuracy": 0.2, "forget_paraphrase_accuracy": 0.15}
    rows = v.real_tofu_signals(0.001, accuracy, oracle, 0.04, "GA", 0.05)
    # KS p 0.001 < 0.01 holds; 0.6 > 1/6 holds; 0.1 < 1/6 does not; a utility gap of 0.04 is within one item (0.05)
    assert [r["holds"] for r in rows] == [True, True, False, False]
    assert rows[1]["oracle"] == 0.2 and "(GA)" in rows[3]["check"]
    assert v.real_tofu_signals(0.02, accuracy, oracle, 0.2, "GA", 0.05)[0]["holds"] is False
    assert v.real_tofu_signals(0.02, accuracy, oracle, 0.2, "GA", 0.05)[3]["holds"] is True


def test_the_rwku_claim_over_a_grid_sets_aside_grids_without_forgetting_or_triples():
    assert v.unmoved_forgetting(0.80, 0.50, 0.05) == ""  # moved by 0.30 > one probe
    assert "hardly moved" in v.unmoved_forgetting(0.80, 0.77, 0.05)  # 0.03 within one probe
    ahead = {"objective": "GA+GD", "points": 8.0, "forget_sago": 0.30, "forget_pcgrad": 0.30}
    behind = {**ahead, "objective": "NPO+GD", "points": -8.0}
    assert v.sago_keeps_more_over([ahead], 0.05, 0.05).verdict == HELD
    assert v.sago_keeps_more_over([ahead, behind], 0.05, 0.05).verdict == PARTLY
    assert v.sago_keeps_more_over([ahead], 0.05, 0.05, no_signal="a floor").reason == "a floor"
    assert v.sago_keeps_more_over([], 0.05, 0.05).verdict == CANNOT_TELL
