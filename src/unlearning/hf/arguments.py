"""`UnlearningArguments`: the Hugging Face `TrainingArguments` plus what gradient synthesis reads.

SAGO paper (arXiv 2604.14808), sections 3-4: the update rule that turns the forget gradient g_f and
the retain gradient g_r into one direction, with gamma weighing g_f and alpha weighing g_r inside the
combiner (`unlearning.synthesis.combine`). A wrong value fails here, when the arguments are built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers import TrainingArguments

from unlearning.choices import RULES


@dataclass
class UnlearningArguments(TrainingArguments):
    """`TrainingArguments` with the update rule of `GradientSynthesisMixin` (TRL's convention:
    a method's settings extend the Trainer's)."""

    update_rule: str = field(default="sago", metadata={"help": f"how g_f and g_r combine: one of {', '.join(RULES)}"})
    forget_weight: float = field(default=1.0, metadata={"help": "gamma, the forget gradient's weight in the combiner"})
    retain_weight: float = field(default=1.0, metadata={"help": "alpha, the retain gradient's weight in the combiner"})
    log_geometry: bool = field(default=False, metadata={
        "help": "log the gradient geometry of every step (cosines, conflicting coordinates: synthesis.geometry)"})

    def __post_init__(self) -> None:
        if self.update_rule not in RULES:
            raise ValueError(f"update_rule must be one of {', '.join(RULES)}; got {self.update_rule!r}")
        for name in ("forget_weight", "retain_weight"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and value >= 0):
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        super().__post_init__()
