"""Every claim's decision rule: numbers and their 95 % intervals in, a verdict and its reason out.

A chapter computes its results and their intervals (`experiments.intervals`: paired bootstraps over
the same evaluation items, widened by the seed spread where runs repeat), passes them here and
prints what comes back; no verdict logic and no threshold lives in a notebook. Each rule takes
`Estimate`s, never items, so a paper's published table can be fed to it as it is (`from_table`),
and each says *held*, *partly*, *did not hold* or *cannot tell here* (`claims.VERDICTS`) under
these rules, as a reviewer would read them:

- a difference decides only when its 95 % interval excludes zero; inside it, "cannot tell here";
- "best" needs a resolved lead; ties count only on axes that were free to differ (an axis matched
  by construction is not read), and a comparison tied everywhere cannot tell;
- a comparison at unequal forgetting is confounded and cannot tell; "did not hold" needs the other
  side to be at least as good on both (dominance);
- a claim is refuted only on a run where the method behaved as its paper reports: a collapsed run
  (its utility below the oracle's beyond the interval) carries no speed verdict and no refutation;
- the only typed numbers are the papers' own statements (their constants below, with their source).

Construction checks (guarantees of a rule's algebra, e.g. "SAGO never opposes retention") are
checked by `construction_check` and shown apart from findings on the claims page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from experiments.claims import CANNOT_TELL, HELD, NOT_HELD, PARTLY, tally
from experiments.intervals import ALPHA, Estimate, ratio_from_bars
from unlearning.metrics.tofu import masc_axes


@dataclass(frozen=True)
class Verdict:
    """A rule's answer: the verdict, why (always for "cannot tell here"), how the intervals it read
    were computed (`resolution`: items, resamples, seeds), and the differences it decided on with
    their 95 % intervals (`evidence`), both shown on the claims page."""

    verdict: str
    reason: str = ""
    resolution: str = ""
    evidence: str = ""


def _how(*estimates: Estimate) -> str:
    """The distinct descriptions of how `estimates` were computed, joined."""
    return "; ".join(dict.fromkeys(e.how for e in estimates if e.how))


def collapsed(utility_against_oracle: Estimate, name: str = "MASC") -> str:
    """Why a run cannot stand for its method ("" when it can): its utility lies below the
    retain-only oracle's beyond the interval (`utility_against_oracle` = run - oracle), where the
    paper's run keeps it (MASC's TOFU model utility 0.65 against the oracle's 0.61)."""
    if utility_against_oracle.negative:
        return (f"{name}'s utility is below the oracle's ({utility_against_oracle.text()}): the run did not keep "
                "utility as its paper reports, so it carries no verdict")
    return ""


# -- MASC: speed ---------------------------------------------------------------------------------

# MASC's wall-clock table (seconds; mean, low, high of the error bars): masc.md s. 15.
PAPER_SECONDS: dict[str, dict[str, tuple[float, float, float]]] = {
    "tofu": {"NPO+KLR": (985, 915, 1050), "GA+GDR": (910, 725, 1090), "SimNPO": (545, 490, 595), "MASC": (88, 64, 113)},
    "muse-news": {"NPO+KLR": (4060, 3420, 4710), "GA+GDR": (2520, 2430, 2600), "SimNPO": (1880, 1845, 1915),
                  "MASC": (140, 85, 190)},
    "muse-books": {"NPO+KLR": (2575, 2140, 2990), "GA+GDR": (575, 540, 605), "SimNPO": (2650, 2590, 2710),
                   "MASC": (64, 43, 85)},
}


def paper_speedup(benchmark: str, masc: tuple[float, float, float] | None = None) -> Estimate:
    """The paper's speed-up of MASC over its fastest baseline on `benchmark`: the mean ratio and the
    smallest and largest ratio its error bars allow (`masc` replaces MASC's bars)."""
    table = PAPER_SECONDS[benchmark]
    fastest = min((m for m in table if m != "MASC"), key=lambda m: table[m][0])
    return ratio_from_bars(table[fastest], masc or table["MASC"])


