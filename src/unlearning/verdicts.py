"""Every claim's decision rule: a chapter's results in, a verdict and its reason out.

A chapter computes its results, passes them here and prints what comes back; no verdict logic and
no threshold lives in a notebook. Each rule says *held*, *partly*, *did not hold* or *cannot tell
here* (`claims.VERDICTS`), and every threshold it uses comes from one of three places:

- the paper's own statement (its numbers are constants below, with their source), e.g. MASC's
  wall-clock table (arXiv 2606.02920, s. 15 of the reference notes: mean and error-bar span);
- `floors`-style signal checks made by the caller (a metric on a floor for target and oracle alike
  is passed in as a reason, never read);
- the measurement's resolution: one item of an evaluation set (`item_resolution`), the 95 %
  sampling interval of an accuracy (`accuracy_resolution`), a control's own movement (the oracle's
  change under 4-bit quantization) or the range over seeds once runs repeat (`value_range`). A difference inside the
  resolution decides nothing: "cannot tell here", with that reason.

Construction checks (guarantees of a rule's algebra, e.g. "SAGO never opposes retention") are
checked by `construction_check` and shown apart from findings on the claims page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from unlearning.claims import CANNOT_TELL, HELD, NOT_HELD, PARTLY, tally

Z_95 = 1.959964  # two-sided 95 % normal quantile: the sampling interval of a mean


@dataclass(frozen=True)
class Verdict:
    """A rule's answer: the verdict, why (always for "cannot tell here"), and the resolution the
    decision was made at, in words (shown on the claims page)."""

    verdict: str
    reason: str = ""
    resolution: str = ""


# -- resolutions --------------------------------------------------------------------------------

def item_resolution(n_items: int) -> float:
    """The smallest change one item can make to a mean of per-item scores in [0, 1] over
    `n_items` items (ROUGE-L, answer probability, a probe's recall): 1 / n."""
    if n_items < 1:
        raise ValueError(f"need at least one item, got {n_items}")
    return 1.0 / n_items


def accuracy_resolution(accuracy: float, n_questions: int, paired: bool = True) -> float:
    """The 95 % sampling half-width of an accuracy over `n_questions` (binomial, normal
    approximation), at least one question; `paired` widens it by sqrt(2) for the difference of
    two models' accuracies on the same questions."""
    if n_questions < 1 or not 0 <= accuracy <= 1:
        raise ValueError(f"need n_questions >= 1 and an accuracy in [0, 1], got {n_questions}, {accuracy}")
    width = Z_95 * math.sqrt(max(accuracy * (1 - accuracy), 0.0) / n_questions) * (math.sqrt(2) if paired else 1)
    return max(width, 1.0 / n_questions)


def value_range(values: Sequence[float]) -> float:
    """The range (max - min) of a measurement across its cases (model sizes; seeds, once a chapter
    repeats runs over seeds); 0 for a single value."""
    values = list(values)
    if not values:
        raise ValueError("value_range needs at least one value")
    return float(max(values) - min(values))


def seed_resolution(one_item: Mapping[str, float], by_seed: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Each measurement's resolution once a method's run repeats over seeds: the larger of its
    one-item resolution and the range of the method's own results across the seeds (`by_seed`, one
    mapping per seed with the keys of `one_item`). A difference between two methods inside it cannot
    be told from a reseeded run of one of them."""
    if not by_seed:
        raise ValueError("seed_resolution needs the results of at least one seed")
    return {key: max(step, value_range([run[key] for run in by_seed])) for key, step in one_item.items()}


def _resolution_text(value: float, what: str) -> str:
    return f"{value:.3f} ({what})"


# -- MASC ---------------------------------------------------------------------------------------

# MASC's wall-clock table (seconds; mean, low, high of the error bars): masc.md s. 15.
PAPER_SECONDS: dict[str, dict[str, tuple[float, float, float]]] = {
    "tofu": {"NPO+KLR": (985, 915, 1050), "GA+GDR": (910, 725, 1090), "SimNPO": (545, 490, 595), "MASC": (88, 64, 113)},
    "muse-news": {"NPO+KLR": (4060, 3420, 4710), "GA+GDR": (2520, 2430, 2600), "SimNPO": (1880, 1845, 1915),
                  "MASC": (140, 85, 190)},
    "muse-books": {"NPO+KLR": (2575, 2140, 2990), "GA+GDR": (575, 540, 605), "SimNPO": (2650, 2590, 2710),
                   "MASC": (64, 43, 85)},
}


def paper_speedup(benchmark: str) -> tuple[float, float, float]:
    """The paper's speed-up of MASC over its fastest baseline on `benchmark`: (mean ratio, the
    smallest and largest ratio its error bars allow)."""
    table = PAPER_SECONDS[benchmark]
    fastest = min((m for m in table if m != "MASC"), key=lambda m: table[m][0])
    (b, b_lo, b_hi), (m, m_lo, m_hi) = table[fastest], table["MASC"]
    return b / m, b_lo / m_hi, b_hi / m_lo


def speed_against_paper(masc_seconds: float, baseline_seconds: Mapping[str, float], benchmark: str,
                        stopped_by_itself: bool, timing_resolution: float = 0.0) -> Verdict:
    """MASC stopping by itself against the paper's baselines run over their full official budget
    (question (a) of the speed claim). Held when MASC's speed-up over the fastest baseline reaches
    the smallest ratio the paper's error bars allow; partly when MASC is faster but below that (or
    faster without stopping by itself); did not hold when it is not faster. `timing_resolution` is
    the relative spread of a run's time (repeats or seeds); a ratio within it of 1 cannot tell."""
    if not baseline_seconds:
        return Verdict(CANNOT_TELL, "no baseline of the paper ran in this profile")
    ratio = min(baseline_seconds.values()) / max(masc_seconds, 1e-9)
    _, paper_low, _ = paper_speedup(benchmark)
    resolution = (_resolution_text(timing_resolution, "relative spread of a run's time") if timing_resolution
                  else "one timed run each (no repeat)")
    if abs(ratio - 1) <= timing_resolution:
        return Verdict(CANNOT_TELL, f"MASC's speed-up {ratio:.2f}x is within the timing spread of 1x", resolution)
    if ratio < 1:
        return Verdict(NOT_HELD, f"MASC took longer than the fastest baseline ({ratio:.2f}x)", resolution)
    if not stopped_by_itself:
        return Verdict(PARTLY, f"{ratio:.1f}x faster, but MASC ran to its step cap instead of stopping by itself",
                       resolution)
    if ratio >= paper_low:
        return Verdict(HELD, "", resolution)
    return Verdict(PARTLY, f"{ratio:.1f}x faster, below the {paper_low:.1f}x the paper's error bars allow", resolution)


