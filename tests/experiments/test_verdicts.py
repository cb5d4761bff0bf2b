"""Each claim's decision rule (`experiments.verdicts`) fed the papers' own published numbers (the
tables of `shared/reference/masc.md`, `sago.md` and `benchmarks.md`, each with the uncertainty its
source allows: a figure's reading accuracy, a binomial interval over the published question counts,
the error bars of a timing): every rule says "held" on them, the opposite on the same numbers
degraded the way the claim forbids, and "cannot tell here" on a difference inside its interval."""

import math

import pytest

from experiments import verdicts as v
from experiments.claims import CANNOT_TELL, HELD, NOT_HELD, PARTLY
from experiments.intervals import Estimate, binomial_half_width, from_table, ratio_from_bars

READ = 0.03  # the MASC paper's radar values are read off a figure to +-0.03 (masc.md s. 15)


def table_difference(a: Estimate, b: Estimate) -> Estimate:
    """a - b for two published numbers whose errors are independent (half-widths add in quadrature)."""
    half = math.hypot(a.value - a.low, b.value - b.low)
    return Estimate(a.value - b.value, a.value - b.value - half, a.value - b.value + half, a.how or b.how)


def _radar(**rows):
    """The MASC paper's TOFU radar as published (axis values, each +-READ)."""
    return {name: dict(zip(v.TOFU_AXES, (from_table(x, READ) for x in values))) for name, values in rows.items()}


PAPER_RADAR = _radar(**{"NPO+KLR": (0.37, 0.71, 0.59, 0.50), "GA+GDR": (0.58, 0.79, 0.50, 0.55),
                        "SimNPO": (0.34, 0.48, 0.55, 0.58), "MASC": (0.61, 0.65, 0.62, 0.65)})


def _against(radar, method="MASC"):
    """`method` minus every other row on each axis (independent readings: half-widths in quadrature)."""
    return {b: {a: table_difference(radar[method][a], axes[a]) for a in v.TOFU_AXES}
            for b, axes in radar.items() if b != method}


def _estimate(value, half):
    return from_table(value, half)


# -- MASC: speed -----------------------------------------------------------------------------------

def test_the_papers_speedups_are_read_off_its_table():
    tofu = v.paper_speedup("tofu")  # SimNPO 545 (490-595) against MASC 88 (64-113)
    assert (tofu.value, tofu.low, tofu.high) == pytest.approx((545 / 88, 490 / 113, 595 / 64))
    assert v.paper_speedup("muse-news").value == pytest.approx(1880 / 140)  # the paper's ~13x
    assert v.paper_speedup("muse-books").value == pytest.approx(575 / 64)   # ~9x


def test_speed_on_the_papers_own_bars_holds_and_degraded_bars_do_not():
    simnpo = v.PAPER_SECONDS["tofu"]["SimNPO"]
    assert v.speed_against_paper(v.paper_speedup("tofu"), "tofu", True).verdict == HELD
    # MASC as slow as SimNPO, within the bars: cannot tell; twice as slow: did not hold
    assert v.speed_against_paper(ratio_from_bars(simnpo, (600, 550, 650)), "tofu", True).verdict == CANNOT_TELL
    assert v.speed_against_paper(ratio_from_bars(simnpo, (1200, 1100, 1300)), "tofu", True).verdict == NOT_HELD
    # faster, but resolved below the smallest ratio the paper's bars allow (4.34x), or at its step cap: partly
    assert v.speed_against_paper(ratio_from_bars(simnpo, (300, 280, 320)), "tofu", True).verdict == PARTLY
    assert v.speed_against_paper(v.paper_speedup("tofu"), "tofu", False).verdict == PARTLY
    nan = Estimate(math.nan, math.nan, math.nan)
    assert v.speed_against_paper(nan, "tofu", True).verdict == CANNOT_TELL


