"""Gradient synthesis inside the Hugging Face `Trainer`: the update never opposes retention.

PCGrad / SAGO (arXiv 2604.14808), Algorithm 1; `shared/reference/sago.md` sections 3-4. A subclass
provides the two task losses; each micro-batch backpropagates them separately into a forget and a
retain gradient buffer, and once the accumulation window closes (the Trainer's `sync_gradients`) the
buffers are averaged over processes and combined by `synthesis.combine` under the arguments' rule,
so the combination sees the whole global batch, as our engine combines. The Trainer then clips the
combined gradient and steps its optimizer as usual.

- Mixed precision: the losses run under the Trainer's autocast and go through
  `accelerator.backward` (an fp16 loss scale multiplies both buffers alike, and every rule is
  positively homogeneous: combine(s g_f, s g_r) = s combine(g_f, g_r), so the scaler's unscaling stays right).
- Several processes: the losses are computed on the unwrapped network, so DDP's reducer stays out of
  the two passes; the buffers are all-reduced once per window (`engine.average_over_processes`).
"""

from __future__ import annotations

import torch

from unlearning.engine import average_over_processes
from unlearning.hf.arguments import UnlearningArguments
from unlearning.synthesis import combine, geometry


class GradientSynthesisMixin:
    """Mix into a `Trainer` subclass *before* `Trainer` (`class M(GradientSynthesisMixin, Trainer)`)
    and define `forget_loss(model, inputs)` and `retain_loss(model, inputs)`, each a scalar to
    minimise (e.g. GradDiff: minus the forget NLL, and the retain NLL). `args` must be
    `UnlearningArguments`. The forget and retain losses of every step, averaged over the logging
    interval, join the Trainer's logs as `forget_loss` and `retain_loss` (and the gradient geometry
    with `log_geometry`)."""

    def __init__(self, *args, **kwargs) -> None:
        missing = [name for name in ("forget_loss", "retain_loss") if getattr(type(self), name) is
                   getattr(GradientSynthesisMixin, name)]
        if missing:
            raise TypeError(f"{type(self).__name__} must define {' and '.join(missing)}(self, model, inputs)")
        super().__init__(*args, **kwargs)
        if not isinstance(self.args, UnlearningArguments):
            raise TypeError(f"{type(self).__name__} needs UnlearningArguments (the update rule), got {type(self.args).__name__}")
        self._buffers: list[list[torch.Tensor]] | None = None  # [forget, retain] gradient sums of the open window
        self._window_losses = [0.0, 0.0]
        self._logged: list[dict] = []  # one entry per optimizer step since the last log

    def forget_loss(self, model, inputs) -> torch.Tensor:
        raise NotImplementedError

    def retain_loss(self, model, inputs) -> torch.Tensor:
        raise NotImplementedError

    def training_step(self, model, inputs, num_items_in_batch=None) -> torch.Tensor:
        """Both losses of one micro-batch into their buffers; the combined direction into `.grad`
        at the window's last micro-batch. Returns the weighted loss (for the Trainer's `loss` log)."""
        model.train()
        inputs = self._prepare_inputs(inputs)
        network = self.accelerator.unwrap_model(model)
        params = [p for p in network.parameters() if p.requires_grad]
        # the window's micro-batches (fewer in an epoch's last window); older transformers: the argument
        share = 1.0 / getattr(self, "current_gradient_accumulation_steps", self.args.gradient_accumulation_steps)
        if self._buffers is None:
            self._buffers = [[torch.zeros_like(p, dtype=torch.float32) for p in params] for _ in range(2)]
        losses = [self._backward_into(network, task, inputs, params, share, buffer)
                  for task, buffer in zip((self.forget_loss, self.retain_loss), self._buffers)]
        self._window_losses = [total + share * loss for total, loss in zip(self._window_losses, losses)]
        if self.accelerator.sync_gradients:
            self._write_combined(network, params)
        return torch.tensor(share * (self.args.forget_weight * losses[0] + self.args.retain_weight * losses[1]),
                            device=self.args.device)

    def _backward_into(self, network, task, inputs, params, share: float, buffer: list[torch.Tensor]) -> float:
        """Backpropagate share * task(network, inputs), add the gradient into `buffer`; returns the loss."""
        with self.compute_loss_context_manager():
            loss = task(network, inputs)
        self.accelerator.backward(loss * share)
        for p, total in zip(params, buffer):
            if p.grad is not None:
                total.add_(p.grad)
                p.grad = None
        return float(loss.detach())

    def _write_combined(self, network, params) -> None:
        """Average the window's buffers and losses over processes, combine, write `.grad`, reset."""
        forget, retain = self._buffers
        world = self.accelerator.num_processes
        totals = torch.tensor(self._window_losses, dtype=torch.float64, device=params[0].device)
        average_over_processes(forget + retain + [totals], world)
        alpha, gamma = self.args.retain_weight, self.args.forget_weight
        final = combine(forget, retain, self.args.update_rule, alpha=alpha, gamma=gamma)
        for p, g in zip(params, final):
            p.grad = g.to(p.dtype)
        entry = {"forget_loss": float(totals[0]), "retain_loss": float(totals[1])}
        if self.args.log_geometry:
            by_id = {id(p): name for name, p in network.named_parameters()}
            entry.update(geometry(forget, retain, final, [by_id[id(p)] for p in params], alpha, gamma))
        self._logged.append(entry)
        self._buffers, self._window_losses = None, [0.0, 0.0]

    def log(self, logs: dict, *args, **kwargs) -> None:
        """The Trainer's log, with the mean forget and retain losses (and geometry) of the steps since the last one."""
        if self._logged and "loss" in logs:
            for key in self._logged[0]:
                logs[key] = sum(entry[key] for entry in self._logged) / len(self._logged)
            self._logged = []
        super().log(logs, *args, **kwargs)