def speed_against_paper(ratio: Estimate, benchmark: str, stopped_by_itself: bool, collapse: str = "") -> Verdict:
    """MASC's speed-up over the fastest baseline run over its full official budget (`ratio`, the
    baseline's seconds over MASC's, with its interval), question (a) of the speed claim. The claim
    is a competitive trade-off *in a fraction of the time*, so a collapsed run (`collapse`, its
    reason) carries no speed verdict. Cannot tell when the interval covers 1x; did not hold when it
    lies below; partly when MASC ran to its step cap or is resolved below the smallest ratio the
    paper's error bars allow; held otherwise."""
    evidence = f"speed-up {ratio.text(2, signed=False)}x" if not math.isnan(ratio.value) else ""
    if collapse:
        return Verdict(CANNOT_TELL, collapse, ratio.how, evidence)
    if math.isnan(ratio.value):
        return Verdict(CANNOT_TELL, "no baseline of the paper ran in this profile")
    if not ratio.above(1) and not ratio.below(1):
        return Verdict(CANNOT_TELL, f"MASC's speed-up {ratio.value:.2f}x is within its timing interval of 1x",
                       ratio.how, evidence)
    if ratio.below(1):
        return Verdict(NOT_HELD, f"MASC took longer than the fastest baseline ({ratio.value:.2f}x)", ratio.how, evidence)
    if not stopped_by_itself:
        return Verdict(PARTLY, f"{ratio.value:.1f}x faster, but MASC ran to its step cap instead of stopping by itself",
                       ratio.how, evidence)
    paper_low = paper_speedup(benchmark).low
    if ratio.below(paper_low):
        return Verdict(PARTLY, f"{ratio.value:.1f}x faster, below the {paper_low:.1f}x the paper's error bars allow",
                       ratio.how, evidence)
    return Verdict(HELD, "", ratio.how, evidence)


def speed_sentence(masc_seconds: float, masc_steps: int, stopped_by_itself: bool,
                   baseline_seconds: Mapping[str, float], benchmark: str, ratio: Estimate, digits: int = 1) -> str:
    """The paper's speed question in one sentence, as the TOFU chapters print it beside
    `speed_against_paper`'s verdict: MASC's run, the baselines' full budgets, the ratio to the
    fastest with its interval and the paper's own ratio with the span its error bars allow."""
    if not baseline_seconds:
        return f"MASC ran {masc_steps} steps in {masc_seconds:.{digits}f} s; no baseline of the paper ran here"
    low, high = min(baseline_seconds.values()), max(baseline_seconds.values())
    paper = paper_speedup(benchmark)
    return (f"MASC stopped {'by itself' if stopped_by_itself else 'at its step cap'} after {masc_steps} steps in "
            f"{masc_seconds:.{digits}f} s; the paper's baselines ran their full official budgets in {low:.{digits}f}-"
            f"{high:.{digits}f} s: **{ratio.value:.1f}x** faster than the fastest (95 % interval {ratio.low:.1f}-"
            f"{ratio.high:.1f}x; the paper: {paper.value:.1f}x, {paper.low:.1f}-{paper.high:.1f}x within its error bars)")


def speed_to_good_model(masc_reached: bool, ratios: Mapping[str, Estimate | None]) -> Verdict:
    """Question (b), beyond the paper: the time to hold a good model, each method paying for how
    it finds it (`trajectory.selected_time`). `ratios`: baseline -> its time over MASC's with the
    interval of both runs' timings (None: that baseline never held one; any value when MASC did
    not). Held when MASC gets there resolved first, did not hold when a baseline does (or only
    baselines do), cannot tell when no run gets there or a baseline is within the timing interval."""
    reached = {m: r for m, r in ratios.items() if r is not None}
    if not masc_reached and not reached:
        return Verdict(CANNOT_TELL, "no run reached a good model within its budget")
    if not masc_reached:
        return Verdict(NOT_HELD, f"only baselines reached a good model ({', '.join(reached)})")
    if not reached:
        return Verdict(HELD, "only MASC reached a good model")
    how, evidence = _how(*reached.values()), "; ".join(f"{m} / MASC {r.text(2, signed=False)}x" for m, r in reached.items())
    first = [m for m, r in reached.items() if r.below(1)]
    if first:
        return Verdict(NOT_HELD, f"{', '.join(first)} got there first", how, evidence)
    close = [m for m, r in reached.items() if not r.above(1)]
    if close:
        return Verdict(CANNOT_TELL, f"{', '.join(close)} within the timing interval of MASC", how, evidence)
    return Verdict(HELD, "", how, evidence)


