"""The one unlearning loop: batches, two-pass gradients, synthesis, stopping, records.

Each optimizer step draws one forget and one retain batch (both loaders cycle), computes the
forget objective L_f and the retain objective L_r of the chosen method, and turns them into
one update:

- rule `sum` without geometry logging: one joint backward of gamma*L_f + alpha*L_r (what
  GradDiff and MASC do; fastest);
- any other rule: two backward passes fill a forget and a retain gradient buffer, and
  `synthesis.combine` writes the combined direction into `.grad` (SAGO paper, Algorithm 1).

After the step the stopping rule is asked whether to stop; the MASC violation rule probes
the first sequences of the probe set in eval mode (masc.md section 8).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from unlearning.choices import PROBE_SETS, RULES
from unlearning.data import Encoded, batches, collate, cycle_batches, on_device
from unlearning.failpoints import reached
from unlearning.margin import tau_from_rho, violation_fractions
from unlearning.methods import Context, Method, continuation, masc_token_margins
from unlearning.progress import progress
from unlearning.runtime import own_random_state
from unlearning.stopping import FixedBudget, ViolationStop
from unlearning.synthesis import combine, geometry, update_geometry


@dataclass
class RunResult:
    """What a run did: steps, whether the stop fired, timing and the per-step log."""

    steps: int
    stopped: bool
    stop_step: int | None
    train_seconds: float
    probe_seconds: float
    log: list[dict] = field(default_factory=list)
    probes: list[tuple[int, str, int, float]] = field(default_factory=list)
    diverged: dict | None = None  # {"step", "objective", "value"} of the first non-finite loss or gradient
    probe_passes: int = 0  # forward passes made by the violation probes
    # the weights at the requested steps: {"step", "seconds" (wall time of the run up to that step,
    # probes included, the snapshots themselves left out), "state" (a CPU copy of the state dict)}
    checkpoints: list[dict] = field(default_factory=list)


def _nonfinite_loss(entry: dict, method_name: str) -> dict | None:
    """The first non-finite loss of a step's log entry, named (None when all are finite)."""
    for key, objective in (("forget_loss", "forget objective"), ("retain_loss", "retain objective")):
        value = entry.get(key)
        if value is not None and not math.isfinite(value):
            return {"objective": f"{objective} of {method_name}", "value": str(value)}
    return None


def _nonfinite_gradient(grads: Sequence[torch.Tensor | None], what: str) -> dict | None:
    """A fault record when any gradient holds a NaN or an infinity (None otherwise)."""
    present = [g for g in grads if g is not None]
    if not present:
        return None
    # the largest |g| of every tensor in one multi-tensor op: NaN and infinities propagate, and
    # unlike a sum of squares it cannot overflow on finite values
    largest = torch.stack([n.float() for n in torch._foreach_norm(present, float("inf"))])
    if not bool(torch.isfinite(largest).all()):
        return {"objective": what, "value": "nan or inf"}
    return None


SCHEDULES = ("constant", "linear")
DECAY_GROUPS = ("all", "trainer")