def test_a_collapsed_run_carries_no_speed_verdict():
    # the default book: 86.7x faster for a model whose utility is 0.000 against the oracle's 0.6
    collapse = v.collapsed(Estimate(-0.6, -0.62, -0.58))
    assert "below the oracle's" in collapse
    verdict = v.speed_against_paper(Estimate(86.7, 80.0, 90.0), "tofu", True, collapse)
    assert verdict.verdict == CANNOT_TELL and verdict.reason == collapse
    # MASC's paper run: MU 0.65 (read +-0.03) against the retain90 oracle's 0.613 (OpenUnlearning's summary)
    assert v.collapsed(table_difference(from_table(0.65, READ), from_table(0.613))) == ""


def test_time_to_a_good_model_needs_a_lead_beyond_the_timing_interval():
    assert v.speed_to_good_model(True, {"GA": Estimate(3.0, 2.5, 3.5), "NPO": None}).verdict == HELD
    assert v.speed_to_good_model(True, {"GA": Estimate(0.995, 0.98, 1.01)}).verdict == CANNOT_TELL  # 88.0 s vs 88.5 s
    assert v.speed_to_good_model(True, {"GA": Estimate(0.5, 0.45, 0.55)}).verdict == NOT_HELD
    assert v.speed_to_good_model(False, {"GA": Estimate(2.0, 1.5, 2.5)}).verdict == NOT_HELD
    assert v.speed_to_good_model(False, {"GA": None}).verdict == CANNOT_TELL
    assert v.speed_to_good_model(True, {"GA": None}).verdict == HELD


def test_the_speed_sentence_gives_the_ratio_to_the_fastest_and_the_papers_span():
    text = v.speed_sentence(10.0, 7, True, {"GA": 60.0, "NPO": 40.0}, "tofu", Estimate(4.0, 3.5, 4.6))
    assert "after 7 steps in 10.0 s" in text and "**4.0x**" in text and "3.5-4.6x" in text
    assert "the paper: 6.2x, 4.3-9.3x" in text


# -- MASC: trade-off -------------------------------------------------------------------------------

def test_the_papers_radar_holds_the_tradeoff_statement():
    verdict = v.tofu_tradeoff(_against(PAPER_RADAR))
    # 1-Prob: behind GA+GDR (0.65 vs 0.79) and NPO+KLR (0.71); ROUGE tied with GA+GDR, TR tied with NPO+KLR
    assert verdict.verdict == HELD, verdict.reason
    assert "1-ROUGE-L, Truth Ratio, MU" in verdict.reason and "vs SimNPO" in verdict.evidence


def test_the_radar_with_masc_behind_on_utility_does_not_hold():
    degraded = dict(PAPER_RADAR, MASC=_radar(MASC=(0.61, 0.65, 0.62, 0.45))["MASC"])  # MU below every baseline
    assert v.tofu_tradeoff(_against(degraded)).verdict == NOT_HELD
    # the same run collapsed: not MASC as its paper reports it, so no refutation (and no support either)
    assert v.tofu_tradeoff(_against(degraded), collapse="collapsed").verdict == CANNOT_TELL
    assert v.tofu_tradeoff(_against(PAPER_RADAR), collapse="collapsed").verdict == CANNOT_TELL


def test_best_utility_needs_a_resolved_lead_and_all_ties_cannot_tell():
    near = dict(PAPER_RADAR, MASC=_radar(MASC=(0.61, 0.65, 0.62, 0.59))["MASC"])  # MU 0.59 vs SimNPO 0.58
    verdict = v.tofu_tradeoff(_against(near))
    assert verdict.verdict == PARTLY and "not a resolved best model utility" in verdict.reason
    same = _radar(A=(0.5, 0.5, 0.5, 0.5), B=(0.51, 0.49, 0.5, 0.5), C=(0.5, 0.5, 0.51, 0.49), MASC=(0.5, 0.5, 0.5, 0.5))
    assert v.tofu_tradeoff(_against(same)).verdict == CANNOT_TELL  # cannot be told from anyone on any axis