def speed_sentence(masc_seconds: float, masc_steps: int, stopped_by_itself: bool,
                   baseline_seconds: Mapping[str, float], benchmark: str, digits: int = 1) -> str:
    """The paper's speed question in one sentence, as the TOFU chapters print it beside
    `speed_against_paper`'s verdict: MASC's run, the baselines' full budgets, the ratio to the
    fastest and the paper's own ratio with the span its error bars allow."""
    if not baseline_seconds:
        return f"MASC ran {masc_steps} steps in {masc_seconds:.{digits}f} s; no baseline of the paper ran here"
    low, high = min(baseline_seconds.values()), max(baseline_seconds.values())
    mean, paper_low, paper_high = paper_speedup(benchmark)
    return (f"MASC stopped {'by itself' if stopped_by_itself else 'at its step cap'} after {masc_steps} steps in "
            f"{masc_seconds:.{digits}f} s; the paper's baselines ran their full official budgets in {low:.{digits}f}-"
            f"{high:.{digits}f} s: **{low / max(masc_seconds, 1e-9):.1f}x** faster than the fastest (the paper: "
            f"{mean:.1f}x, {paper_low:.1f}-{paper_high:.1f}x within its error bars)")


def speed_to_good_model(masc_seconds: float | None, baseline_seconds: Mapping[str, float | None]) -> Verdict:
    """Question (b), beyond the paper: the time to a good model, each method paying for how it
    finds it (MASC its probes; a baseline its checkpoints' evaluations, `trajectory.selected_time`).
    Held when MASC gets there first, did not hold when a baseline does (or only baselines do),
    cannot tell when no run gets there."""
    reached = {m: s for m, s in baseline_seconds.items() if s is not None}
    if masc_seconds is None and not reached:
        return Verdict(CANNOT_TELL, "no run reached a good model within its budget")
    if masc_seconds is None:
        return Verdict(NOT_HELD, f"only baselines reached a good model ({', '.join(reached)})")
    if not reached:
        return Verdict(HELD, "only MASC reached a good model")
    faster = [m for m, s in reached.items() if s <= masc_seconds]
    return Verdict(HELD) if not faster else Verdict(NOT_HELD, f"{', '.join(faster)} got there first")


