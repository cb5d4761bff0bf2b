"""The checks of the graded exercises: each compares a student's implementation with a reference.

An exercise is graded by running its checks on the student's object (a function or a class with
the library's name and signature) against a *reference* namespace holding the same names: the
library itself when grading in this repository (`library_reference`), or the solutions shipped in
an autograder bundle. Nothing here imports the library's implementations, so a bundle can carry
this file as it is.

Each check returns the hint to show when it fails (None when it passes). The hand-derived values
in the checks are worked out in their comments; every listed typical mistake is caught by at least
one check (tests/classroom/test_classroom.py proves it with a wrong implementation per mistake).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

Check = Callable[[object, object], "str | None"]


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: `name` is the function or class the student defines."""
    key: str            # "1.1"
    assignment: str     # "A1"
    name: str           # "restricted_margin"
    title: str
    points: int
    checks: tuple[Check, ...]
    mistakes: tuple[str, ...]  # the typical wrong implementations the checks catch


def _close(a, b, tol: float = 1e-4) -> bool:
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=tol, rtol=tol))


def _value(x) -> float:
    return float(x.detach()) if isinstance(x, torch.Tensor) else float(x)


# ---------------------------------------------------------------- 1.1 restricted_margin
# logits (2, 1, 0.5, -1), gold 0, k = 2: S = {1, 0.5} (gold excluded),
# m = 2 - log(e^1 + e^0.5) = 0.52592; beta = 2: 4 - log(e^2 + e^1) = 1.68674
HAND_LOGITS = [[2.0, 1.0, 0.5, -1.0]]


def _margin_gold_excluded(f, ref):
    m = f(torch.tensor(HAND_LOGITS), torch.tensor([0]), k=2)
    if not _close(m, [0.52592]):
        return ("logits (2, 1, 0.5, -1), gold token 0, k=2 should give 2 - log(e^1 + e^0.5) = 0.526: choose the "
                "top-k among the *other* tokens (exclude the gold one) and combine them with log-sum-exp, not max")


def _margin_beta(f, ref):
    m = f(torch.tensor(HAND_LOGITS), torch.tensor([0]), k=2, beta=2.0)
    if not _close(m, [1.68674]):
        return "with beta = 2 the same example gives 2*2 - log(e^(2*1) + e^(2*0.5)) = 1.687: beta scales gold and rivals alike"


def _margin_batch(f, ref):
    g = torch.Generator().manual_seed(0)
    logits, targets = torch.randn(2, 3, 7, generator=g), torch.randint(0, 7, (2, 3), generator=g)
    if not _close(f(logits, targets, k=3, beta=0.5), ref.restricted_margin(logits, targets, k=3, beta=0.5)):
        return "a [2, 3, 7] batch of logits should give one margin per position ([2, 3]) equal to the formula's"


def _margin_gradient(f, ref):
    g = torch.Generator().manual_seed(1)
    base, targets = torch.randn(3, 6, generator=g), torch.randint(0, 6, (3,), generator=g)
    mine, theirs = base.clone().requires_grad_(True), base.clone().requires_grad_(True)
    out = f(mine, targets, k=2)
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        return ("the margin must stay differentiable: gradients flow through the gold and rival logits (only the "
                "choice of S is detached)")
    out.sum().backward()
    ref.restricted_margin(theirs, targets, k=2).sum().backward()
    if mine.grad is None or not _close(mine.grad, theirs.grad):
        return "the gradient of the margin is wrong: +beta on the gold logit, -beta*softmax over the rivals in S, 0 elsewhere"


# ---------------------------------------------------------------- 1.2 masc_loss
# margins (1.0, 0.2, 3.0 | 0.9, -1.0, 0.0), mask (1 1 1 | 1 0 0), tau = logit(0.7) = 0.84730, eta = 0.5:
# relu(m - (tau - eta)) / eta over the 4 active positions = (1.30541 + 0 + 5.30541 + 1.10541) / 4 = 1.92906
HAND_MARGINS = [[1.0, 0.2, 3.0], [0.9, -1.0, 0.0]]
HAND_MASK = [[True, True, True], [True, False, False]]
TAU_07 = math.log(0.7 / 0.3)


def _hinge_hand(f, ref):
    loss = f(torch.tensor(HAND_MARGINS), torch.tensor(HAND_MASK), TAU_07, 0.5)
    if not _close(_value(loss), 1.92906):
        value = _value(loss)
        hint = ("the hinge is relu(m - (tau - eta)) / eta, averaged over the masked-in positions of the whole batch "
                f"(one flat token mean): this example should give 1.929, got {value:.4f}")
        if _close(value, 1.65451):
            hint += " (that is a mean per sequence, then over sequences)"
        return hint


