"""The Trainer subclasses and data the Hugging Face drop-in tests share (tests/unlearning/test_hf.py and the
two-process worker tests/system/hf_worker.py): an OpenUnlearning-style GradDiff with gradient
synthesis, a MASC trainer, and the engine-ordered datasets (`unlearning.hf.engine_pairs`)."""

__all__ = ["GradDiff", "Masc", "arguments", "collators", "engine_order", "engine_pairs"]

import torch
from transformers import Trainer

from unlearning.hf import (EncodedCollator, ForgetRetainCollator, GradientSynthesisMixin, UnlearningArguments,
                           engine_order, engine_pairs, masc_forget_loss)
from unlearning.losses import ga_loss, nll_loss


def _logits(model, batch):
    return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits


class GradDiff(GradientSynthesisMixin, Trainer):
    """GradDiff as OpenUnlearning writes it, its update combined by the arguments' rule."""

    def forget_loss(self, model, inputs):
        return ga_loss(_logits(model, inputs["forget"]), inputs["forget"]["labels"])

    def retain_loss(self, model, inputs):
        return nll_loss(_logits(model, inputs["retain"]), inputs["retain"]["labels"])


class Masc(Trainer):
    """MASC's hinge (weight `gamma`) as a `compute_loss`; its continuation cuts from a seeded generator."""

    def __init__(self, *args, settings, seed=0, **kwargs):
        super().__init__(*args, **kwargs)
        self.settings, self.cuts = settings, torch.Generator().manual_seed(seed)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        loss = self.settings["gamma"] * masc_forget_loss(outputs, inputs, self.settings, generator=self.cuts)
        return (loss, outputs) if return_outputs else loss


def arguments(out, **overrides) -> UnlearningArguments:
    """The Trainer's arguments the engine's `OptimConfig(decay_groups="trainer")` matches: fused AdamW,
    a constant rate, clipping at 1, sequential batches, no saving or reporting."""
    settings = dict(output_dir=str(out), per_device_train_batch_size=2, learning_rate=1e-3, weight_decay=0.01,
                    lr_scheduler_type="constant", warmup_steps=0, max_grad_norm=1.0, optim="adamw_torch_fused",
                    train_sampling_strategy="sequential", remove_unused_columns=False, report_to=[], save_strategy="no",
                    logging_steps=1, use_cpu=True, seed=0, disable_tqdm=True, dataloader_num_workers=0)
    return UnlearningArguments(**{**settings, **overrides})


def collators(pad_token_id: int):
    return ForgetRetainCollator(pad_token_id), EncodedCollator(pad_token_id)