# -- MASC: trade-off -----------------------------------------------------------------------------

TOFU_AXES = ("1-ROUGE-L", "1-Prob", "Truth Ratio", "MU")  # metrics.tofu.masc_axes, higher is better
# each radar axis as the TOFU metric it is made of, and its sign (1-x axes run against the metric)
AXIS_METRICS = {"1-ROUGE-L": ("forget_Q_A_ROUGE", -1), "1-Prob": ("forget_Q_A_Prob", -1),
                "Truth Ratio": ("forget_truth_ratio", 1), "MU": ("model_utility", 1)}


def _axis_standing(differences: Mapping[str, Estimate]) -> str:
    """"best" (ahead of every other method beyond the interval), "behind" (behind one beyond it) or
    "tied", from `differences` (other method -> this method minus it, higher is better)."""
    if any(d.negative for d in differences.values()):
        return "behind"
    return "best" if all(d.positive for d in differences.values()) else "tied"


def tofu_tradeoff(differences: Mapping[str, Mapping[str, Estimate]], method: str = "MASC",
                  floors: Mapping[str, str] | None = None, matched: Sequence[str] = (), collapse: str = "") -> Verdict:
    """The MASC paper's trade-off statement on TOFU: `method` best or tied on 3 of its 4 radar axes
    (`TOFU_AXES`, higher is better) and the best model utility, against every baseline.

    `differences`: baseline -> axis -> `method` minus the baseline with its interval. Axes named in
    `floors` (axis -> why) carry no signal and axes in `matched` are equal by construction (read at
    matched forgetting): neither is read, and the statement asks for best-or-tied on all but one of
    the axes left. Best needs a resolved lead, over every baseline. Held: the statement; partly:
    one of its two halves; did not hold: behind on two axes without the best utility; cannot tell
    without utility, with fewer than two axes left, or with no axis resolved at all. A `collapse`
    reason (the method's own run did not keep utility) cannot tell: no verdict rests on a run that
    is not the method as its paper reports it."""
    floors = dict(floors or {})
    if not differences:
        return Verdict(CANNOT_TELL, "no baseline to compare with")
    if "MU" in floors:
        return Verdict(CANNOT_TELL, floors["MU"])
    free = [a for a in TOFU_AXES if a not in floors and a not in matched]
    if len(free) < 2:
        return Verdict(CANNOT_TELL, "; ".join(floors.values()) or "fewer than two axes free to differ")
    standing = {a: _axis_standing({b: d[a] for b, d in differences.items()}) for a in free}
    how = _how(*(d[a] for d in differences.values() for a in free))
    evidence = "; ".join(f"{a} {standing[a]} (" + ", ".join(f"vs {b} {d[a].text()}" for b, d in differences.items()) + ")"
                         for a in free)
    if collapse:
        return Verdict(CANNOT_TELL, collapse, how, evidence)
    if all(s == "tied" for s in standing.values()) and not any(d[a].resolved for d in differences.values() for a in free):
        return Verdict(CANNOT_TELL, f"{method} cannot be told from the baselines on any axis free to differ", how, evidence)
    ok = [a for a in free if standing[a] != "behind"]
    need, best_mu = len(free) - 1, standing["MU"] == "best"
    text = f"best or tied on {', '.join(ok) or 'none'} of {len(free)} axes free to differ" + (
        f" ({', '.join(matched)} matched by construction)" if matched else "")
    if len(ok) >= need and best_mu:
        return Verdict(HELD, text, how, evidence)
    if len(ok) >= need or best_mu:
        return Verdict(PARTLY, text + ("" if best_mu else "; not a resolved best model utility"), how, evidence)
    return Verdict(NOT_HELD, text, how, evidence)


def matched_point(points: Sequence[Mapping[str, float]], level: float, key: str = "forget_Q_A_ROUGE") -> Mapping:
    """The point of a run (its checkpoints and final model, `trajectory.trajectory`) whose `key`
    is closest to `level`: a baseline read where it forgets as much as the method it is compared
    with (the trade-off at matched forgetting); the later point on a tie."""
    if not points:
        raise ValueError("matched_point needs at least one point")
    return min(reversed(list(points)), key=lambda p: abs(p[key] - level))