def test_an_axis_matched_by_construction_is_not_counted_as_a_tie():
    verdict = v.tofu_tradeoff(_against(PAPER_RADAR), matched=("1-ROUGE-L",))
    assert "of 3 axes free to differ" in verdict.reason and "1-ROUGE-L" not in verdict.evidence
    assert verdict.verdict == HELD  # TR tied-or-best and MU best: 2 of the 3 free axes
    floors = {"MU": "model utility cannot move here"}
    assert v.tofu_tradeoff(_against(PAPER_RADAR), floors=floors).verdict == CANNOT_TELL
    only = {"1-Prob": "flat", "Truth Ratio": "flat"}
    assert v.tofu_tradeoff(_against(PAPER_RADAR), floors=only, matched=("1-ROUGE-L",)).verdict == CANNOT_TELL


def test_matched_point_reads_a_baseline_where_it_forgets_as_much():
    points = [{"step": 0, "forget_Q_A_ROUGE": 1.0}, {"step": 2, "forget_Q_A_ROUGE": 0.5},
              {"step": 4, "forget_Q_A_ROUGE": 0.25}, {"step": 8, "forget_Q_A_ROUGE": 0.0}]
    assert v.matched_point(points, 0.3)["step"] == 4
    assert v.matched_point(points, 0.375)["step"] == 4  # equally far from 0.5 and 0.25: the later point
    assert v.matched_point(points, -1)["step"] == 8


def test_axis_floors_map_metrics_to_radar_axes():
    assert v.axis_floors({"model_utility": "flat", "forget_quality": "no KS"}) == {"MU": "flat"}


# -- MASC: MUSE, scale, 4-bit ----------------------------------------------------------------------

def test_muse_news_verbatim_removal_as_registered():
    # MUSE News (x1/100): target VerbMem 58.4, retrained 20.8 (Zhang et al.), MASC <= 5 (1-VerbMem 0.95-0.99)
    half = 0.05  # a generous sampling interval of a mean ROUGE over 100 continuations
    target, oracle = from_table(0.584, half), from_table(0.208, half)

    def judged(method):
        m = from_table(method, half)
        return v.verbatim_removed(table_difference(target, oracle), table_difference(target, m),
                                  table_difference(m, oracle))

    assert judged(0.03).verdict == HELD       # the paper's MASC
    assert judged(0.45).verdict == PARTLY     # came down, stays above the oracle
    assert judged(0.584).verdict == NOT_HELD  # removed nothing
    assert v.verbatim_removed(table_difference(oracle, oracle), Estimate(0.1, 0.05, 0.15),
                              Estimate(0, -0.05, 0.05)).verdict == CANNOT_TELL  # the target memorised nothing extra


def test_larger_models_memorise_more_on_a_resolved_rise():
    steps = [Estimate(0.10, 0.05, 0.15), Estimate(0.08, 0.03, 0.13)]
    assert v.grows_with_size(Estimate(0.18, 0.12, 0.24), steps).verdict == HELD
    assert v.grows_with_size(Estimate(0.18, 0.12, 0.24), [steps[0], Estimate(-0.1, -0.15, -0.05)]).verdict == PARTLY
    assert v.grows_with_size(Estimate(-0.18, -0.24, -0.12), steps).verdict == NOT_HELD
    assert v.grows_with_size(Estimate(0.02, -0.03, 0.07), steps).verdict == CANNOT_TELL
    assert v.grows_with_size(None, []).verdict == CANNOT_TELL