@dataclass(frozen=True)
class OptimConfig:
    """The optimiser of a run, as each paper's trainer sets it (the recipes in `unlearning.recipes`).

    - `optimizer`: AdamW (torch's; the HF `Trainer`'s `paged_adamw_32bit` is the same update with
      32-bit states) or plain SGD, whose update is proportional to the combined gradient (how the
      tests compare update rules: Adam's per-coordinate normalisation turns float noise in
      near-zero gradients into full-size steps).
    - `schedule` and `warmup_steps`: transformers' `get_scheduler` stepped once per optimizer
      step, as the HF `Trainer` steps it: `constant` (with a linear warm-up when `warmup_steps` >
      0) or `linear` (warm-up, then linear decay to 0 at the run's last step). A linear warm-up's
      first step runs at rate 0 (its Adam moments are still updated).
    - `decay_groups`: `all` decays every trainable tensor (torch's AdamW on a parameter list, the
      MASC code); `trainer` builds the HF `Trainer`'s groups with its own function (no decay on
      biases and norm weights: OpenUnlearning and SAGO).
    - `max_grad_norm`: clip the (combined) gradient's global norm before the step (HF's default
      1.0; None: never).
    """

    lr: float = 1e-4
    weight_decay: float = 0.01
    batch_size: int = 2
    max_grad_norm: float | None = None
    optimizer: str = "adamw"
    grad_accum: int = 1
    schedule: str = "constant"
    warmup_steps: int = 0
    decay_groups: str = "all"

    def __post_init__(self) -> None:
        if self.optimizer not in ("adamw", "sgd"):
            raise ValueError(f"optimizer must be one of adamw, sgd; got {self.optimizer!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr!r}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size!r}")
        if self.grad_accum < 1:
            raise ValueError(f"grad_accum must be >= 1, got {self.grad_accum!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}; got {self.schedule!r}")
        if self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0, got {self.warmup_steps!r}")
        if self.decay_groups not in DECAY_GROUPS:
            raise ValueError(f"decay_groups must be one of {', '.join(DECAY_GROUPS)}; got {self.decay_groups!r}")
        if self.weight_decay < 0 or (self.max_grad_norm is not None and not self.max_grad_norm > 0):
            raise ValueError(f"weight_decay must be >= 0 and max_grad_norm > 0 or None; got {self.weight_decay!r}, "
                             f"{self.max_grad_norm!r}")