def tofu_axes(row: Mapping[str, float]) -> dict[str, float]:
    """A TOFU evaluation row (`Lab.evaluate`) on the MASC paper's four radar axes (higher is better)."""
    return masc_axes(row["forget_Q_A_ROUGE"], row["forget_Q_A_Prob"], row["forget_truth_ratio"], row["model_utility"])


def axis_floors(flat: Mapping[str, str]) -> dict[str, str]:
    """`floors` reasons keyed by metric (a chapter's `flat`) keyed by radar axis instead."""
    metric_axes = {metric: axis for axis, (metric, _) in AXIS_METRICS.items()}
    return {metric_axes[k]: why for k, why in flat.items() if k in metric_axes}


# -- MASC: MUSE, scale, 4-bit ---------------------------------------------------------------------

def verbatim_removed(memorised: Estimate, removal: Estimate, residual: Estimate) -> Verdict:
    """MUSE, one corpus: the method removes verbatim memorisation, as the claim is registered
    (VerbMem forget down to the retrained oracle's level; the paper: VerbMem forget <= 0.05-0.08 for
    every method). `memorised` = target - oracle, `removal` = target - method, `residual` = method
    - oracle (VerbMem, with intervals). Cannot tell when the target memorised nothing beyond the
    oracle; held when the method removed VerbMem and is not above the oracle's beyond the interval;
    partly when it removed some but stays above; did not hold when it stays above and removed none."""
    how = _how(memorised, removal, residual)
    evidence = f"target - oracle {memorised.text()}; target - method {removal.text()}; method - oracle {residual.text()}"
    if not memorised.positive:
        return Verdict(CANNOT_TELL, f"the target's VerbMem is not above the oracle's beyond the interval "
                                    f"({memorised.text()}): nothing to remove", how, evidence)
    if residual.positive:
        if removal.positive:
            return Verdict(PARTLY, f"VerbMem came down by {removal.value:.3f} but stays above the oracle's by "
                                   f"{residual.value:.3f}", how, evidence)
        return Verdict(NOT_HELD, f"VerbMem stays above the oracle's by {residual.value:.3f}", how, evidence)
    if removal.positive:
        return Verdict(HELD, "", how, evidence)
    return Verdict(CANNOT_TELL, "VerbMem moved within its interval", how, evidence)


def combine(verdicts: Sequence[Verdict], labels: Sequence[str]) -> Verdict:
    """One verdict from several cases (corpora, splits, codes, objectives): cases that cannot tell
    are set aside (and named); the rest are tallied (partly counts as half a success); all cannot
    tell -> cannot tell."""
    decided = [(v, label) for v, label in zip(verdicts, labels) if v.verdict != CANNOT_TELL]
    undecided = [f"{label}: {v.reason}" for v, label in zip(verdicts, labels) if v.verdict == CANNOT_TELL]
    resolution = "; ".join(dict.fromkeys(v.resolution for v in verdicts if v.resolution))
    evidence = "; ".join(f"{label}: {v.evidence}" for v, label in zip(verdicts, labels) if v.evidence)
    if not decided:
        return Verdict(CANNOT_TELL, "; ".join(undecided), resolution, evidence)
    score = sum({HELD: 2, PARTLY: 1, NOT_HELD: 0}[v.verdict] for v, _ in decided)
    verdict = HELD if score == 2 * len(decided) else NOT_HELD if score == 0 else PARTLY
    reasons = [f"{label}: {v.reason}" for v, label in decided if v.reason] + undecided
    return Verdict(verdict, "; ".join(reasons), resolution, evidence)


