"""MASC's stopping rule as a `TrainerCallback`: the Trainer stops itself once forgetting is done.

MASC (arXiv 2606.02920), the online stopping rule; `shared/reference/masc.md` section 8. Every
`every` optimizer steps the violation rate V (the macro share of continuation tokens whose margin
exceeds tau = logit(rho)) is measured on the first `trigger_size` probe sequences; if V <= tolerance
it is re-measured on the first `confirm_size`, and training stops iff that also gives V <= tolerance.
The rule and the probe are our engine's (`stopping.ViolationStop`, `stopping.ViolationProbe`), so a
`Trainer` with this callback stops at the step our engine stops at.

`state.global_step` counts optimizer steps, so gradient accumulation changes nothing. Under several
processes the main process alone probes (the weights are the same everywhere) and broadcasts its
decision and rates; every process then stops at the same step.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import TrainerCallback

from unlearning.hf.batches import as_encoded
from unlearning.hf.objective import masc_settings
from unlearning.margin import IGNORE_INDEX
from unlearning.stopping import ViolationProbe, ViolationStop


def _without_continuation(examples) -> list[int]:
    """Indices of probe sequences with no labelled next token (their continuation region is empty)."""
    return [i for i, e in enumerate(examples) if not any(label != IGNORE_INDEX for label in e.labels[1:])]


def _processes() -> int:
    distributed = torch.distributed
    return distributed.get_world_size() if distributed.is_available() and distributed.is_initialized() else 1


class MascStopCallback(TrainerCallback):
    """Stop a `Trainer` by MASC's two-stage violation rule, measured on `probe_examples`.

    Args:
        probe_examples: tokenised sequences (`Encoded`, or mappings with `input_ids` and `labels`);
            the official behaviour probes the first sequences of the forget set in its given order
            (`stopping.split_probe_set(forget, "official", 32)`), a held-out set is the alternative.
        pad_token_id: the tokenizer's padding id.
        tolerance, every, trigger_size, confirm_size: the rule (TOFU recipe: 0.475, 2, 4, 32).
        settings: MASC's margin settings (`masc_settings`' arguments, or a recipe run's `hparams`).
        probe_batch_size, probe_reuse: how the probe computes (the rates do not depend on them).
        seed: the probe's continuation cuts are drawn from `seed + 1`, as in our engine (None: the
            Trainer's `args.seed`).
        reference: the frozen original model, in teacher mode.

    Every probe is appended to the Trainer's `state.log_history` as `{"step", "violation_rate",
    "probe", "probe_size"}`; `stop_step` is the step the rule fired at (None while it has not).
    """

    def __init__(self, probe_examples: Sequence, *, pad_token_id: int, tolerance: float = 0.475, every: int = 2,
                 trigger_size: int = 4, confirm_size: int = 32, settings: dict | None = None,
                 probe_batch_size: int = 32, probe_reuse: bool = True, seed: int | None = None, reference=None) -> None:
        self.examples = [as_encoded(e) for e in probe_examples]
        if not self.examples:
            raise ValueError("MascStopCallback needs at least one probe sequence")
        empty = _without_continuation(self.examples)
        if empty:
            raise ValueError(f"probe sequence {empty[0]} has no labelled next token, so no continuation region to probe "
                             f"({len(empty)} of {len(self.examples)} such)")
        self.settings = masc_settings(settings)
        if self.settings["competitors"] == "teacher" and reference is None:
            raise ValueError("MASC's teacher competitors need the frozen original model: pass reference=...")
        self.rule = ViolationStop(tolerance, every, trigger_size, confirm_size, probe_batch_size, probe_reuse)
        self.pad_token_id, self.seed, self.reference = pad_token_id, seed, reference
        self.probe: ViolationProbe | None = None
        self.stop_step: int | None = None

    @classmethod
    def from_recipe(cls, run, probe_examples: Sequence, *, pad_token_id: int, **kwargs) -> MascStopCallback:
        """The callback of a recipe run (`recipes.load("masc/tofu").run("MASC")`): its stopping rule
        and its margin settings."""
        stop = dict(run.stop)
        if stop.pop("kind", None) != "violation":
            raise ValueError(f"recipe run {run.name!r} stops by {run.stop.get('kind')!r}, not by MASC's violation rule")
        settings = {key: value for key, value in run.hparams.items() if key in masc_settings()}
        return cls(probe_examples, pad_token_id=pad_token_id, settings=settings, **stop, **kwargs)

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        seed = args.seed if self.seed is None else self.seed
        self.rule.history.clear()
        self.stop_step = None
        self.probe = ViolationProbe(model, self.examples, self.settings, self.pad_token_id, self.rule.probe_batch_size,
                                    self.rule.probe_reuse, seed=seed, reference=self.reference)
        return control

    def on_step_end(self, args, state, control, **kwargs):
        step = state.global_step
        if step % self.rule.every != 0:
            return control
        fired, probes = self._decide(step, state.is_world_process_zero)
        state.log_history += [{"step": s, "violation_rate": rate, "probe": stage, "probe_size": n}
                              for s, stage, n, rate in probes]
        if fired:
            self.stop_step = step
            control.should_training_stop = True
        return control

    def _decide(self, step: int, main_process: bool) -> tuple[bool, list]:
        """(whether to stop, this step's probes): measured by the main process, shared with the others."""
        decision = [None]
        if main_process:
            before = len(self.rule.history)
            fired = self.rule.update(step, self.probe.at(step))
            decision = [(fired, self.rule.history[before:])]
        if _processes() > 1:
            torch.distributed.broadcast_object_list(decision, src=0)
            if not main_process:
                self.rule.history += decision[0][1]
        return decision[0]