TOFU_AXES = ("1-ROUGE-L", "1-Prob", "Truth Ratio", "MU")  # metrics.tofu.masc_axes, higher is better


def tofu_tradeoff(axes: Mapping[str, Mapping[str, float]], resolution: Mapping[str, float], method: str = "MASC",
                  floors: Mapping[str, str] | None = None, resolution_kind: str = "one item") -> Verdict:
    """The paper's trade-off statement on TOFU: `method` best or tied on at least 3 of the 4 radar
    axes (`TOFU_AXES`, higher is better) and best (or tied) model utility, against every other
    method in `axes` (compare them at matched forgetting: `matched_point`). Tied means within
    `resolution[axis]`. Axes named in `floors` (axis -> why) carry no signal and are not read;
    without MU, or with fewer than 3 axes left, it cannot tell. Held: the statement; partly: best
    MU or 3 axes, not both, or 2 axes; did not hold: fewer, or `method`'s model utility within one
    resolution of zero (a destroyed model has no trade-off to be competitive with)."""
    floors = dict(floors or {})
    others = [m for m in axes if m != method]
    if not others:
        return Verdict(CANNOT_TELL, "no baseline to compare with")
    if "MU" in floors:
        return Verdict(CANNOT_TELL, floors["MU"])
    if axes[method]["MU"] <= resolution["MU"]:
        return Verdict(NOT_HELD, f"{method}'s model utility collapsed ({axes[method]['MU']:.3f})",
                       f"MU {resolution['MU']:.3f} ({resolution_kind})")
    read = [a for a in TOFU_AXES if a not in floors]
    if len(read) < 3:
        return Verdict(CANNOT_TELL, "; ".join(floors.values()))
    best = {a: axes[method][a] >= max(axes[m][a] for m in others) - resolution[a] for a in read}
    wins, mu = sum(best.values()), best["MU"]
    text = ", ".join(a for a in read if best[a]) or "none"
    res = "; ".join(f"{a} {resolution[a]:.3f}" for a in read) + f" ({resolution_kind})"
    if wins >= 3 and mu:
        return Verdict(HELD, f"best or tied on {text}", res)
    if wins >= 2 or mu:
        return Verdict(PARTLY, f"best or tied on {text} of {len(read)} axes" + ("" if mu else "; not the best MU"), res)
    return Verdict(NOT_HELD, f"best or tied on {text} of {len(read)} axes", res)


def matched_point(points: Sequence[Mapping[str, float]], level: float, key: str = "forget_Q_A_ROUGE") -> Mapping:
    """The point of a run (its checkpoints and final model, `trajectory.trajectory`) whose `key`
    is closest to `level`: a baseline read where it forgets as much as the method it is compared
    with (the trade-off at matched forgetting); the later point on a tie."""
    if not points:
        raise ValueError("matched_point needs at least one point")
    return min(reversed(list(points)), key=lambda p: abs(p[key] - level))