def grows_with_size(net: Estimate, steps: Sequence[Estimate]) -> Verdict:
    """"Larger models memorise more" (or "utility grows with scale"): `net` = the largest size's
    value minus the smallest's, `steps` = each size minus the one below (paired intervals). Held
    when the net rise is resolved and no step falls beyond its interval; partly when one does;
    did not hold when the net change is a resolved fall; cannot tell inside the interval."""
    if not steps or net is None:
        return Verdict(CANNOT_TELL, "one model size in this profile")
    how = _how(net, *steps)
    evidence = f"largest - smallest {net.text()}; steps " + ", ".join(s.text() for s in steps)
    if not net.resolved:
        return Verdict(CANNOT_TELL, f"smallest to largest changes by {net.text()}, within the interval", how, evidence)
    if net.negative:
        return Verdict(NOT_HELD, f"falls by {-net.value:.3f} from the smallest to the largest size", how, evidence)
    falls = sum(s.negative for s in steps)
    return (Verdict(HELD, "", how, evidence) if not falls else
            Verdict(PARTLY, f"{falls} step(s) fall beyond the interval on the way", how, evidence))


def scale_invariant(removals: Mapping[str, Estimate], gap_changes: Mapping[str, Estimate], utility: Verdict,
                    floor_reason: str = "", collapse: str = "") -> Verdict:
    """MASC's scale study: after unlearning the forget metric does not depend on scale while
    utility grows with it. `removals`: size -> target minus unlearned forget metric (every size
    must have forgotten, beyond the interval, or invariance is vacuous); `gap_changes`: a pair of
    sizes -> the change of (unlearned - oracle) between them (flat when no change is resolved);
    `utility`: `grows_with_size` on the unlearned models' utility. Held when both halves hold,
    partly when one does; `floor_reason` or a `collapse` reason cannot tell."""
    how = _how(*removals.values(), *gap_changes.values())
    evidence = ("removed " + ", ".join(f"{s} {e.text()}" for s, e in removals.items()) + "; gap to the oracle changes "
                + ", ".join(f"{p} {e.text()}" for p, e in gap_changes.items()))
    if len(removals) < 2:
        return Verdict(CANNOT_TELL, "one model size in this profile")
    if floor_reason or collapse:
        return Verdict(CANNOT_TELL, floor_reason or collapse, how, evidence)
    unmoved = [s for s, e in removals.items() if not e.positive]
    if unmoved:
        return Verdict(CANNOT_TELL, f"nothing was forgotten beyond the interval at size {', '.join(unmoved)}: "
                                    "invariance of an unmoved metric says nothing", how, evidence)
    moved = [p for p, e in gap_changes.items() if e.resolved]
    flat = not moved
    parts = ["forget metric flat across sizes" if flat else f"the gap to the oracle changes between {', '.join(moved)}",
             f"utility: {utility.verdict}" + (f" ({utility.reason})" if utility.reason else "")]
    if utility.verdict == CANNOT_TELL:
        return Verdict(PARTLY if flat else NOT_HELD, "; ".join(parts), how, evidence)
    verdict = tally(int(flat) + int(utility.verdict == HELD), 2)
    return Verdict(verdict, "" if verdict == HELD else "; ".join(parts), how, evidence)


def survives_quantization(removal: Estimate, recovery: Estimate, residual: Estimate, utility: str = "",
                          collapse: str = "") -> Verdict:
    """Forgetting survives 4-bit quantization (Zhang et al.'s test). `removal` = target - unlearned
    forget metric in full precision; `recovery` = the unlearned model's rise under 4 bits minus
    the control's rise where the control rises (signed: only drift *toward* recovery excuses
    recovery); `residual` = the quantized target's forget metric minus the quantized unlearned
    model's (what is still forgotten in the same deployment). Judged only where the removal is
    resolved; did not hold when the recovery is resolved; held when it is not and the forgetting
    is still resolved after 4 bits; cannot tell otherwise, and for a model that collapsed in full
    precision (`collapse`, its reason: nothing of the method to survive). `utility` (utility after
    4 bits, in words) is shown with the reason."""
    how, share = _how(removal, recovery, residual), recovery.value / removal.value if removal.value > 0 else math.nan
    evidence = f"removed {removal.text()}; recovered {recovery.text()}; still forgotten at 4 bits {residual.text()}"
    shown = f"; {utility}" if utility else ""
    if collapse:
        return Verdict(CANNOT_TELL, collapse + shown, how, evidence)
    if not removal.positive:
        return Verdict(CANNOT_TELL, f"unlearning removed {removal.text()}, not resolved: nothing to recover{shown}",
                       how, evidence)
    if recovery.positive:
        return Verdict(NOT_HELD, f"recovers {share:.0%} of what was removed{shown}", how, evidence)
    if residual.positive:
        return Verdict(HELD, f"recovers {max(share, 0):.0%} of what was removed, within the interval{shown}", how, evidence)
    return Verdict(CANNOT_TELL, f"after 4 bits the model cannot be told from the quantized target{shown}", how, evidence)


