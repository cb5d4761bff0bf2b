"""When unlearning stops: a fixed budget, or MASC's two-stage violation-rate rule, and the
probe that measures MASC's violation rate (`ViolationProbe`, `split_probe_set`).

MASC (arXiv 2606.02920), the online stopping rule; `shared/reference/masc.md` section 8.
Every `every` optimizer steps the violation rate V is measured on the first `trigger_size`
probe sequences; only if V <= tolerance is it re-measured on the first `confirm_size`
sequences, and training stops iff that confirmation also gives V <= tolerance (non-strict).
The same tolerance serves trigger and confirmation, as in every released run.

Both rules share `update(step, probe) -> bool`, called after each optimizer step with the
1-based step count; `probe(n)` returns the violation rate on the first n probe sequences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from unlearning.choices import PROBE_SETS
from unlearning.data import Encoded, batches, on_device
from unlearning.margin import continuation, masc_token_margins, tau_from_rho, violation_fractions

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


@dataclass(frozen=True)
class StopConfig:
    """How a run stops, its settings declared once: `fixed` (the budget's steps) or `violation`
    (MASC's two-stage rule below, capped at the budget). `build` makes the running rule.

    How the engine computes a probe, which does not change the rule: `probe_batch_size`
    sequences per forward pass (the official code: 2), and with `probe_reuse` the confirmation
    reuses the trigger's forward passes of the same step (its cuts are still drawn afresh).
    """

    kind: str = "fixed"
    tolerance: float = 0.475
    every: int = 2
    trigger_size: int = 4
    confirm_size: int = 32
    probe_batch_size: int = 32
    probe_reuse: bool = True

    def __post_init__(self) -> None:
        if self.kind not in ("fixed", "violation"):
            raise ValueError(f"stop must be 'fixed' or 'violation'; got {self.kind!r}")
        if not 0.0 <= self.tolerance <= 1.0:
            raise ValueError(f"tolerance must lie in [0, 1], got {self.tolerance!r}")
        for name in ("every", "trigger_size", "confirm_size", "probe_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")

    def build(self, max_steps: int) -> "FixedBudget | ViolationStop":
        return FixedBudget(max_steps) if self.kind == "fixed" else ViolationStop(settings=self)


class ViolationStop:
    """MASC's two-stage rule: trigger on a few probe sequences, confirm on more. Its settings
    are a `StopConfig` of kind `violation` (`ViolationStop(0.475, every=2)` passes them on), read
    as attributes (`rule.tolerance`); `history` records every probe as (step, stage, n, rate),
    stage "trigger" or "confirm"."""

    def __init__(self, *settings, **named) -> None:
        given = named.pop("settings", None)
        self.settings = given if given is not None else StopConfig("violation", *settings, **named)
        self.history: list[tuple[int, str, int, float]] = []

    def __getattr__(self, name: str):
        if name == "settings":  # not set yet (copying): no recursion
            raise AttributeError(name)
        return getattr(self.settings, name)

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


class ViolationProbe:
    """The violation rate V on the first n probe sequences (MASC s. 7-8), in eval mode, with a
    fresh continuation cut at every call, as the official code draws it.

    `at(step)` gives the probe of one step's weights: the forward passes of that step are kept,
    so the confirmation (first 32 sequences) reuses the trigger's (first 4) and computes only the
    rest; the cuts are drawn afresh for all 32, from the same generator stream as sequence by
    sequence (a cut is drawn after the forward pass, so nothing of the rule changes). Sequences
    go `batch_size` at a time through the model (the official code: 2).
    """

    def __init__(self, model, examples: Sequence[Encoded], hparams: dict, pad_token_id: int,
                 batch_size: int = 32, reuse: bool = True, seed: int = 0, reference=None) -> None:
        if batch_size < 1:
            raise ValueError(f"probe batch size must be >= 1, got {batch_size}")
        self.model, self.examples, self.hparams, self.pad = model, list(examples), hparams, pad_token_id
        self.batch_size, self.reuse, self.reference = batch_size, reuse, reference
        self.generator = torch.Generator().manual_seed(seed + 1)
        self.tau = tau_from_rho(hparams["rho"])
        self.forward_passes = 0  # model calls made by all probes (for the speed harness)

    def at(self, step: int):
        """probe(n) for the weights of `step`."""
        rows: list[tuple[torch.Tensor, torch.Tensor]] = []  # per sequence: margins [T_i], labelled mask [T_i]

        def probe(n: int) -> float:
            if not self.reuse:
                rows.clear()
            self._extend(rows, min(n, len(self.examples)))
            margins, mask = _stack(rows[:n])
            fractions = violation_fractions(margins, continuation(mask, self.hparams, self.generator), self.tau)
            return float(fractions.mean())  # macro average over sequences

        return probe

    @torch.no_grad()
    def _extend(self, rows: list, n: int) -> None:
        """Margins of sequences len(rows)..n-1 of the probe set, `batch_size` per forward pass."""
        if len(rows) >= n:
            return
        was_training = self.model.training
        self.model.eval()
        for batch in batches(self.examples[len(rows):n], self.batch_size, self.pad):
            margins, mask = masc_token_margins(self.model, on_device(batch, self.model), self.hparams, self.reference)
            self.forward_passes += 1
            rows += [(margins[i], mask[i]) for i in range(margins.shape[0])]
        self.model.train(was_training)


def _stack(rows: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sequence margins and masks right-padded into `[n, T_max]` (padding is unmasked)."""
    width = max(m.shape[0] for m, _ in rows)
    margins = torch.zeros(len(rows), width, dtype=rows[0][0].dtype, device=rows[0][0].device)
    mask = torch.zeros(len(rows), width, dtype=torch.bool, device=rows[0][1].device)
    for i, (m, k) in enumerate(rows):
        margins[i, :m.shape[0]], mask[i, :k.shape[0]] = m, k
    return margins, mask


def split_probe_set(forget: Sequence[Encoded], probe_set: str, size: int) -> tuple[list[Encoded], list[Encoded]]:
    """(training forget set, probe set) for the violation rule (masc.md s. 8).

    `official`: the released code's behaviour, the first `size` sequences of the unshuffled
    forget set, which are also trained on. `holdout`: the last `size` sequences are carved out
    and never trained on, so the stop sees forgetting generalise rather than be memorised.
    """
    if probe_set not in PROBE_SETS:
        raise ValueError(f"probe_set must be one of {', '.join(PROBE_SETS)}; got {probe_set!r}")
    forget = list(forget)
    if probe_set == "official":
        return forget, forget[:size]
    if size >= len(forget):
        raise ValueError(f"a held-out probe set of {size} leaves no forget example to train on ({len(forget)} in all)")
    return forget[:-size], forget[-size:]
