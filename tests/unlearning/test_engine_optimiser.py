"""The optimiser as each paper's trainer builds it (issue 36): weight-decay groups, learning-rate
schedules stepped as the HF `Trainer` steps them, clipping; each against transformers' own code or
a value worked out by hand."""

import pytest
import torch

from unlearning.engine import OptimConfig, make_optimizer, make_schedule, parameter_groups, unlearn
from unlearning.methods import get_method


def _llama_shaped():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, attention_bias=True)
    return LlamaForCausalLM(config)


def _groups(optimizer) -> list[tuple[set, float]]:
    return [({id(p) for p in g["params"]}, g["weight_decay"]) for g in optimizer.param_groups if g["params"]]


def test_trainer_groups_are_exactly_the_hf_trainers(tmp_path):
    """The groups of `decay_groups="trainer"` against a real `Trainer`'s `create_optimizer`: the same
    tensors in the same two groups with the same decay (norm weights and biases undecayed)."""
    from transformers import Trainer, TrainingArguments

    model = _llama_shaped()
    trainer = Trainer(model=model, args=TrainingArguments(output_dir=str(tmp_path), weight_decay=0.01, report_to=[],
                                                          use_cpu=True))
    official = _groups(trainer.create_optimizer())
    ours = _groups(make_optimizer(model, list(model.parameters()), OptimConfig(weight_decay=0.01, decay_groups="trainer")))
    assert ours == official
    undecayed = {n for n, p in model.named_parameters() if any(id(p) in ids for ids, decay in ours if decay == 0.0)}
    assert undecayed and all("norm" in n or n.endswith("bias") for n in undecayed)
    assert any(n.endswith("bias") for n in undecayed) and any("norm" in n for n in undecayed)


def test_the_masc_groups_decay_every_trainable_tensor():
    """MASC's code hands torch's AdamW its trainable tensors as one list: everything decays
    (default weight decay 0.01), LoRA adapters included."""
    from unlearning.models import add_lora

    model = add_lora(_llama_shaped(), r=4)
    trainable = [p for p in model.parameters() if p.requires_grad]
    ((ids, decay),) = _groups(make_optimizer(model, trainable, OptimConfig(decay_groups="all")))
    assert ids == {id(p) for p in trainable} and decay == 0.01
    assert parameter_groups(model, trainable, OptimConfig())[0]["params"] == trainable


@pytest.mark.parametrize("schedule, warmup, expected", [
    # HF's linear schedule: step/warmup during the warm-up (step 0 at rate 0), then (T - step) / (T - warmup)
    ("linear", 2, [0.0, 0.5, 1.0, 0.75, 0.5, 0.25]),
    ("linear", 0, [1.0, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6]),
    ("constant", 0, [1.0] * 6),
    ("constant", 3, [0.0, 1 / 3, 2 / 3, 1.0, 1.0, 1.0]),
])
def test_the_rate_of_every_step_is_the_trainers(target, tokenizer, splits, schedule, warmup, expected):
    """Six steps of a run: the rate each step used (record.json's log) against the schedule worked
    out by hand."""
    method = get_method("GradDiff")
    optim = OptimConfig(lr=1e-3, batch_size=2, schedule=schedule, warmup_steps=warmup)
    result = unlearn(target, method, method.hparams(), splits["forget10"], splits["retain90"],
                     pad_token_id=tokenizer.pad_token_id, max_steps=6, optim=optim)
    assert [e["lr"] for e in result.log] == pytest.approx([1e-3 * x for x in expected], abs=1e-15)


def test_a_first_step_at_rate_zero_moves_no_weight_but_the_adam_moments():
    model = torch.nn.Linear(3, 2)
    optim = OptimConfig(lr=1e-2, schedule="linear", warmup_steps=2, weight_decay=0.0)
    optimizer = make_optimizer(model, list(model.parameters()), optim)
    schedule = make_schedule(optimizer, optim, total_steps=4)
    before = [p.detach().clone() for p in model.parameters()]
    model(torch.ones(1, 3)).sum().backward()
    optimizer.step(), schedule.step()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert all(float(optimizer.state[p]["exp_avg"].abs().sum()) > 0 for p in model.parameters())
    assert optimizer.param_groups[0]["lr"] == pytest.approx(5e-3)


def test_bad_optimiser_settings_are_one_line_errors():
    for bad, words in ((dict(schedule="cosine"), "schedule must be one of constant, linear"),
                       (dict(warmup_steps=-1), "warmup_steps must be >= 0"),
                       (dict(decay_groups="norms"), "decay_groups must be one of all, trainer"),
                       (dict(max_grad_norm=0.0), "max_grad_norm > 0")):
        with pytest.raises(ValueError, match=words):
            OptimConfig(**bad)
