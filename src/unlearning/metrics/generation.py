"""Batched greedy decoding with the KV cache and left padding (benchmarks.md s. 2.1).

Every ROUGE-based metric (TOFU, MUSE VerbMem/KnowMem, RWKU) scores greedy continuations:
no sampling, output cut at EOS and at the benchmark's stop strings. Prompts are sorted by
length so each batch pads little, and the outputs are returned in the input order.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from unlearning.data import QA_PROMPT

# where a QA answer ends (MUSE's KnowMem stop strings; they also cut our models' run-on answers)
QA_STOPS = ("\n\n", "\nQuestion", "Question:")


def knowmem_prompt(examples: Sequence[dict], question: str) -> str:
    """MUSE's KnowMem prompt: in-context 'Question: ...\nAnswer: ...' pairs, then the question."""
    context = "".join(f"Question: {e['question']}\nAnswer: {e['answer']}\n\n" for e in examples)
    return context + QA_PROMPT.format(question=question)


def cut_at_stops(text: str, stop_strings: Sequence[str]) -> str:
    """`text` up to the first occurrence of any stop string."""
    cut = len(text)
    for stop in stop_strings:
        index = text.find(stop)
        if index != -1:
            cut = min(cut, index)
    return text[:cut]


@torch.no_grad()
def greedy_generate(model, tokenizer, prompts: Sequence[str], max_new_tokens: int = 32, batch_size: int = 32,
                    stop_strings: Sequence[str] = ()) -> list[str]:
    """Greedy continuation of every prompt (without the prompt), stripped and cut at stops."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    was_training, side = model.training, tokenizer.padding_side
    model.eval()
    tokenizer.padding_side = "left"
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    outputs: list[str] = [""] * len(prompts)
    try:
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            batch = tokenizer([prompts[i] for i in chunk], return_tensors="pt", padding=True, add_special_tokens=False)
            batch = batch.to(next(model.parameters()).device)
            generated = model.generate(
                **batch, max_new_tokens=max_new_tokens, do_sample=False, num_beams=1,
                pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
            )
            new_tokens = generated[:, batch["input_ids"].shape[1]:]
            for i, ids in zip(chunk, new_tokens):
                text = tokenizer.decode(ids, skip_special_tokens=True)
                outputs[i] = cut_at_stops(text, stop_strings).strip()
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return outputs