def test_scale_invariance_needs_every_size_to_have_forgotten():
    removed = {"0.5b": Estimate(0.6, 0.5, 0.7), "7b": Estimate(0.7, 0.6, 0.8)}
    flat = {"0.5b→7b": Estimate(0.01, -0.03, 0.05)}
    grows = v.Verdict(HELD)
    assert v.scale_invariant(removed, flat, grows).verdict == HELD  # the paper's abstract
    moved = {"0.5b→7b": Estimate(0.2, 0.15, 0.25)}
    assert v.scale_invariant(removed, moved, grows).verdict == PARTLY
    assert v.scale_invariant(removed, moved, v.Verdict(NOT_HELD)).verdict == NOT_HELD
    # the default book: every size left at its target's level
    unmoved = {"xs": Estimate(0.0, -0.02, 0.02), "s": Estimate(0.01, -0.01, 0.03)}
    verdict = v.scale_invariant(unmoved, flat, grows)
    assert verdict.verdict == CANNOT_TELL and "nothing was forgotten" in verdict.reason
    assert v.scale_invariant(removed, flat, grows, collapse="collapsed").verdict == CANNOT_TELL
    assert v.scale_invariant({"xs": removed["7b"]}, {}, grows).verdict == CANNOT_TELL


def _zhang(full, quantized, target_full, target_quantized, half=0.05):
    """Zhang et al.'s MUSE News VerbMem row (x1/100) as the 4-bit rule reads it: the target as control."""
    u, qu, t, qt = (from_table(x, half) for x in (full, quantized, target_full, target_quantized))
    removal = table_difference(t, u)
    rise, control = qu.value - u.value, max(0.0, qt.value - t.value)  # a control that falls excuses nothing
    recovery = from_table(rise - control, half * math.sqrt(2))
    return v.survives_quantization(removal, recovery, table_difference(qt, qu), "utility shown")


def test_4bit_on_zhangs_own_rows():
    # GA_KLR News: VerbMem 14.1 -> 33.8 after 4 bits, the target 58.4 -> 34.2 (a fall): 44 % comes back
    ga_klr = _zhang(0.141, 0.338, 0.584, 0.342)
    assert ga_klr.verdict == NOT_HELD and "recovers 44%" in ga_klr.reason and "utility shown" in ga_klr.reason
    # the retrained model: 20.8 -> 18.5; it stays below the quantized target
    assert _zhang(0.208, 0.185, 0.584, 0.342).verdict == HELD


def test_4bit_is_judged_only_on_a_resolved_removal_and_a_resolved_remainder():
    # a rise inside the interval that is most of what was removed is not "survives"
    small = v.survives_quantization(Estimate(0.1, 0.07, 0.13), Estimate(0.08, -0.02, 0.18), Estimate(0.02, -0.03, 0.07))
    assert small.verdict == CANNOT_TELL
    assert v.survives_quantization(Estimate(0.01, -0.02, 0.04), Estimate(0, -0.01, 0.01),
                                   Estimate(0.01, -0.02, 0.04)).verdict == CANNOT_TELL  # nothing removed
    # the default book: "held, recovers 0 %" for a MASC run that had destroyed the model
    destroyed = v.survives_quantization(Estimate(0.6, 0.5, 0.7), Estimate(0.0, -0.01, 0.01), Estimate(0.6, 0.5, 0.7),
                                        collapse="MASC's utility is below the oracle's")
    assert destroyed.verdict == CANNOT_TELL and "below the oracle's" in destroyed.reason


# -- SAGO ------------------------------------------------------------------------------------------

BIO, MMLU = 1273, 14042  # questions of WMDP-Bio and MMLU (sago.md s. 10)


def _accuracy_difference(a, b, n):
    """Two published accuracies (percent) on the same n questions: a - b in [0, 1] with the binomial
    interval of a difference (`binomial_half_width`, paired as two independent samples: an upper bound)."""
    half = binomial_half_width(max(a, b) / 100, n)
    return from_table((a - b) / 100, half)


def _recovery(naive, rules):
    """`utility_recovered`'s input from the SAGO paper's (forget, MMLU) pairs."""
    return {r: (_accuracy_difference(m, naive[1], MMLU), _accuracy_difference(f, naive[0], BIO))
            for r, (f, m) in rules.items()}