# -- SAGO ---------------------------------------------------------------------------------------

def construction_check(smallest: Mapping[str, float], tolerance: float = 1e-6) -> Verdict:
    """A guarantee by construction (PCGrad and SAGO never oppose retention): every rule's smallest
    cos(g_final, g_r) is >= -tolerance (float rounding). Held means the implementation keeps the
    guarantee; did not hold is a bug, not a finding."""
    broken = {r: v for r, v in smallest.items() if v < -tolerance}
    if not smallest:
        return Verdict(CANNOT_TELL, "no combined rule ran")
    return Verdict(NOT_HELD, "violated by " + ", ".join(broken)) if broken else Verdict(HELD)


def tighter(difference: Estimate) -> Verdict:
    """"SAGO aligns the update more tightly with retention than PCGrad", by the paper's statistic:
    the mean Comb-Retain cosine cos(g_final, g_r) over training steps, SAGO's minus PCGrad's
    (`difference`, with its interval). Held when it is resolved above zero, did not hold below."""
    evidence = f"mean Comb-Retain SAGO - PCGrad {difference.text()}"
    if difference.positive:
        return Verdict(HELD, "", difference.how, evidence)
    if difference.negative:
        return Verdict(NOT_HELD, "SAGO's mean Comb-Retain cosine is below PCGrad's", difference.how, evidence)
    return Verdict(CANNOT_TELL, "the mean cosines are within their interval", difference.how, evidence)


def knowledge_to_remove(target_accuracy: Estimate, chance: float) -> str:
    """Why a multiple-choice forget set carries no signal: "" when the target answers it above
    `chance` beyond the interval of its accuracy, else the reason."""
    if target_accuracy.above(chance):
        return ""
    return (f"the target answers the forget questions at {target_accuracy.text(signed=False)}, not above chance "
            f"({chance:.2f}) beyond the interval: no knowledge to remove")


def keeps_more(gain: Estimate, forgets_less: Estimate, rule: str = "the rule", other: str = "+GD") -> Verdict:
    """`rule` keeps more utility than `other` at comparable forgetting. `gain` = rule - other on
    the retained metric; `forgets_less` = how much less the rule forgets (its forget metric minus
    the other's, lower forget metric = more forgotten). Held: more kept, not less forgotten; did not
    hold: the other at least as good on both and better on one (dominance); cannot tell: inside
    the intervals, or confounded (keeps more only while forgetting less, or less while forgetting
    more)."""
    how = _how(gain, forgets_less)
    evidence = f"{rule} - {other}: kept {gain.text()}, forget metric {forgets_less.text()}"
    if gain.positive:
        if forgets_less.positive:
            return Verdict(CANNOT_TELL, f"{rule} keeps more only while forgetting less: confounded", how, evidence)
        return Verdict(HELD, "", how, evidence)
    if gain.negative:
        if forgets_less.negative:
            return Verdict(CANNOT_TELL, f"{rule} keeps less while forgetting more: confounded", how, evidence)
        return Verdict(NOT_HELD, f"{rule} keeps less without forgetting more", how, evidence)
    if forgets_less.positive:
        return Verdict(NOT_HELD, f"{rule} keeps as much but forgets less", how, evidence)
    return Verdict(CANNOT_TELL, f"{rule} and {other} keep the same within the interval", how, evidence)


def utility_recovered(rules: Mapping[str, tuple[Estimate, Estimate]], no_signal: str = "") -> Verdict:
    """SAGO's WMDP claim for one split and objective: every rule of `rules` (PCGrad, SAGO; rule ->
    (MMLU gain over +GD, forget accuracy minus +GD's)) keeps more utility than +GD at no weaker
    forgetting (`keeps_more` per rule, combined); `no_signal` (no knowledge to remove) cannot tell."""
    if no_signal:
        return Verdict(CANNOT_TELL, no_signal)
    return combine([keeps_more(gain, less, rule) for rule, (gain, less) in rules.items()], list(rules))