def verbatim_removed(target: float, method: float, oracle: float, resolution: float,
                     method_utility: float | None = None, baseline_utilities: Sequence[float] = (),
                     utility_resolution: float | None = None) -> Verdict:
    """MUSE, one corpus: the method removes verbatim memorisation (VerbMem forget at most the
    oracle's + resolution) and, where utilities are given, keeps KnowMem retain at least that of the
    median baseline - `utility_resolution` (default `resolution`) ("like the baselines"). Cannot
    tell when the target memorised nothing beyond the oracle (no verbatim memory to remove)."""
    utility_resolution = resolution if utility_resolution is None else utility_resolution
    res = _resolution_text(resolution, "one item")
    if target - oracle <= resolution:
        return Verdict(CANNOT_TELL, f"the target's VerbMem ({target:.2f}) is not above the oracle's ({oracle:.2f}) by "
                                    "more than one item: nothing to remove", res)
    if method > oracle + resolution:
        return Verdict(NOT_HELD, f"VerbMem {method:.2f} above the oracle's {oracle:.2f}", res)
    if method_utility is not None and baseline_utilities:
        median = sorted(baseline_utilities)[len(baseline_utilities) // 2]
        if method_utility < median - utility_resolution:
            return Verdict(PARTLY, f"removed, but KnowMem retain {method_utility:.2f} below the baselines' median "
                                   f"{median:.2f}", res)
    return Verdict(HELD, "", res)


def combine(verdicts: Sequence[Verdict], labels: Sequence[str]) -> Verdict:
    """One verdict from several cases (corpora, splits, codes): cases that cannot tell are set
    aside (and named); the rest are tallied (`claims.tally`, partly counts as half a success,
    rounded down); all cannot tell -> cannot tell."""
    decided = [(v, label) for v, label in zip(verdicts, labels) if v.verdict != CANNOT_TELL]
    undecided = [f"{label}: {v.reason}" for v, label in zip(verdicts, labels) if v.verdict == CANNOT_TELL]
    resolution = "; ".join(dict.fromkeys(v.resolution for v in verdicts if v.resolution))
    if not decided:
        return Verdict(CANNOT_TELL, "; ".join(undecided), resolution)
    score = sum({HELD: 2, PARTLY: 1, NOT_HELD: 0}[v.verdict] for v, _ in decided)
    verdict = HELD if score == 2 * len(decided) else NOT_HELD if score == 0 else PARTLY
    reasons = [f"{label}: {v.reason}" for v, label in decided if v.reason] + undecided
    return Verdict(verdict, "; ".join(reasons), resolution)


def grows_with_size(values: Sequence[float], resolution: float) -> Verdict:
    """"Larger models memorise more" (or "utility grows with scale"): the values, ordered by
    size, rise from the smallest to the largest by more than `resolution` and no step falls by
    more than it. A net change within the resolution cannot tell; a net fall did not hold; a rise
    with a step that falls is partly."""
    values = list(values)
    res = _resolution_text(resolution, "one item")
    if len(values) < 2:
        return Verdict(CANNOT_TELL, "one model size in this profile", res)
    net = values[-1] - values[0]
    falls = sum(a - b > resolution for a, b in zip(values, values[1:]))
    if abs(net) <= resolution:
        return Verdict(CANNOT_TELL, f"smallest to largest changes by {net:+.3f}, within the resolution", res)
    if net < 0:
        return Verdict(NOT_HELD, f"falls by {-net:.3f} from the smallest to the largest size", res)
    return Verdict(HELD, "", res) if not falls else Verdict(PARTLY, f"{falls} step(s) fall on the way", res)


def scale_invariant(forget: Sequence[float], oracle_forget: Sequence[float], utility: Sequence[float],
                    resolution: float, floor_reason: str = "") -> Verdict:
    """MASC's scale study: after unlearning the forget metric is as flat across sizes as the
    oracles' own (spread at most the oracles' spread + resolution) and utility grows with size
    (`grows_with_size`). A forget metric within one resolution of zero at every size is a floor
    (a method that drives every size to zero is not scale-invariant evidence): cannot tell, as
    for any other `floor_reason` the caller gives."""
    if len(forget) < 2:
        return Verdict(CANNOT_TELL, "one model size in this profile")
    res = _resolution_text(resolution, "one item")
    grows = grows_with_size(utility, resolution)
    if not floor_reason and all(value <= resolution for value in forget):
        floor_reason = "the forget metric is zero within one item at every size: a floor, flat by force"
    if floor_reason:
        return Verdict(CANNOT_TELL, floor_reason, res)
    flat = value_range(forget) <= value_range(oracle_forget) + resolution
    parts = [f"forget spread {value_range(forget):.3f} against the oracles' {value_range(oracle_forget):.3f}",
             f"utility: {grows.verdict}" + (f" ({grows.reason})" if grows.reason else "")]
    if grows.verdict == CANNOT_TELL:
        return Verdict(PARTLY if flat else NOT_HELD, "; ".join(parts), res)
    verdict = tally(int(flat) + int(grows.verdict == HELD), 2)
    return Verdict(verdict, "" if verdict == HELD else "; ".join(parts), res)


def recovery_share(unlearned: float, quantized: float, target: float) -> float:
    """The share of what unlearning removed that 4-bit quantization brings back:
    (R_quantized - R_unlearned) / (R_target - R_unlearned) (Zhang et al.; 0 survives, 1 all back)."""
    removed = target - unlearned
    if removed <= 0:
        raise ValueError(f"nothing was removed (target {target:.3f}, unlearned {unlearned:.3f})")
    return (quantized - unlearned) / removed


def survives_quantization(unlearned: float, quantized: float, target: float, resolution: float,
                          control_change: float = 0.0) -> Verdict:
    """Forgetting survives 4-bit quantization: the forget metric rises by no more than the
    measurement can see, max(resolution, |the control's change|) where the control (the oracle or
    the target quantized the same way) shows what quantization alone does. Cannot tell when the
    method removed no more than that (nothing to recover). Reason gives the recovery share."""
    noise = max(resolution, abs(control_change))
    res = _resolution_text(noise, "one item, or the quantized control's own change")
    if target - unlearned <= noise:
        return Verdict(CANNOT_TELL, f"unlearning removed {target - unlearned:.3f}, within what quantization moves "
                                    "on its own", res)
    share = recovery_share(unlearned, quantized, target)
    if quantized - unlearned <= noise:
        return Verdict(HELD, f"recovers {max(share, 0):.0%} of what was removed", res)
    return Verdict(NOT_HELD, f"recovers {share:.0%} of what was removed", res)


# -- SAGO ---------------------------------------------------------------------------------------

def construction_check(smallest: Mapping[str, float], tolerance: float = 1e-6) -> Verdict:
    """A guarantee by construction (PCGrad and SAGO never oppose retention): every rule's smallest
    cos(g_final, g_r) is >= -tolerance (float rounding). Held means the implementation keeps the
    guarantee; did not hold is a bug, not a finding."""
    broken = {r: v for r, v in smallest.items() if v < -tolerance}
    if not smallest:
        return Verdict(CANNOT_TELL, "no combined rule ran")
    return Verdict(NOT_HELD, "violated by " + ", ".join(broken)) if broken else Verdict(HELD)


def more_often(successes: int, total: int) -> Verdict:
    """A tendency claimed as a rule ("SAGO aligns more tightly than PCGrad"): held at every one of
    `total` comparisons, partly at a majority, did not hold otherwise."""
    if total < 1:
        return Verdict(CANNOT_TELL, "no comparison")
    share = successes / total
    return Verdict(HELD if share == 1 else PARTLY if share > 0.5 else NOT_HELD,
                   "" if share == 1 else f"at {successes} of {total} comparisons")


def knowledge_to_remove(target_accuracy: float, chance: float, n_questions: int) -> str:
    """Why a multiple-choice forget set carries no signal: "" when the target answers it above
    chance by more than the sampling interval of its accuracy, else the reason."""
    width = accuracy_resolution(target_accuracy, n_questions, paired=False)
    if target_accuracy - chance > width:
        return ""
    return (f"the target answers the forget questions at {target_accuracy:.2f}, within {width:.2f} of chance "
            f"({chance:.2f}) over {n_questions} questions: no knowledge to remove")


def utility_recovered(sum_rule: Mapping[str, float], rules: Mapping[str, Mapping[str, float]],
                      forget_resolution: float, utility_resolution: float, no_signal: str = "") -> Verdict:
    """SAGO's WMDP claim for one split and objective: every rule in `rules` (PCGrad, SAGO) keeps
    more utility than +GD (`sum_rule`) by more than `utility_resolution`, at forgetting no weaker
    than +GD's by more than `forget_resolution` (rows: `forget`, `utility`). A utility gap inside
    the resolution cannot tell; `no_signal` (no knowledge to remove) cannot tell."""
    res = f"forget {forget_resolution:.3f}; utility {utility_resolution:.3f} (95 % sampling interval)"
    if no_signal:
        return Verdict(CANNOT_TELL, no_signal, res)
    weaker = [r for r, row in rules.items() if row["forget"] > sum_rule["forget"] + forget_resolution]
    gains = {r: row["utility"] - sum_rule["utility"] for r, row in rules.items()}
    if weaker:
        return Verdict(NOT_HELD, f"{', '.join(weaker)} forget less than +GD", res)
    if all(abs(g) <= utility_resolution for g in gains.values()):
        return Verdict(CANNOT_TELL, "utility within the sampling interval of +GD's for every rule", res)
    kept = sum(g > utility_resolution for g in gains.values())
    return Verdict(tally(kept, len(gains)), "" if kept == len(gains) else
                   ", ".join(f"{r} {g:+.3f}" for r, g in gains.items()), res)


def ordered_by_granularity(utility: Sequence[float], forget: Sequence[float], forget_resolution: float,
                           utility_resolution: float) -> Verdict:
    """Retention rises from global PCGrad to module-wise PCGrad to SAGO (`utility` and `forget` in
    that order) at comparable forgetting (all within `forget_resolution` of each other). Ties
    within `utility_resolution` do not break the order; an order decided by ties alone cannot tell."""
    res = f"forget {forget_resolution:.3f}; utility {utility_resolution:.3f}"
    if max(forget) - min(forget) > forget_resolution:
        return Verdict(CANNOT_TELL, "the three rules forget unequally (spread "
                                    f"{max(forget) - min(forget):.3f}): utility alone does not order them", res)
    if utility[-1] - utility[0] <= utility_resolution and utility[0] - utility[-1] <= utility_resolution:
        return Verdict(CANNOT_TELL, "global PCGrad and SAGO are within the resolution", res)
    falls = sum(a - b > utility_resolution for a, b in zip(utility, utility[1:]))
    if utility[-1] < utility[0]:
        return Verdict(NOT_HELD, "SAGO keeps less than global PCGrad", res)
    return Verdict(HELD if not falls else PARTLY, "" if not falls else "a step falls on the way", res)


def sago_keeps_more(gain: Mapping[str, float], forget_resolution: float, retain_resolution: float,
                    resolution_kind: str = "one probe") -> Verdict:
    """SAGO against PCGrad on RWKU, one objective (a `retention.sago_gains` row: `points` = SAGO -
    PCGrad retain in points, `forget_sago`, `forget_pcgrad`): held when SAGO keeps more by more
    than `retain_resolution` without forgetting less by more than `forget_resolution`; a gap inside
    the resolution (one probe, or the seeds' range: `seed_resolution`, named by `resolution_kind`)
    cannot tell."""
    res = f"forget {forget_resolution:.3f}; retain {retain_resolution:.3f} ({resolution_kind})"
    gap = gain["points"] / 100
    if gain["forget_sago"] > gain["forget_pcgrad"] + forget_resolution:
        return Verdict(NOT_HELD, "SAGO keeps more only by forgetting less", res)
    if abs(gap) <= retain_resolution:
        return Verdict(CANNOT_TELL, f"SAGO - PCGrad = {gain['points']:+.1f} points, within the resolution", res)
    return Verdict(HELD, "", res) if gap > 0 else Verdict(NOT_HELD, f"SAGO keeps {-gap:.3f} less", res)


def unmoved_forgetting(start_forget: float, best_forget: float, resolution: float) -> str:
    """Why a grid cannot compare rules on RWKU ("" when it can): no run moved the forget summary
    down by more than `resolution` (one probe) from the start model, so there is no forgetting at
    which to compare what each rule keeps."""
    if best_forget < start_forget - resolution:
        return ""
    return f"the grid hardly moved the forget metric ({start_forget:.2f} → {best_forget:.2f})"


def sago_keeps_more_over(gains: Sequence[Mapping[str, float]], forget_resolution: float, retain_resolution: float,
                         resolution_kind: str = "one probe", no_signal: str = "") -> Verdict:
    """The RWKU claim over a grid's objectives (`retention.sago_gains` rows, `objective` named):
    each objective's `sago_keeps_more`, combined; cannot tell when `no_signal` gives a reason (a
    floor, `unmoved_forgetting`) or when no objective has +GD, PCGrad and SAGO runs."""
    if no_signal:
        return Verdict(CANNOT_TELL, no_signal)
    if not gains:
        return Verdict(CANNOT_TELL, "this profile's grid has no +GD, PCGrad and SAGO runs of one objective")
    return combine([sago_keeps_more(g, forget_resolution, retain_resolution, resolution_kind) for g in gains],
                   [g["objective"] for g in gains])


# -- TOFU rows to the paper's axes ---------------------------------------------------------------

METRIC_AXES = {"forget_Q_A_ROUGE": "1-ROUGE-L", "forget_Q_A_Prob": "1-Prob", "forget_truth_ratio": "Truth Ratio",
               "model_utility": "MU"}


def tofu_axes(row: Mapping[str, float]) -> dict[str, float]:
    """A TOFU evaluation row (`Lab.evaluate`) on the MASC paper's four radar axes (higher is better)."""
    from unlearning.metrics.tofu import masc_axes

    return masc_axes(row["forget_Q_A_ROUGE"], row["forget_Q_A_Prob"], row["forget_truth_ratio"], row["model_utility"])


def real_tofu_signals(target_forget_quality: float, target_accuracy: Mapping[str, float],
                      oracle_accuracy: Mapping[str, float], utility_gap: float, most_damaged: str,
                      utility_resolution: float) -> list[dict]:
    """Whether TOFU on a real model can say what the tiny models could not, as rows (check,
    value, oracle, holds): the KS test of forget quality tells the target from the oracle (p below
    `floors.SIGNAL_ALPHA`); the target knows its facts beyond the trained wording (paraphrased and
    fully paraphrased questions, from its learning gates, above the chance of picking the true
    value among six); and model utility moves when a method breaks the model (target minus the
    most damaged model, more than one utility item). A check that fails takes MU out of the
    trade-off verdict (`tofu_tradeoff(floors=...)`)."""
    from unlearning.benchmarks.tofu import PARAPHRASE_CHANCE
    from unlearning.floors import SIGNAL_ALPHA

    rows = [{"check": f"forget quality of the target (KS p-value) < {SIGNAL_ALPHA:g}", "value": target_forget_quality,
             "holds": target_forget_quality < SIGNAL_ALPHA}]
    for key, words in (("forget_paraphrased_question_accuracy", "paraphrased-question"),
                       ("forget_paraphrase_accuracy", "fully paraphrased")):
        rows.append({"check": f"target's {words} accuracy > chance ({PARAPHRASE_CHANCE:.2f})",
                     "value": target_accuracy[key], "oracle": oracle_accuracy[key],
                     "holds": target_accuracy[key] > PARAPHRASE_CHANCE})
    rows.append({"check": f"model utility: target minus the most damaged model ({most_damaged}) > one item "
                          f"({utility_resolution:.3f})", "value": utility_gap, "holds": utility_gap > utility_resolution})
    return rows


def axis_floors(flat: Mapping[str, str]) -> dict[str, str]:
    """`floors` reasons keyed by metric (a chapter's `flat`) keyed by radar axis instead."""
    return {METRIC_AXES[k]: why for k, why in flat.items() if k in METRIC_AXES}


def tofu_resolutions(n_forget: int, n_utility: Sequence[int]) -> dict[str, float]:
    """Each radar axis's resolution: one forget item for the three forget axes; for model utility
    one item of its smallest evaluation set (retain, real authors, world facts)."""
    forget = item_resolution(n_forget)
    return {"1-ROUGE-L": forget, "1-Prob": forget, "Truth Ratio": forget, "MU": item_resolution(min(n_utility))}
