"""Multiple-choice scoring by option log-likelihood (benchmarks.md s. 2.4).

WMDP and MMLU are scored zero-shot as lm-evaluation-harness does: the prompt is the question,
each option is a continuation, and the prediction is the option with the largest summed
log-probability (`acc`); `normalize=True` divides by the option's token count instead.
All options of all questions go through the model in shared batches.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from unlearning.data import QA_PROMPT, Encoded, encode_qa, encode_text
from unlearning.metrics.likelihood import answer_nll


def option_logprobs(model, tokenizer, prompt_options: Sequence[tuple[str, Sequence[str]]], normalize: bool = False,
                    batch_size: int = 64, template: str = QA_PROMPT) -> list[torch.Tensor]:
    """Log-likelihood of every option of every (question, options) item: one `[n_options]` per item."""
    examples: list[Encoded] = []
    for question, options in prompt_options:
        examples += [encode_qa(tokenizer, question, option, template=template, eos=False) for option in options]
    nll, length = answer_nll(model, examples, tokenizer.pad_token_id, batch_size)
    scores = -nll / length.clamp(min=1) if normalize else -nll
    out, start = [], 0
    for _, options in prompt_options:
        out.append(scores[start:start + len(options)])
        start += len(options)
    return out


def choice_correct(model, tokenizer, items: Sequence[dict], normalize: bool = False, batch_size: int = 64) -> list[int]:
    """Per {question, choices, answer (index)} item: 1 when the most likely option is the answer."""
    scores = option_logprobs(model, tokenizer, [(it["question"], it["choices"]) for it in items], normalize, batch_size)
    return [int(int(s.argmax()) == it["answer"]) for s, it in zip(scores, items)]


def choice_accuracy(model, tokenizer, items: Sequence[dict], normalize: bool = False, batch_size: int = 64) -> float:
    """Accuracy on {question, choices, answer (index)} items (chance 1 / len(choices))."""
    scores = option_logprobs(model, tokenizer, [(it["question"], it["choices"]) for it in items], normalize, batch_size)
    return sum(int(int(s.argmax()) == it["answer"]) for s, it in zip(scores, items)) / len(items)


def statement_accuracy(model, tokenizer, items: Sequence[dict], batch_size: int = 64) -> list[bool]:
    """Per item: is the true statement the most likely of its `choices`?

    Used on the pretraining surface-form probes {choices, answer}: the statements differ only
    in the value, so the summed log-probability of the whole text (after the document
    separator, as in training) decides.
    """
    examples = [encode_text(tokenizer, choice, eos=False) for it in items for choice in it["choices"]]
    nll, _ = answer_nll(model, examples, tokenizer.pad_token_id, batch_size)
    out, start = [], 0
    for it in items:
        scores = -nll[start:start + len(it["choices"])]
        out.append(int(scores.argmax()) == it["answer"])
        start += len(it["choices"])
    return out


def recovery_percent(utility_after: float, utility_target: float) -> float:
    """Utility kept by unlearning, in percent of the target's (the SAGO paper's WMDP measure:
    MMLU after / MMLU of the target x 100)."""
    if utility_target <= 0:
        raise ValueError(f"the target's utility must be > 0, got {utility_target}")
    return utility_after / utility_target * 100