def ordered_by_granularity(steps: Sequence[Estimate], net: Estimate, forget_differences: Sequence[Estimate]) -> Verdict:
    """Retention rises from global PCGrad to module-wise PCGrad to SAGO: `steps` = module-wise -
    global and SAGO - module-wise utility, `net` = SAGO - global, at comparable forgetting (no
    difference of `forget_differences`, every pair of the three rules, resolved: otherwise the
    comparison is confounded and cannot tell). Held when the net rise is resolved and no step falls
    beyond its interval; partly when one does; did not hold when the net is a resolved fall."""
    how = _how(net, *steps, *forget_differences)
    evidence = (f"SAGO - global {net.text()}; steps " + ", ".join(s.text() for s in steps) + "; forget differences "
                + ", ".join(f.text() for f in forget_differences))
    if any(f.resolved for f in forget_differences):
        return Verdict(CANNOT_TELL, "the three rules forget unequally beyond the interval: confounded", how, evidence)
    if not net.resolved:
        return Verdict(CANNOT_TELL, "global PCGrad and SAGO keep the same within the interval", how, evidence)
    if net.negative:
        return Verdict(NOT_HELD, "SAGO keeps less than global PCGrad", how, evidence)
    falls = sum(s.negative for s in steps)
    return Verdict(HELD, "", how, evidence) if not falls else Verdict(PARTLY, "a step falls on the way", how, evidence)


def unmoved_forgetting(drop: Estimate) -> str:
    """Why a grid cannot compare rules on RWKU ("" when it can): its best run did not move the
    forget summary down from the start model beyond the interval (`drop` = start - best)."""
    if drop.positive:
        return ""
    return f"the grid hardly moved the forget metric (start - best run {drop.text()})"


def sago_keeps_more_over(gains: Mapping[str, tuple[Estimate, Estimate]], no_signal: str = "",
                         unmoved: Mapping[str, str] | None = None) -> Verdict:
    """The RWKU claim, "SAGO keeps more neighbour knowledge than PCGrad", over a grid's objectives
    (objective -> (SAGO - PCGrad neighbour, SAGO - PCGrad forget metric)): `keeps_more` per
    objective, combined; cannot tell when `no_signal` gives a reason or no objective has both runs,
    and for an objective of `unmoved` (objective -> why: a run whose forgetting did not move beyond
    its interval keeps its knowledge by not unlearning, which says nothing of the rule)."""
    if no_signal:
        return Verdict(CANNOT_TELL, no_signal)
    if not gains:
        return Verdict(CANNOT_TELL, "this profile's grid has no +GD, PCGrad and SAGO runs of one objective")
    unmoved = unmoved or {}
    return combine([Verdict(CANNOT_TELL, unmoved[label]) if label in unmoved else keeps_more(g, f, "SAGO", "PCGrad")
                    for label, (g, f) in gains.items()], list(gains))


# -- the real model's signals ----------------------------------------------------------------------

def real_tofu_signals(target_forget_quality: float, paraphrase: Mapping[str, Estimate], chance: float,
                      utility_drop: Estimate, most_damaged: str) -> list[dict]:
    """Whether TOFU on a real model can say what the tiny models could not, as rows (check, value,
    interval, holds): the KS test of forget quality tells the target from the oracle (p below the
    intervals' level, `intervals.ALPHA`); the target knows its facts beyond the trained wording
    (`paraphrase`: label -> accuracy with its interval, above `chance` beyond it); and model utility
    moves when a method breaks the model (`utility_drop` = target - the most damaged model,
    resolved). A check that fails takes MU out of the trade-off verdict (`tofu_tradeoff(floors=...)`)."""
    rows = [{"check": f"forget quality of the target (KS p-value) < {ALPHA:g}", "value": target_forget_quality,
             "interval": "", "holds": target_forget_quality < ALPHA}]
    for label, accuracy in paraphrase.items():
        rows.append({"check": f"target's {label} accuracy > chance ({chance:.2f})", "value": accuracy.value,
                     "interval": accuracy.text(signed=False), "holds": accuracy.above(chance)})
    rows.append({"check": f"model utility: target minus the most damaged model ({most_damaged}) > 0", "value":
                 utility_drop.value, "interval": utility_drop.text(), "holds": utility_drop.positive})
    return rows
