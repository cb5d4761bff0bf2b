"""The unlearning loop the way the field's reference toolkit writes it, for the speed harness.

OpenUnlearning (and TOFU's and MUSE's own code before it) subclasses Hugging Face's `Trainer`:
`compute_loss` takes a batch holding a forget and a retain part, runs the forget objective and
the retain objective, and forwards a frozen copy of the original model every step wherever an
objective needs a reference (NPO's log-probabilities on the forget batch, the KL retain term on
the retain batch). SAGO's official code keeps the Trainer and overrides `training_step` to
backpropagate the two objectives separately and combine the gradients.

The objectives here are this project's own functions (`unlearning.losses`, `unlearning.synthesis`),
so the two loops compute the same mathematics on the same batches; only the loop differs. Our
engine caches NPO's reference log-probabilities once (`methods.prepare_npo`) instead of running
the reference on every forget batch.
"""

from __future__ import annotations

import copy
import time

import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

from unlearning import losses
from unlearning.synthesis import combine

# method -> (forget objective, retain objective); weights as in `unlearning.methods`
OBJECTIVES = {"GradDiff": ("ga", "nll"), "NPO": ("npo", None), "NPO+KLR": ("npo", "kl"),
              "SimNPO+GD": ("simnpo", "nll"), "GA": ("ga", None)}


class _Pairs(torch.utils.data.Dataset):
    """Pre-drawn (forget, retain) batches: the Trainer sees exactly the engine's batches."""

    def __init__(self, pairs: list[tuple[dict, dict | None]]) -> None:
        self.pairs = pairs

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, index: int):
        return self.pairs[index]


def _inputs(batch: dict) -> dict:
    return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}


class UnlearningTrainer(Trainer):
    """`compute_loss` = gamma * forget objective + alpha * retain objective, a frozen reference
    forwarded every step where needed; `rule` other than 'sum' overrides `training_step` with
    two backward passes and `synthesis.combine` (how SAGO's official code extends the Trainer)."""

    def __init__(self, *args, method: str, hparams: dict, rule: str = "sum", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.forget_name, self.retain_name = OBJECTIVES[method]
        self.hparams, self.rule = hparams, rule
        needs_reference = self.forget_name == "npo" or self.retain_name == "kl"
        self.reference = copy.deepcopy(self.model).eval().requires_grad_(False) if needs_reference else None

    def _get_train_sampler(self, train_dataset=None):
        """The pairs in their drawn order (the Trainer would shuffle them)."""
        return torch.utils.data.SequentialSampler(train_dataset if train_dataset is not None else self.train_dataset)

    def _forget_loss(self, model, batch: dict) -> torch.Tensor:
        logits = model(**_inputs(batch)).logits
        if self.forget_name == "ga":
            return losses.ga_loss(logits, batch["labels"])
        if self.forget_name == "npo":
            with torch.no_grad():
                reference = losses.sequence_logprob(self.reference(**_inputs(batch)).logits, batch["labels"])
            return losses.npo_loss(logits, batch["labels"], reference, self.hparams["beta"])
        return losses.simnpo_loss(logits, batch["labels"], self.hparams["beta"], self.hparams["simnpo_gamma"])

    def _retain_loss(self, model, batch: dict) -> torch.Tensor:
        logits = model(**_inputs(batch)).logits
        if self.retain_name == "nll":
            return losses.nll_loss(logits, batch["labels"])
        with torch.no_grad():
            reference = self.reference(**_inputs(batch)).logits
        return losses.kl_to_reference(logits, reference, batch["labels"])

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        forget, retain = inputs
        loss = self.hparams.get("gamma", 1.0) * self._forget_loss(model, forget)
        if self.retain_name is not None:
            loss = loss + self.hparams.get("alpha", 1.0) * self._retain_loss(model, retain)
        return (loss, None) if return_outputs else loss

    def training_step(self, model, inputs, num_items_in_batch=None):
        if self.rule == "sum":
            return super().training_step(model, inputs, num_items_in_batch)
        model.train()
        forget, retain = self._prepare_inputs(inputs)
        params = [p for p in model.parameters() if p.requires_grad]
        forget_loss = self._forget_loss(model, forget)
        g_f = torch.autograd.grad(forget_loss, params)
        retain_loss = self._retain_loss(model, retain)
        g_r = torch.autograd.grad(retain_loss, params)
        final = combine(list(g_f), list(g_r), self.rule, alpha=self.hparams.get("alpha", 1.0),
                        gamma=self.hparams.get("gamma", 1.0))
        for p, g in zip(params, final):
            p.grad = g if p.grad is None else p.grad + g
        return (forget_loss + retain_loss).detach()


class _StepClock(TrainerCallback):
    def __init__(self) -> None:
        self.step_ends: list[float] = []

    def on_step_end(self, args, state, control, **kwargs):
        self.step_ends.append(time.perf_counter())


def train_with_trainer(model, pairs: list[tuple[dict, dict | None]], method: str, hparams: dict, *, rule: str = "sum",
                       lr: float = 1e-5, weight_decay: float = 0.01, seed: int = 0, out_dir: str = "/tmp/trainer-loop") -> dict:
    """Run `len(pairs)` optimizer steps of `method` with the Trainer loop; its wall seconds
    (the whole `train()` call, its own setup included) and the time of each step's end."""
    args = TrainingArguments(
        output_dir=out_dir, per_device_train_batch_size=1, max_steps=len(pairs), learning_rate=lr,
        weight_decay=weight_decay, lr_scheduler_type="constant", warmup_steps=0, optim="adamw_torch",
        max_grad_norm=0.0, logging_strategy="no", save_strategy="no", report_to=[], seed=seed,
        dataloader_num_workers=0, remove_unused_columns=False, disable_tqdm=True, use_cpu=True)
    clock = _StepClock()
    trainer = UnlearningTrainer(model=model, args=args, train_dataset=_Pairs(pairs), data_collator=lambda items: items[0],
                                callbacks=[clock], method=method, hparams=hparams, rule=rule)
    start = time.perf_counter()
    trainer.train()
    return {"seconds": time.perf_counter() - start, "step_ends": [t - start for t in clock.step_ends]}
