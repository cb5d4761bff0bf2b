"""When unlearning stops: a fixed budget, or MASC's two-stage violation-rate rule.

MASC (arXiv 2606.02920), the online stopping rule; `shared/reference/masc.md` section 8.
Every `every` optimizer steps the violation rate V is measured on the first `trigger_size`
probe sequences; only if V <= tolerance is it re-measured on the first `confirm_size`
sequences, and training stops iff that confirmation also gives V <= tolerance (non-strict).
The same tolerance serves trigger and confirmation, as in every released run.

Both rules share `update(step, probe) -> bool`, called after each optimizer step with the
1-based step count; `probe(n)` returns the violation rate on the first n probe sequences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Probe = Callable[[int], float]


@dataclass
class FixedBudget:
    """Stop after `max_steps` optimizer steps (the baselines' rule)."""

    max_steps: int

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps!r}")

    def update(self, step: int, probe: Probe | None = None) -> bool:
        return step >= self.max_steps


@dataclass
class ViolationStop:
    """MASC's two-stage rule: trigger on a few probe sequences, confirm on more.

    `history` records every probe as (step, stage, n, rate), stage "trigger" or "confirm".
    How the engine computes a probe, which does not change the rule: `probe_batch_size`
    sequences per forward pass (the official code: 2), and with `probe_reuse` the confirmation
    reuses the trigger's forward passes of the same step (its cuts are still drawn afresh).
    """

    tolerance: float
    every: int = 2
    trigger_size: int = 4
    confirm_size: int = 32
    probe_batch_size: int = 32
    probe_reuse: bool = True
    history: list[tuple[int, str, int, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 0.0 <= self.tolerance <= 1.0:
            raise ValueError(f"tolerance must lie in [0, 1], got {self.tolerance!r}")
        for name in ("every", "trigger_size", "confirm_size", "probe_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")

    def update(self, step: int, probe: Probe) -> bool:
        if step % self.every != 0:
            return False
        rate = probe(self.trigger_size)
        self.history.append((step, "trigger", self.trigger_size, rate))
        if rate > self.tolerance:
            return False
        rate = probe(self.confirm_size)
        self.history.append((step, "confirm", self.confirm_size, rate))
        return rate <= self.tolerance
