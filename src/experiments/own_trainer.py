"""What the chapter "Use it in your own trainer" (notebooks/17-trainer.py) computes around the code it
shows: the models and data it starts from, our engine's run beside the Trainer's, and the answer
probabilities before and after MASC (issue 47). The drop-ins themselves are `unlearning.hf`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from unlearning.benchmarks import get_benchmark
from unlearning.benchmarks.tofu import retain_split
from unlearning.engine import OptimConfig, unlearn
from unlearning.methods import get_method
from unlearning.metrics.likelihood import answer_probability
from unlearning.models import load_model
from experiments.lab import Lab


@dataclass
class Start:
    """A TOFU target (laboratory or real), its forget and retain sets encoded with its tokenizer, its pad id."""

    model_dir: Path
    forget: list
    retain: list
    pad: int

    def model(self):
        return load_model(self.model_dir)


def start(lab: Lab, benchmark: str, size: str, forget_split: str) -> Start:
    """The target of `benchmark` ("tofu" or "tofu-real") at `size`, with its forget split and the matching retain split."""
    model_dir = lab.model(get_benchmark(benchmark).target(size))
    tokenizer_of = model_dir if benchmark == "tofu-real" else None
    forget, pad = lab.examples(benchmark, forget_split, tokenizer_of)
    retain, _ = lab.examples(benchmark, retain_split(forget_split), tokenizer_of)
    return Start(model_dir, forget, retain, pad)


def engine_beside(trainer, begin: Start, *, rule: str, steps: int, lr: float) -> tuple[pd.DataFrame, float, float]:
    """Our engine's GradDiff run with the Trainer's settings (fused AdamW in the Trainer's decay groups,
    a constant rate, clipping at 1, batches of 2 in the engine's order): a table of both runs' losses
    per step, the largest weight difference between the two trained models, and the largest weight move."""
    engine_model = begin.model()
    spec = get_method("GradDiff")
    result = unlearn(engine_model, spec, spec.hparams(), begin.forget, begin.retain, pad_token_id=begin.pad, rule=rule,
                     max_steps=steps, optim=OptimConfig(lr=lr, batch_size=2, decay_groups="trainer", weight_decay=0.01,
                                                        max_grad_norm=1.0))
    logged = [h for h in trainer.state.log_history if "forget_loss" in h]
    table = pd.DataFrame({"step": [h["step"] for h in logged],
                          "Trainer forget loss": [h["forget_loss"] for h in logged],
                          "engine forget loss": [e["forget_loss"] for e in result.log],
                          "Trainer retain loss": [h["retain_loss"] for h in logged],
                          "engine retain loss": [e["retain_loss"] for e in result.log]})
    trained = trainer.model.state_dict()
    largest = max(float((trained[k] - v).abs().max()) for k, v in engine_model.state_dict().items())
    moved = max(float((trained[k] - v).abs().max()) for k, v in begin.model().state_dict().items())
    return table, largest, moved


def answer_probabilities(model, begin: Start) -> list[float]:
    """Mean answer probability exp(-NLL/|y|) of `model` on the forget and on the retain set."""
    return [float(answer_probability(model, part, begin.pad).mean()) for part in (begin.forget, begin.retain)]


def probes_of(history: list[dict]) -> list[tuple[int, str, int, float]]:
    """The violation probes a `MascStopCallback` wrote into a Trainer's log history, as `(step, stage, n, rate)`."""
    return [(h["step"], h["probe"], h["probe_size"], h["violation_rate"]) for h in history if "violation_rate" in h]