def _hinge_empty(f, ref):
    margins = torch.tensor(HAND_MARGINS, requires_grad=True)
    loss = f(margins, torch.zeros(2, 3, dtype=torch.bool), TAU_07, 0.5)
    if not isinstance(loss, torch.Tensor) or not math.isfinite(_value(loss)) or _value(loss) != 0.0:
        return "a batch with no masked-in position should give a loss of 0 (not NaN), still a tensor"
    if loss.requires_grad:
        loss.backward()
        if margins.grad is not None and margins.grad.abs().sum() != 0:
            return "a batch with no masked-in position should give a zero gradient"


def _hinge_gradient(f, ref):
    base = torch.tensor(HAND_MARGINS)
    mine, theirs = base.clone().requires_grad_(True), base.clone().requires_grad_(True)
    loss = f(mine, torch.tensor(HAND_MASK), TAU_07, 0.5)
    if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
        return "the loss must be differentiable with respect to the margins"
    loss.backward()
    ref.masc_loss(theirs, torch.tensor(HAND_MASK), TAU_07, 0.5).backward()
    if mine.grad is None or not _close(mine.grad, theirs.grad):
        return "the gradient is 1/(eta * number of active positions) where the hinge is active, 0 elsewhere"


# ---------------------------------------------------------------- 2.1 tau_from_rho, violation_rate
def _tau(module, ref):
    tau = getattr(module, "tau_from_rho", None)
    if tau is None:
        return "define tau_from_rho(rho)"
    if not (_close(tau(0.7), 0.84730) and _close(tau(0.5), 0.0)):
        return "tau = logit(rho) = log(rho / (1 - rho)): rho = 0.7 gives 0.847 and rho = 0.5 gives 0"


def _rate(module, margins, mask, tau):
    rate = getattr(module, "violation_rate")(torch.tensor(margins), torch.tensor(mask), tau)
    return _value(rate)


def _rate_strict(module, ref):
    if not _close(_rate(module, [[TAU_07, TAU_07 + 1.0]], [[True, True]], TAU_07), 0.5):
        return "a margin exactly at tau is not a violation: the test is strict, m > tau"


def _rate_macro(module, ref):
    # row 0: 4 of 4 positions violate (q = 1); row 1: 0 of 1 (q = 0): macro mean 0.5, not 4/5
    margins = [[2.0, 2.0, 2.0, 2.0], [-5.0, 9.0, 9.0, 9.0]]
    mask = [[True, True, True, True], [True, False, False, False]]
    value = _rate(module, margins, mask, 0.0)
    if not _close(value, 0.5):
        return ("V is the mean over sequences of each sequence's share of violating positions (every sequence weighs "
                f"the same) and masked-out positions do not count: this example should give 0.5, got {value:.3f}")


def _rate_float(module, ref):
    rate = getattr(module, "violation_rate")(torch.tensor([[1.0]]), torch.tensor([[True]]), 0.0)
    if not isinstance(rate, float):
        return f"violation_rate should return a Python float, got {type(rate).__name__}"


# ---------------------------------------------------------------- 2.2 ViolationStop
class _ScriptedProbe:
    """probe(n) -> the rate scripted for n; remembers every call."""

    def __init__(self, rates: dict[int, float]):
        self.rates, self.calls = rates, []

    def __call__(self, n: int) -> float:
        self.calls.append(n)
        return self.rates[n]


def _stop_run(cls, rates, steps, **settings):
    """Run the rule for `steps` steps as a training loop would (ending at the first stop)."""
    rule, probe, stopped = cls(**settings), _ScriptedProbe(rates), []
    for step in range(1, steps + 1):
        if rule.update(step, probe):
            stopped.append(step)
            break
    return rule, probe, stopped


def _stop_schedule(cls, ref):
    rule, probe, stopped = _stop_run(cls, {4: 0.9, 32: 0.9}, 6, tolerance=0.1, every=3, trigger_size=4, confirm_size=32)
    if probe.calls != [4, 4] or stopped:
        return ("probe only every `every` steps (steps 3 and 6 when every = 3), on `trigger_size` sequences; a trigger "
                f"above the tolerance asks for no confirmation (probe sizes seen: {probe.calls})")


def _stop_confirmation(cls, ref):
    rule, probe, stopped = _stop_run(cls, {4: 0.0, 32: 0.5}, 2, tolerance=0.1, every=2, trigger_size=4, confirm_size=32)
    if probe.calls != [4, 32] or stopped:
        return ("a trigger at or below the tolerance is confirmed on `confirm_size` sequences, and training stops only "
                f"if the confirmation agrees (probe sizes seen: {probe.calls}, stopped at {stopped})")


