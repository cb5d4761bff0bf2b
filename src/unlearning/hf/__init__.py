"""MASC's stop and loss, and PCGrad/SAGO's gradient synthesis, as drop-ins for the Hugging Face `Trainer`.

For engineers who already train with `transformers.Trainer` (or OpenUnlearning, whose methods are
`Trainer` subclasses reading `inputs["forget"]` and `inputs["retain"]`). The conventions are TRL's:
settings in a `TrainingArguments` subclass, behaviour in a mixin and a callback, nothing that changes
how the model, tokenizer or datasets are built. Each piece calls the same function as our engine, and
`tests/unlearning/test_hf.py` runs the real `Trainer` beside `engine.unlearn` and compares them step by step.

    from unlearning.hf import GradientSynthesisMixin, MascStopCallback, UnlearningArguments, masc_forget_loss

- `UnlearningArguments`: `TrainingArguments` plus the update rule and the two task weights;
- `GradientSynthesisMixin`: a `training_step` that backpropagates the subclass's `forget_loss` and
  `retain_loss` separately, accumulates each, and hands the optimizer `synthesis.combine` of the two
  (SAGO paper, Algorithm 1);
- `MascStopCallback`: MASC's two-stage violation-rate stop (masc.md section 8);
- `masc_forget_loss` / `masc_settings`: MASC's restricted-margin hinge for any `compute_loss`;
- `ForgetRetainCollator`, `forget_retain_pairs`, `EncodedCollator`: the batches the examples use;
  `engine_order`, `engine_pairs`: items in our engine's batch order (to compare a Trainer with it).
"""

from unlearning.hf.arguments import UnlearningArguments
from unlearning.hf.batches import (EncodedCollator, ForgetRetainCollator, as_encoded, engine_order, engine_pairs,
                                   forget_retain_pairs)
from unlearning.hf.callback import MascStopCallback
from unlearning.hf.mixin import GradientSynthesisMixin
from unlearning.hf.objective import masc_forget_loss, masc_settings

__all__ = ["UnlearningArguments", "GradientSynthesisMixin", "MascStopCallback", "masc_forget_loss", "masc_settings",
           "ForgetRetainCollator", "EncodedCollator", "forget_retain_pairs", "as_encoded", "engine_order", "engine_pairs"]
