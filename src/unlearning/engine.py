"""The one unlearning loop: batches, two-pass gradients, synthesis, stopping, records.

Each optimizer step draws one forget and one retain batch (both loaders cycle), computes the
forget objective L_f and the retain objective L_r of the chosen method, and turns them into
one update:

- rule `sum` without geometry logging: gamma*grad L_f + alpha*grad L_r accumulated straight into
  `.grad` by the two objectives' backward passes, with no gradient buffers (what GradDiff and MASC
  do; fastest);
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
import torch.distributed as dist
from transformers import get_scheduler

from unlearning.choices import RULES
from unlearning.data import Encoded, collate, cycle_batches
from unlearning.failpoints import reached
from unlearning.methods import Context, Method
from unlearning.models import add_lora
from unlearning.progress import progress
from unlearning.runtime import own_random_state
from unlearning.stopping import FixedBudget, ViolationProbe, ViolationStop
from unlearning.synthesis import combine, geometry, update_geometry

# Imports inside functions: transformers' Trainer (about 80 MB and 0.4 s in every process that imports
# the engine) only where a run asks for the Trainer's decay groups.


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


def _names_of(model: torch.nn.Module, params: Sequence[torch.nn.Parameter]) -> list[str]:
    """Qualified names of `params`, in order (for per-module geometry)."""
    by_id = {id(p): name for name, p in model.named_parameters()}
    return [by_id.get(id(p), f"param{i}") for i, p in enumerate(params)]


def _grads(params: Sequence[torch.nn.Parameter]) -> list[torch.Tensor]:
    return [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in params]


def average_over_processes(tensors: list[torch.Tensor], world: int) -> list[torch.Tensor]:
    """Mean of each tensor over the data-parallel processes (all-reduce), in place (the engine's
    and the Hugging Face drop-in's `unlearning.hf.GradientSynthesisMixin`)."""
    if world > 1:
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

    The loop reads as the method does: prepare (`_prepare`), then per step the update direction
    (`_update_direction`), the optimiser's step (`_take_step`), the stopping rule (`_ask_stop`)
    and the kept weights (`_keep_weights`).
    """
    with own_random_state(seed):
        _check_run(method, hparams, rule, forget, retain, lora, checkpoint_steps)
        loop = _prepare(model, method, hparams, forget, retain, pad_token_id=pad_token_id, rule=rule, stop=stop,
                        max_steps=max_steps, optim=optim, probe_examples=probe_examples, probe_hparams=probe_hparams,
                        record_geometry=record_geometry, seed=seed, accelerator=accelerator, lora=lora)
        result = RunResult(steps=0, stopped=False, stop_step=None, train_seconds=0.0, probe_seconds=0.0)
        start, paused = time.perf_counter(), 0.0  # paused: time spent copying checkpoints, not run time
        for step in progress(range(1, max_steps + 1), desc=method.name, unit="step"):
            step_start = time.perf_counter()
            reached("engine:step")
            entry: dict = {"step": step, "lr": loop.optimizer.param_groups[0]["lr"]}  # the rate this step uses
            gradients = _update_direction(loop, entry)
            fault = _nonfinite_loss(entry, method.name) or _nonfinite_gradient(
                [p.grad for p in loop.params], f"gradient of {method.name} (rule {rule})")
            if fault is not None:  # stop before the step: no parameter takes a non-finite value
                result.diverged = {"step": step, **fault}
                result.log.append(entry)
                result.steps = step
                loop.optimizer.zero_grad(set_to_none=True)
                break
            _take_step(loop, entry, gradients)
            entry["seconds"] = time.perf_counter() - step_start
            fired = _ask_stop(loop, step, entry, result)
            result.log.append(entry)
            result.steps = step
            if step in checkpoint_steps:
                paused += _keep_weights(loop, step, result, time.perf_counter() - start - paused)
            if fired:
                result.stopped = isinstance(loop.stop, ViolationStop)
                result.stop_step = step
                break
        if lora is not None:
            loop.model.merge_and_unload()
        loop.base_model.eval()
        total_time = time.perf_counter() - start - paused
        result.train_seconds = total_time - result.probe_seconds
        if isinstance(loop.stop, ViolationStop):
            result.probes = list(loop.stop.history)
            result.probe_passes = loop.probe.forward_passes
        return result


def _check_run(method: Method, hparams: dict, rule: str, forget, retain, lora: dict | None, checkpoint_steps) -> None:
    """A clear error for a run that cannot be made, before any work."""
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


@dataclass
class _Loop:
    """What every step of one run shares (built once by `_prepare`)."""

    model: torch.nn.Module        # the network trained (the LoRA wrapper in a LoRA run)
    base_model: torch.nn.Module   # the caller's network (a LoRA run merges into it at the end)
    method: Method
    params: list
    param_names: list[str] | None
    ctx: Context
    optimizer: torch.optim.Optimizer
    schedule: object
    forget_batches: object
    retain_batches: object | None
    probe: ViolationProbe | None
    stop: FixedBudget | ViolationStop
    rule: str
    alpha: float
    gamma: float
    use_retain: bool
    joint: bool
    record_geometry: bool
    max_grad_norm: float | None
    device: torch.device
    world: int
    rank: int
    accum: int
    per_step: int


def _prepare(model, method: Method, hparams: dict, forget, retain, *, pad_token_id: int, rule: str, stop, max_steps: int,
             optim: OptimConfig, probe_examples, probe_hparams, record_geometry: bool, seed: int, accelerator,
             lora: dict | None) -> _Loop:
    """Device and processes, LoRA adapters, the trained parameters, the reference model, the
    method's own preparation (NPO's cached reference), the probe, the optimiser and its schedule,
    and the two batch streams (each with its own seeded generator)."""
    device = accelerator.device if accelerator is not None else next(model.parameters()).device
    world = accelerator.num_processes if accelerator is not None else 1
    rank = accelerator.process_index if accelerator is not None else 0
    model.to(device)
    base_model = model
    if lora is not None:
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
                               pad_token_id, stop.probe_batch_size, stop.probe_reuse, seed=seed, reference=ctx.reference)
    stop = stop if stop is not None else FixedBudget(max_steps)
    alpha, gamma = hparams.get("alpha", 0.0), hparams.get("gamma", 1.0)
    optimizer = make_optimizer(model, params, optim)
    schedule = make_schedule(optimizer, optim, max_steps)
    forget_batches = _indexed_batches(forget, optim.batch_size, pad_token_id, torch.Generator().manual_seed(seed))
    retain_batches = cycle_batches(retain, optim.batch_size, pad_token_id, torch.Generator().manual_seed(seed + 7)) \
        if method.retain else None
    return _Loop(model=model, base_model=base_model, method=method, params=params, param_names=param_names, ctx=ctx,
                 optimizer=optimizer, schedule=schedule, forget_batches=forget_batches, retain_batches=retain_batches,
                 probe=probe, stop=stop, rule=rule, alpha=alpha, gamma=gamma,
                 use_retain=method.retain is not None and (alpha > 0 or rule != "sum"),
                 joint=rule == "sum" and not record_geometry, record_geometry=record_geometry,
                 max_grad_norm=optim.max_grad_norm, device=device, world=world, rank=rank, accum=optim.grad_accum,
                 per_step=optim.grad_accum * world)


def _accumulate(loop: _Loop, objective, micro: list[dict], weight: float) -> float:
    """Backpropagate weight * mean over micro-batches of the objective; returns the mean loss
    over the whole global batch (all processes)."""
    total = 0.0
    for batch in micro:
        loss = objective(loop.model, _to(batch, loop.device), loop.ctx)
        (weight * loss / len(micro)).backward()
        total += loss.item() / len(micro)
    if loop.world == 1:
        return total
    return float(average_over_processes([torch.tensor([total], dtype=torch.float64, device=loop.device)], loop.world)[0])


def _update_direction(loop: _Loop, entry: dict) -> tuple | None:
    """The step's update direction, written into every parameter's `.grad`:

        rule `sum`:   gamma * grad L_f + alpha * grad L_r   (one joint backward, GradDiff and MASC)
        other rules:  synthesis.combine(g_f, g_r, rule, alpha, gamma)   (two backward passes)

    The losses go into `entry`, with the gradient geometry when it is recorded. Returns (g_f, g_r)
    from the two-pass path (None from the joint one)."""
    forget_micro = _micro_batches(loop.forget_batches, loop.per_step, loop.rank, loop.accum)
    retain_micro = _micro_batches(loop.retain_batches, loop.per_step, loop.rank, loop.accum) if loop.retain_batches else None
    forget_objective, retain_objective = loop.method.forget, loop.method.retain
    if loop.joint:
        entry["forget_loss"] = _accumulate(loop, forget_objective, forget_micro, loop.gamma)
        if loop.use_retain:
            entry["retain_loss"] = _accumulate(loop, retain_objective, retain_micro, loop.alpha)
        average_over_processes([p.grad for p in loop.params if p.grad is not None], loop.world)
        return None
    entry["forget_loss"] = _accumulate(loop, forget_objective, forget_micro, 1.0)
    g_f = average_over_processes(_grads(loop.params), loop.world)
    loop.optimizer.zero_grad(set_to_none=True)
    entry["retain_loss"] = _accumulate(loop, retain_objective, retain_micro, 1.0)
    g_r = average_over_processes(_grads(loop.params), loop.world)
    final = combine(g_f, g_r, loop.rule, alpha=loop.alpha, gamma=loop.gamma)
    for p, g in zip(loop.params, final):
        p.grad = g.to(p.dtype)
    if loop.record_geometry:
        entry.update(geometry(g_f, g_r, final, loop.param_names, loop.alpha, loop.gamma))
    return g_f, g_r


def _take_step(loop: _Loop, entry: dict, gradients: tuple | None) -> None:
    """Clip, step the optimiser and its schedule; with geometry recorded, log how the step the
    optimiser actually took sits against each task's gradient (`synthesis.update_geometry`)."""
    if loop.max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(loop.params, loop.max_grad_norm)
    before = [p.detach().clone() for p in loop.params] if loop.record_geometry and gradients is not None else None
    loop.optimizer.step()
    if before is not None:
        entry.update(update_geometry([p.detach() - b for p, b in zip(loop.params, before)], *gradients))
    loop.schedule.step()
    loop.optimizer.zero_grad(set_to_none=True)


def _ask_stop(loop: _Loop, step: int, entry: dict, result: RunResult) -> bool:
    """Whether the stopping rule fires after `step`; MASC's probe time and violation rate go into
    `entry` and the run's probe seconds."""
    probe_start = time.perf_counter()
    fired = loop.stop.update(step, loop.probe.at(step) if loop.probe else None)
    probe_time = time.perf_counter() - probe_start if loop.probe else 0.0
    if probe_time:
        entry["probe_seconds"] = probe_time
        history = loop.stop.history
        entry["violation_rate"] = history[-1][3] if history and history[-1][0] == step else None
    result.probe_seconds += probe_time
    return fired


def _keep_weights(loop: _Loop, step: int, result: RunResult, seconds: float) -> float:
    """A CPU copy of the weights after `step` (`seconds` into the run) in `result.checkpoints`;
    returns the time the copy took (left out of the run's time)."""
    snapshot_start = time.perf_counter()
    state = {k: v.detach().to("cpu", copy=True) for k, v in loop.base_model.state_dict().items()}
    result.checkpoints.append({"step": step, "seconds": seconds, "state": state})
    return time.perf_counter() - snapshot_start