def steps_for_epochs(n_forget: int, n_retain: int, batch_size: int, epochs: float, anchor: str = "forget") -> int:
    """Optimizer steps of an epoch budget: anchored on the forget set (OpenUnlearning) or on
    the longer loader (`anchor="max"`, the MASC code: 1,800 steps per epoch on TOFU retain90)."""
    if anchor not in ("forget", "max"):
        raise ValueError(f"anchor must be 'forget' or 'max', got {anchor!r}")
    n = n_forget if anchor == "forget" else max(n_forget, n_retain)
    return max(1, round(epochs * -(-n // batch_size)))


@dataclass(frozen=True)
class IndexedEncoded(Encoded):
    """An example that remembers its position in the forget set (for cached NPO references)."""

    index: int = 0


def _with_index(examples: Sequence[Encoded]) -> list[Encoded]:
    return [IndexedEncoded(e.input_ids, e.labels, i) for i, e in enumerate(examples)]


def _indexed_batches(examples: Sequence[IndexedEncoded], batch_size: int, pad_token_id: int, generator):
    """Cycle through shuffled batches that carry each example's index `[B]`."""
    while True:
        order = torch.randperm(len(examples), generator=generator).tolist()
        for start in range(0, len(order), batch_size):
            chunk = [examples[i] for i in order[start:start + batch_size]]
            batch = collate(chunk, pad_token_id)
            batch["index"] = torch.tensor([e.index for e in chunk])
            yield batch


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


def _names_of(model: torch.nn.Module, params: Sequence[torch.nn.Parameter]) -> list[str]:
    """Qualified names of `params`, in order (for per-module geometry)."""
    by_id = {id(p): name for name, p in model.named_parameters()}
    return [by_id.get(id(p), f"param{i}") for i, p in enumerate(params)]


def _grads(params: Sequence[torch.nn.Parameter]) -> list[torch.Tensor]:
    return [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in params]


def _average_over_processes(tensors: list[torch.Tensor], world: int) -> list[torch.Tensor]:
    """Mean of each tensor over the data-parallel processes (all-reduce), in place."""
    if world > 1:
        import torch.distributed as dist

        for tensor in tensors:
            dist.all_reduce(tensor)
            tensor.div_(world)
    return tensors


class AdapterDisabledReference(torch.nn.Module):
    """The frozen reference of a LoRA run: the same network with its adapters switched off,
    so no second copy of the base model sits in memory (issue: single-GPU 7B runs)."""

    def __init__(self, peft_model) -> None:
        super().__init__()
        object.__setattr__(self, "_peft", peft_model)  # not a submodule: no parameters here

    @property
    def config(self):
        return self._peft.config

    @torch.no_grad()
    def forward(self, **inputs):
        with self._peft.disable_adapter():
            return self._peft(**inputs)


def parameter_groups(model: torch.nn.Module, params: Sequence[torch.nn.Parameter], optim: OptimConfig) -> list[dict]:
    """The optimiser's parameter groups: one group decaying every tensor (`decay_groups="all"`),
    or the HF `Trainer`'s two groups (`"trainer"`), from transformers' own
    `Trainer.get_decay_parameter_names` (norm weights and biases get no weight decay)."""
    if optim.decay_groups == "all":
        return [{"params": list(params), "weight_decay": optim.weight_decay}]
    from transformers import Trainer

    decayed = set(Trainer.get_decay_parameter_names(None, model))  # an instance method that reads no state
    names = _names_of(model, params)
    return [{"params": [p for p, n in zip(params, names) if n in decayed], "weight_decay": optim.weight_decay},
            {"params": [p for p, n in zip(params, names) if n not in decayed], "weight_decay": 0.0}]


def make_optimizer(model: torch.nn.Module, params: Sequence[torch.nn.Parameter], optim: OptimConfig) -> torch.optim.Optimizer:
    """SGD, or AdamW with its fused kernel where torch has one for these parameters (CPU and
    CUDA, float32 and bfloat16): the same update in one pass, 7x faster than the default loop on
    SmolLM2-135M's parameters on the CPU (0.05 s against 0.36 s a step, measured on the 2-core machine)."""
    groups = parameter_groups(model, params, optim)
    if optim.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=optim.lr)
    try:
        return torch.optim.AdamW(groups, lr=optim.lr, fused=True)
    except (RuntimeError, ValueError):  # a device or dtype without the fused kernel
        return torch.optim.AdamW(groups, lr=optim.lr)


def make_schedule(optimizer: torch.optim.Optimizer, optim: OptimConfig, total_steps: int):
    """transformers' learning-rate schedule for a run of `total_steps` optimizer steps (stepped
    once after every optimizer step, as the HF `Trainer` does)."""
    from transformers import get_scheduler

    name = "constant_with_warmup" if optim.schedule == "constant" and optim.warmup_steps else optim.schedule
    return get_scheduler(name, optimizer, num_warmup_steps=optim.warmup_steps, num_training_steps=total_steps)


def _micro_batches(iterator, per_step: int, rank: int, accum: int) -> list[dict]:
    """Draw the step's global batch (per_step micro-batches, identical on every process) and
    keep this process's contiguous share of `accum` micro-batches."""
    drawn = [next(iterator) for _ in range(per_step)]
    return drawn[rank * accum:(rank + 1) * accum]


def _to(batch: dict | None, device) -> dict | None:
    return None if batch is None else {k: v.to(device) for k, v in batch.items()}


def unlearn(
    model: torch.nn.Module,
    method: Method,
    hparams: dict,
    forget: Sequence[Encoded],
    retain: Sequence[Encoded],
    *,
    pad_token_id: int,
    rule: str = "sum",
    stop: FixedBudget | ViolationStop | None = None,
    max_steps: int = 100,
    optim: OptimConfig = OptimConfig(),
    probe_examples: Sequence[Encoded] | None = None,
    probe_hparams: dict | None = None,
    record_geometry: bool = False,
    seed: int = 0,
    accelerator=None,
    lora: dict | None = None,
    checkpoint_steps: Sequence[int] = (),
) -> RunResult:
    """Unlearn `forget` from `model` in place; returns the run's log and timing.

    `hparams` come from `method.hparams(...)`: `gamma` weighs the forget objective, `alpha`
    the retain objective. Each optimizer step uses a global batch of `batch_size x grad_accum
    x processes` forget examples (and as many retain examples), split into micro-batches;
    gradients are averaged over micro-batches and processes *before* `synthesis.combine`, so
    the update does not depend on how the global batch is split. `accelerator` (an
    `accelerate.Accelerator`) supplies the device and the process group. `lora` (keyword
    arguments of `models.add_lora`) trains LoRA adapters, uses the adapter-disabled network as
    the reference, and merges the adapters back into `model` at the end.

    `stop` defaults to a fixed budget of `max_steps`; a `ViolationStop` probes
    `probe_examples` (default: the forget set in its given order, the official behaviour) with
    MASC's margin settings (`hparams` for MASC, else MASC's defaults updated by
    `probe_hparams`), so the rule can stop any method. Training never runs past `max_steps`.

    `checkpoint_steps` keeps a CPU copy of the weights after each of those steps (and its time
    into the run), for the time-to-quality curves; the copies are not counted as run time.
    """
    with own_random_state(seed):
        if rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
        if method.retain is None and rule != "sum":
            raise ValueError(f"rule {rule!r} needs a retain objective; {method.name} has none (use rule 'sum')")
        if not forget:
            raise ValueError("the forget set is empty")
        if method.retain is not None and not retain:
            raise ValueError(f"{method.name} needs a retain set, got an empty one")
        if method.check is not None:
            method.check(hparams, lora)
        if checkpoint_steps and lora is not None:
            raise ValueError("checkpoints along a run need full weights; they are not kept for a LoRA run")
        device = accelerator.device if accelerator is not None else next(model.parameters()).device
        world = accelerator.num_processes if accelerator is not None else 1
        rank = accelerator.process_index if accelerator is not None else 0
        model.to(device)
        base_model = model
        if lora is not None:
            from unlearning.models import add_lora

            model = add_lora(model, **lora)  # adapter initialisation draws from the run's seeded state
        params = method.parameters(model, hparams) if lora is None else [p for p in model.parameters() if p.requires_grad]
        param_names = _names_of(model, params) if record_geometry else None
        ctx = Context(hparams=hparams, generator=torch.Generator().manual_seed(seed))
        if method.needs_reference:
            ctx.reference = AdapterDisabledReference(model) if lora is not None else \
                copy.deepcopy(model).eval().requires_grad_(False)
        forget = _with_index(forget)
        if method.prepare is not None:
            method.prepare(model, forget, pad_token_id, ctx)
        probe = None
        if isinstance(stop, ViolationStop):
            probe = ViolationProbe(model, probe_examples or forget, method.probe_settings(hparams, probe_hparams),
                                   pad_token_id, stop.probe_batch_size, stop.probe_reuse, seed=seed,
                                   reference=ctx.reference)
        stop = stop if stop is not None else FixedBudget(max_steps)
        forget_objective, retain_objective = method.forget, method.retain
        alpha, gamma = hparams.get("alpha", 0.0), hparams.get("gamma", 1.0)
        optimizer = make_optimizer(model, params, optim)
        schedule = make_schedule(optimizer, optim, max_steps)
        accum, per_step = optim.grad_accum, optim.grad_accum * world
        forget_iter = _indexed_batches(forget, optim.batch_size, pad_token_id, torch.Generator().manual_seed(seed))
        retain_iter = cycle_batches(retain, optim.batch_size, pad_token_id, torch.Generator().manual_seed(seed + 7)) \
            if retain_objective else None
        use_retain = retain_objective is not None and (alpha > 0 or rule != "sum")
        joint = rule == "sum" and not record_geometry

        def accumulate(objective, micro: list[dict], weight: float) -> float:
            """Backpropagate weight * mean over micro-batches of the objective; returns the mean loss
            over the whole global batch (all processes)."""
            total = 0.0
            for batch in micro:
                loss = objective(model, _to(batch, device), ctx)
                (weight * loss / len(micro)).backward()
                total += loss.item() / len(micro)
            if world == 1:
                return total
            return float(_average_over_processes([torch.tensor([total], dtype=torch.float64, device=device)], world)[0])

        model.train()
        result = RunResult(steps=0, stopped=False, stop_step=None, train_seconds=0.0, probe_seconds=0.0)
        start, paused = time.perf_counter(), 0.0  # paused: time spent copying checkpoints, not run time
        for step in progress(range(1, max_steps + 1), desc=method.name, unit="step"):
            step_start = time.perf_counter()
            reached("engine:step")
            forget_micro = _micro_batches(forget_iter, per_step, rank, accum)
            retain_micro = _micro_batches(retain_iter, per_step, rank, accum) if retain_iter else None
            entry: dict = {"step": step, "lr": optimizer.param_groups[0]["lr"]}  # the rate this step uses
            if joint:
                entry["forget_loss"] = accumulate(forget_objective, forget_micro, gamma)
                if use_retain:
                    entry["retain_loss"] = accumulate(retain_objective, retain_micro, alpha)
                _average_over_processes([p.grad for p in params if p.grad is not None], world)
            else:
                entry["forget_loss"] = accumulate(forget_objective, forget_micro, 1.0)
                g_f = _average_over_processes(_grads(params), world)
                optimizer.zero_grad(set_to_none=True)
                entry["retain_loss"] = accumulate(retain_objective, retain_micro, 1.0)
                g_r = _average_over_processes(_grads(params), world)
                final = combine(g_f, g_r, rule, alpha=alpha, gamma=gamma)
                for p, g in zip(params, final):
                    p.grad = g.to(p.dtype)
                if record_geometry:
                    entry.update(geometry(g_f, g_r, final, param_names, alpha, gamma))
            fault = _nonfinite_loss(entry, method.name) or _nonfinite_gradient(
                [p.grad for p in params], f"gradient of {method.name} (rule {rule})")
            if fault is not None:  # stop before the step: no parameter takes a non-finite value
                result.diverged = {"step": step, **fault}
                result.log.append(entry)
                result.steps = step
                optimizer.zero_grad(set_to_none=True)
                break
            if optim.max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(params, optim.max_grad_norm)
            before = [p.detach().clone() for p in params] if record_geometry and not joint else None
            optimizer.step()
            if before is not None:  # the step the optimiser actually took, against each task's gradient
                entry.update(update_geometry([p.detach() - b for p, b in zip(params, before)], g_f, g_r))
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            entry["seconds"] = time.perf_counter() - step_start
            probe_start = time.perf_counter()
            fired = stop.update(step, probe.at(step) if probe else None)
            probe_time = time.perf_counter() - probe_start if probe else 0.0
            if probe_time:
                entry["probe_seconds"] = probe_time
                entry["violation_rate"] = stop.history[-1][3] if stop.history and stop.history[-1][0] == step else None
            result.probe_seconds += probe_time
            result.log.append(entry)
            result.steps = step
            if step in checkpoint_steps:
                snapshot_start = time.perf_counter()
                state = {k: v.detach().to("cpu", copy=True) for k, v in base_model.state_dict().items()}
                result.checkpoints.append({"step": step, "seconds": snapshot_start - start - paused, "state": state})
                paused += time.perf_counter() - snapshot_start
            if fired:
                result.stopped = isinstance(stop, ViolationStop)
                result.stop_step = step
                break
        if lora is not None:
            model.merge_and_unload()
        base_model.eval()
        total_time = time.perf_counter() - start - paused
        result.train_seconds = total_time - result.probe_seconds
        if isinstance(stop, ViolationStop):
            result.probes = list(stop.history)
            result.probe_passes = probe.forward_passes
        return result