def test_the_papers_wmdp_bio_simnpo_row_recovers_utility():
    naive = (26.1, 26.7)
    paper = {"pcgrad": (28.7, 56.4), "sago": (28.2, 57.4)}
    assert v.utility_recovered(_recovery(naive, paper)).verdict == HELD
    # PCGrad and SAGO keeping less than +GD without forgetting more: refuted
    assert v.utility_recovered(_recovery(naive, {"pcgrad": (26.1, 20.0), "sago": (26.0, 21.0)})).verdict == NOT_HELD
    # keeping more only while forgetting far less (forget accuracy 40 against 26): confounded
    confounded = v.utility_recovered(_recovery(naive, {"pcgrad": (40.0, 56.4), "sago": (41.0, 57.4)}))
    assert confounded.verdict == CANNOT_TELL and "confounded" in confounded.reason
    assert v.utility_recovered(_recovery(naive, {"pcgrad": (26.3, 27.0)})).verdict == CANNOT_TELL  # inside
    assert v.utility_recovered(_recovery(naive, paper), no_signal="at chance").verdict == CANNOT_TELL


def test_keeps_more_needs_dominance_to_refute():
    up, down, none = Estimate(0.1, 0.05, 0.15), Estimate(-0.1, -0.15, -0.05), Estimate(0.0, -0.02, 0.02)
    assert v.keeps_more(up, none).verdict == HELD
    assert v.keeps_more(up, up).verdict == CANNOT_TELL      # keeps more while forgetting less: confounded
    assert v.keeps_more(down, none).verdict == NOT_HELD
    assert v.keeps_more(down, down).verdict == CANNOT_TELL  # keeps less while forgetting more: confounded
    assert v.keeps_more(none, up).verdict == NOT_HELD        # keeps as much, forgets less
    assert v.keeps_more(none, none).verdict == CANNOT_TELL


def test_the_papers_granularity_ablation_is_ordered():
    forget, mmlu = (24.8, 24.5, 26.0), (51.0, 53.0, 54.1)  # GA+GD on WMDP-Bio: global, module-wise, SAGO

    def judged(mmlu, forget=forget):
        steps = [_accuracy_difference(mmlu[1], mmlu[0], MMLU), _accuracy_difference(mmlu[2], mmlu[1], MMLU)]
        pairs = [(1, 0), (2, 1), (2, 0)]
        return v.ordered_by_granularity(steps, _accuracy_difference(mmlu[2], mmlu[0], MMLU),
                                        [_accuracy_difference(forget[i], forget[j], BIO) for i, j in pairs])

    assert judged(mmlu).verdict == HELD
    assert judged((54.1, 53.0, 51.0)).verdict == NOT_HELD
    assert judged((51.0, 55.0, 53.0)).verdict == PARTLY                  # a step falls on the way
    assert judged((51.0, 51.2, 51.3)).verdict == CANNOT_TELL              # inside the interval
    assert judged(mmlu, (24.8, 24.5, 40.0)).verdict == CANNOT_TELL        # SAGO forgets far less: confounded


RWKU_POINTS = {"GA": ((2.4, 18.8), (3.9, 32.1)), "NPO": ((2.9, 28.4), (5.4, 41.7)),
               "SimNPO": ((13.4, 53.5), (12.8, 56.9))}  # (forget, neighbour) of PCGrad and SAGO, Fig. 4, +-0.3


def _rwku(points, half=0.3):
    return {o: (table_difference(from_table(s[1], half), from_table(p[1], half)),
                table_difference(from_table(s[0], half), from_table(p[0], half))) for o, (p, s) in points.items()}