def _stop_fires(cls, ref):
    rule, probe, stopped = _stop_run(cls, {2: 0.25, 8: 0.25}, 4, tolerance=0.25, every=2, trigger_size=2, confirm_size=8)
    if stopped[:1] != [2]:
        return "both probes at exactly the tolerance should stop training (V <= tolerance, non-strict) at the first probe step"
    if list(getattr(rule, "history", [])) != [(2, "trigger", 2, 0.25), (2, "confirm", 8, 0.25)]:
        return "record every probe in `history` as (step, stage, n, rate), stage 'trigger' or 'confirm'"


# ---------------------------------------------------------------- 3.1 combine, rule pcgrad
# tensor 1: g_r = (4, 3), g_f = (1, -2): <g_f, g_r> = -2 < 0, so g_f <- g_f + 2/25 g_r = (1.32, -1.76);
# tensor 2: g_r = (1, 0), g_f = (1, 1): <g_f, g_r> = 1 >= 0, left alone. alpha = 0.5, gamma = 2:
# (0.5*4 + 2*1.32, 0.5*3 - 2*1.76) = (4.64, -2.02) and (0.5 + 2, 2) = (2.5, 2.0)
PC_F = [[1.0, -2.0], [1.0, 1.0]]
PC_R = [[4.0, 3.0], [1.0, 0.0]]


def _grads(rows):
    return [torch.tensor(r) for r in rows]


def _pcgrad_hand(f, ref):
    out = f(_grads(PC_F), _grads(PC_R), "pcgrad", alpha=0.5, gamma=2.0)
    if len(out) != 2 or not (_close(out[0], [4.64, -2.02]) and _close(out[1], [2.5, 2.0])):
        return ("one-sided PCGrad works per tensor: project g_f onto the normal plane of g_r only where <g_f, g_r> < 0 "
                "(never g_r, never where they agree), then return alpha*g_r + gamma*g_f")


def _pcgrad_pure(f, ref):
    forget, retain = _grads(PC_F), _grads(PC_R)
    f(forget, retain, "pcgrad")
    if not (_close(torch.stack(forget), PC_F) and _close(torch.stack(retain), PC_R)):
        return "combine must not modify the gradients it is given (return new tensors)"


def _pcgrad_random(f, ref):
    g = torch.Generator().manual_seed(2)
    forget = [torch.randn(3, 4, generator=g), torch.randn(5, generator=g)]
    retain = [torch.randn(3, 4, generator=g), torch.randn(5, generator=g)]
    mine, theirs = f(forget, retain, "pcgrad"), ref.combine(forget, retain, "pcgrad")
    if len(mine) != len(theirs) or not all(_close(a, b) for a, b in zip(mine, theirs)):
        return "random gradients (a 3x4 and a 5-vector parameter) differ from the rule: one dot product per tensor"


# ---------------------------------------------------------------- 3.2 combine, rule sago
# g_r = (1, -2, 0, 3), g_f = (2, 1, 5, 0): signs agree, conflict, zero, zero; exact zeros count as
# aligned, so with alpha = 0.5, gamma = 3: (3*2, 0.5*-2, 3*5, 3*0) = (6, -1, 15, 0)
def _sago_hand(f, ref):
    out = f([torch.tensor([2.0, 1.0, 5.0, 0.0])], [torch.tensor([1.0, -2.0, 0.0, 3.0])], "sago", alpha=0.5, gamma=3.0)
    if len(out) != 1 or not _close(out[0], [6.0, -1.0, 15.0, 0.0]):
        return ("SAGO takes alpha*g_r at coordinates where the signs conflict and gamma*g_f everywhere else (it does not "
                "add them); a zero has no sign and counts as aligned")


def _sago_tiny(f, ref):
    # 1e-30 * -1e-30 underflows to -0.0 in float32: a product test misses this conflict, a sign test does not
    out = f([torch.tensor([-1e-30])], [torch.tensor([1e-30])], "sago")
    if len(out) != 1 or float(out[0][0]) != float(torch.tensor(1e-30)):
        return "tiny coordinates (1e-30 against -1e-30) conflict too: compare signs, not the product, which underflows to 0"


def _sago_random(f, ref):
    g = torch.Generator().manual_seed(3)
    forget = [torch.randn(4, 3, generator=g), torch.randn(6, generator=g)]
    retain = [torch.randn(4, 3, generator=g), torch.randn(6, generator=g)]
    mine, theirs = f(forget, retain, "sago", alpha=2.0), ref.combine(forget, retain, "sago", alpha=2.0)
    if len(mine) != len(theirs) or not all(_close(a, b) for a, b in zip(mine, theirs)):
        return "random gradients differ from the rule (alpha = 2: alpha*g_r at conflicts, g_f elsewhere)"