def test_the_papers_rwku_points_hold_where_forgetting_is_matched():
    verdict = v.sago_keeps_more_over(_rwku(RWKU_POINTS))
    # SimNPO: +3.4 neighbour at 0.6 more forgetting; GA and NPO keep more only while forgetting less
    assert verdict.verdict == HELD
    assert "GA: SAGO keeps more only while forgetting less: confounded" in verdict.reason
    degraded = dict(RWKU_POINTS, SimNPO=((13.4, 53.5), (13.4, 50.0)))
    assert v.sago_keeps_more_over(_rwku(degraded)).verdict == NOT_HELD
    inside = {"SimNPO": ((13.4, 53.5), (13.4, 53.6))}
    assert v.sago_keeps_more_over(_rwku(inside)).verdict == CANNOT_TELL
    assert v.sago_keeps_more_over({}).verdict == CANNOT_TELL
    assert v.sago_keeps_more_over(_rwku(RWKU_POINTS), no_signal="unmoved").verdict == CANNOT_TELL


def test_the_papers_geometry_is_tighter_by_mean_cosine():
    pcgrad = from_table(0.76, 0.03)
    assert v.tighter(table_difference(from_table(0.87, 0.03), pcgrad)).verdict == HELD  # the authors' page
    assert v.tighter(table_difference(from_table(0.57, 0.03), from_table(0.52, 0.01))).verdict == HELD  # summary B
    assert v.tighter(table_difference(from_table(0.66, 0.03), pcgrad)).verdict == NOT_HELD
    assert v.tighter(table_difference(from_table(0.77, 0.03), pcgrad)).verdict == CANNOT_TELL


def test_construction_checks():
    assert v.construction_check({"pcgrad": 0.0, "sago": 0.2}).verdict == HELD
    assert v.construction_check({"pcgrad": -1e-9}).verdict == HELD  # float rounding
    assert v.construction_check({"sago": -0.01}).verdict == NOT_HELD
    assert v.construction_check({}).verdict == CANNOT_TELL


def test_knowledge_to_remove_reads_the_accuracys_interval():
    half = binomial_half_width(0.644, BIO, paired=False)
    assert v.knowledge_to_remove(from_table(0.644, half), 0.25) == ""  # the paper's Zephyr: 64.4 on WMDP-Bio
    assert "not above chance" in v.knowledge_to_remove(from_table(0.26, 0.03), 0.25)


def test_unmoved_forgetting():
    assert v.unmoved_forgetting(Estimate(0.3, 0.2, 0.4)) == ""
    assert "hardly moved" in v.unmoved_forgetting(Estimate(0.01, -0.02, 0.04))


def test_combine_sets_aside_the_cases_that_cannot_tell():
    h, p, n, c = v.Verdict(HELD), v.Verdict(PARTLY, "p"), v.Verdict(NOT_HELD, "n"), v.Verdict(CANNOT_TELL, "why")
    assert v.combine([h, h], ["a", "b"]).verdict == HELD
    assert v.combine([h, c], ["a", "b"]).verdict == HELD and "b: why" in v.combine([h, c], ["a", "b"]).reason
    assert v.combine([h, n], ["a", "b"]).verdict == PARTLY
    assert v.combine([p, p], ["a", "b"]).verdict == PARTLY
    assert v.combine([n, c], ["a", "b"]).verdict == NOT_HELD
    assert v.combine([c, c], ["a", "b"]).verdict == CANNOT_TELL


def test_the_real_models_signal_checks_say_which_hold():
    rows = v.real_tofu_signals(1e-4, {"paraphrased-question": from_table(0.6, 0.1), "fully paraphrased":
                                      from_table(0.2, 0.1)}, 1 / 6, Estimate(0.3, 0.2, 0.4), "GA")
    assert [r["holds"] for r in rows] == [True, True, False, True]
    assert "< 0.05" in rows[0]["check"]  # the level of every interval, not a typed 0.01
    rows = v.real_tofu_signals(0.3, {}, 1 / 6, Estimate(0.01, -0.02, 0.04), "GA")
    assert [r["holds"] for r in rows] == [False, False]