# ---------------------------------------------------------------- 4.1 truth_ratio
# p_correct 0.5, perturbed (0.1, 0.4): geometric mean 0.2, TR = 0.2 / 0.5 = 0.4
def _tr_hand(f, ref):
    value = _value(f(0.5, [0.1, 0.4]))
    if not _close(value, 0.4):
        hint = "TR = geometric mean of the perturbed answers' probabilities / p_correct: (0.1*0.4)^(1/2) / 0.5 = 0.4"
        return hint + (" (you have the ratio upside down)" if _close(value, 2.5) else
                       " (an arithmetic mean gives 0.5)" if _close(value, 0.5) else f"; got {value:.4f}")


def _tr_collapsed(f, ref):
    try:
        value = _value(f(0.0, [0.1, 0.4]))
    except ZeroDivisionError:
        return "a collapsed model has p_correct = 0: add TOFU's epsilon 1e-10 to the denominator instead of dividing by zero"
    if not (math.isfinite(value) and _close(value, 0.2 / 1e-10, tol=1e-3)):
        return "with p_correct = 0 the ratio is 0.2 / 1e-10 (TOFU's epsilon in the denominator), a finite number"


def _tr_zero(f, ref):
    if not _close(_value(f(0.5, [0.0, 0.4])), 0.0):
        return "a perturbed answer with probability 0 makes the geometric mean, and the ratio, 0"


# ---------------------------------------------------------------- 4.2 forget_quality
def _fq_self(f, ref):
    values = [0.2, 0.5, 0.9, 1.3, 0.7]
    if not _close(_value(f(values, values)), 1.0):
        return "the oracle against itself has forget quality 1: return the test's p-value, not its statistic"


def _fq_reference(f, ref):
    model = [0.05, 0.1, 0.12, 0.2, 0.25, 0.3, 0.33, 0.4]
    oracle = [0.35, 0.5, 0.6, 0.62, 0.7, 0.8, 0.9, 1.1]
    mine, theirs = _value(f(model, oracle)), _value(ref.forget_quality(model, oracle))
    if not _close(mine, theirs, tol=1e-6):
        return (f"forget quality is the p-value of the two-sample Kolmogorov-Smirnov test between the model's and the "
                f"oracle's truth ratios: expected {theirs:.3g} here, got {mine:.3g}")


EXERCISES: tuple[Exercise, ...] = (
    Exercise("1.1", "A1", "restricted_margin", "The restricted margin", 5,
             (_margin_gold_excluded, _margin_beta, _margin_batch, _margin_gradient),
             ("gold token left among the top-k", "max instead of log-sum-exp", "beta on the gold logit only",
              "margin detached (no gradient)")),
    Exercise("1.2", "A1", "masc_loss", "The buffered hinge", 5, (_hinge_hand, _hinge_empty, _hinge_gradient),
             ("no buffer (relu(m - tau))", "no division by eta", "mask ignored", "mean per sequence, then over sequences",
              "NaN on a batch with no active position")),
    Exercise("2.1", "A2", "violation_rate", "tau from rho and the violation rate", 5,
             (_tau, _rate_strict, _rate_macro, _rate_float),
             ("tau = log(rho)", "m >= tau (not strict)", "one flat mean over tokens", "mask ignored")),
    Exercise("2.2", "A2", "ViolationStop", "The two-stage stopping rule", 5,
             (_stop_schedule, _stop_confirmation, _stop_fires),
             ("stops on the trigger alone", "probes every step", "confirms with trigger_size sequences",
              "strict < tolerance", "no history")),
    Exercise("3.1", "A3", "combine", "One-sided PCGrad per tensor", 5, (_pcgrad_hand, _pcgrad_pure, _pcgrad_random),
             ("one global projection", "two-sided (projects when aligned)", "projects g_r instead of g_f",
              "ignores alpha and gamma", "modifies its inputs")),
    Exercise("3.2", "A3", "combine", "SAGO sign gating", 5, (_sago_hand, _sago_tiny, _sago_random),
             ("zeros counted as conflicts", "adds g_r where aligned (the additive variant)", "product test (underflow)",
              "ignores alpha and gamma")),
    Exercise("4.1", "A4", "truth_ratio", "The truth ratio", 5, (_tr_hand, _tr_collapsed, _tr_zero),
             ("arithmetic mean", "ratio upside down", "no epsilon (division by zero)")),
    Exercise("4.2", "A4", "forget_quality", "Forget quality", 5, (_fq_self, _fq_reference),
             ("returns the KS statistic", "a t-test instead of KS", "a Mann-Whitney test instead of KS")),
)
# exercises whose checks receive the whole submission (several names), not one object
TAKES_MODULE = {"2.1"}
