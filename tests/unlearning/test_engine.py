"""The unlearning loop: update-rule equivalences, the cached NPO reference, stopping."""

import copy

import pytest
import torch

from unlearning.data import collate
from unlearning.engine import OptimConfig, steps_for_epochs, unlearn
from unlearning.methods import reference_logprobs
from unlearning.losses import npo_loss, sequence_logprob
from unlearning.methods import METHODS, get_method
from unlearning.stopping import ViolationStop
from unlearning.synthesis import RULES


def run(model, tokenizer, splits, name, steps=3, optimizer="adamw", **kwargs):
    method = get_method(name)
    optim = OptimConfig(lr=1e-3, batch_size=2, optimizer=optimizer)
    return unlearn(model, method, method.hparams(**kwargs.pop("hparams", {})), splits["forget10"], splits["retain90"],
                   pad_token_id=tokenizer.pad_token_id, max_steps=steps, optim=optim, **kwargs)


def max_diff(a, b):
    return max(float((p - q).detach().abs().max()) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("name", ["GradDiff", "NPO+GD", "MASC"])
def test_two_pass_sum_equals_joint_backward(target, tokenizer, splits, name):
    joint, two_pass, before = target, copy.deepcopy(target), copy.deepcopy(target)
    run(joint, tokenizer, splits, name, steps=3, rule="sum", optimizer="sgd")
    result = run(two_pass, tokenizer, splits, name, steps=3, rule="sum", record_geometry=True, optimizer="sgd")
    assert max_diff(joint, two_pass) < 1e-6 < 1e-4 < max_diff(before, joint)
    assert "cos_final_retain" in result.log[0]


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_changes_the_model_and_logs_losses(target, tokenizer, splits, rule):
    before = copy.deepcopy(target)
    result = run(target, tokenizer, splits, "GradDiff", steps=2, rule=rule)
    assert result.steps == 2 and max_diff(before, target) > 0
    assert all("forget_loss" in e and "retain_loss" in e for e in result.log)


def test_sago_update_never_opposes_retain_gradient(target, tokenizer, splits):
    result = run(target, tokenizer, splits, "GradDiff", steps=2, rule="sago", record_geometry=True)
    assert all(e["cos_final_retain"] >= 0 for e in result.log)


def test_same_seed_same_weights(target, tokenizer, splits):
    a, b = target, copy.deepcopy(target)
    run(a, tokenizer, splits, "SimNPO+GD", steps=3, seed=7)
    run(b, tokenizer, splits, "SimNPO+GD", steps=3, seed=7)
    assert max_diff(a, b) == 0.0


def test_cached_npo_reference_equals_live_reference(target, tokenizer, splits):
    reference = copy.deepcopy(target)
    examples = splits["forget10"][:4]
    cached = reference_logprobs(reference, examples, tokenizer.pad_token_id, batch_size=3)
    batch = collate(examples, tokenizer.pad_token_id)
    with torch.no_grad():
        logits_ref = reference(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        live = sequence_logprob(logits_ref, batch["labels"])
    assert torch.allclose(cached, live, atol=1e-5)
    logits = target(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.detach()
    expected = float(npo_loss(logits, batch["labels"], live))
    assert float(npo_loss(logits, batch["labels"], cached)) == pytest.approx(expected, abs=1e-5)


def test_masc_stops_by_itself_on_the_forget_set(target, tokenizer, splits):
    result = run(target, tokenizer, splits, "MASC", steps=300, stop=ViolationStop(0.475, confirm_size=8))
    assert result.stopped and result.stop_step < 300
    stage, rate = result.probes[-1][1], result.probes[-1][3]
    assert stage == "confirm" and rate <= 0.475


def test_violation_rule_can_stop_other_methods(target, tokenizer, splits):
    result = run(target, tokenizer, splits, "NPO", steps=4, stop=ViolationStop(1.0, every=2, confirm_size=4))
    assert result.stopped and result.stop_step == 2


def test_bad_arguments_raise_one_clear_error(target, tokenizer, splits):
    with pytest.raises(ValueError, match="rule must be one of"):
        run(target, tokenizer, splits, "GradDiff", rule="fancy")
    with pytest.raises(ValueError, match="needs a retain objective"):
        run(target, tokenizer, splits, "GA", rule="sago")
    with pytest.raises(ValueError, match="method must be one of"):
        get_method("Unlearn")
    with pytest.raises(ValueError, match="rho"):
        get_method("MASC").hparams(rho=1.2)
    with pytest.raises(ValueError, match="no hyper-parameter 'lr'"):
        get_method("NPO").hparams(lr=1e-5)
    with pytest.raises(ValueError, match="lr"):
        OptimConfig(lr=-1.0)


def test_registry_names_and_epoch_budgets():
    assert {"GA", "GradDiff", "GA+KLR", "NPO", "NPO+GD", "NPO+KLR", "SimNPO", "SimNPO+GD", "MASC"} <= set(METHODS)
    assert steps_for_epochs(400, 3600, 2, 1, anchor="max") == 1800
    assert steps_for_epochs(400, 3600, 32, 10) == 130


def _rates_one_sequence_at_a_time(model, examples, hp, pad, calls, seed=0):
    """The violation rate of each call n, the obvious way: every call draws a fresh cut for each of
    the first n sequences in order, one forward pass per sequence, macro mean of their fractions."""
    from unlearning.margin import continuation, masc_token_margins, tau_from_rho, violation_fractions

    def masc_margins(model, batch, hp, reference, generator):
        margins, mask = masc_token_margins(model, batch, hp, reference)
        return margins, continuation(mask, hp, generator)

    generator = torch.Generator().manual_seed(seed + 1)
    rates = []
    with torch.no_grad():
        for n in calls:
            fractions = [violation_fractions(*masc_margins(model, collate([e], pad), hp, None, generator),
                                             tau_from_rho(hp["rho"])) for e in examples[:n]]
            rates.append(float(torch.cat(fractions).mean()))
    return rates


def test_the_batched_probe_that_reuses_the_trigger_gives_the_official_rates(target, tokenizer, splits):
    """Trigger on 4, confirm on 12, at two steps: batches of 32 with the trigger's passes reused,
    batches of 2 without (the official code) and one sequence at a time give the same rates; the
    cut is short enough (prefix and suffix 2) that the continuation draw matters."""
    from unlearning.stopping import ViolationProbe

    hp = get_method("MASC").hparams(min_prefix=2, min_suffix=2)
    examples, pad, calls = splits["forget10"][:12], tokenizer.pad_token_id, (4, 12, 4, 12)
    fast = ViolationProbe(target, examples, hp, pad, batch_size=32, reuse=True)
    official = ViolationProbe(target, examples, hp, pad, batch_size=2, reuse=False)
    rates = {name: [probe.at(1 + i // 2)(n) for i, n in enumerate(calls)] for name, probe in
             (("fast", fast), ("official", official))}
    expected = _rates_one_sequence_at_a_time(target, examples, hp, pad, calls)
    assert rates["fast"] == pytest.approx(expected, abs=1e-6) and rates["official"] == pytest.approx(expected, abs=1e-6)
    assert len(set(expected)) > 1  # the draws differ between calls: the cut is really re-drawn
    assert (fast.forward_passes, official.forward_passes) == (2 * 2, 2 * (2 + 6))


def test_the_logged_update_cosines_are_the_step_the_optimiser_took(target, tokenizer, splits):
    """Under plain SGD (no decay, no clipping) the step is -lr * g_final, so cos(update, -g_r) is
    cos(g_final, g_r) and SAGO's step never opposes retention; under AdamW the step is what the
    optimiser made of g_final, and the logged cosine says how it sits against each task."""
    method = get_method("GradDiff")
    sgd = OptimConfig(lr=1e-3, batch_size=2, optimizer="sgd", weight_decay=0.0, max_grad_norm=None)
    result = unlearn(copy.deepcopy(target), method, method.hparams(), splits["forget10"], splits["retain90"],
                     pad_token_id=tokenizer.pad_token_id, max_steps=3, optim=sgd, rule="sago", record_geometry=True)
    for entry in result.log:
        assert entry["cos_update_retain"] == pytest.approx(entry["cos_final_retain"], abs=1e-4)
        assert entry["cos_update_forget"] == pytest.approx(entry["cos_final_forget"], abs=1e-4)
        assert entry["cos_update_retain"] >= 0
    adamw = run(copy.deepcopy(target), tokenizer, splits, "GradDiff", steps=3, rule="sago", record_geometry=True)
    assert all(-1 <= e["cos_update_retain"] <= 1 for e in adamw.log)
    assert any(abs(e["cos_update_retain"] - e["cos_final_retain"]) > 1e-3 for e in adamw.log)  # AdamW reshapes the step
    joint = run(copy.deepcopy(target), tokenizer, splits, "GradDiff", steps=1, rule="sum")
    assert "cos_update_retain" not in joint.log[0]  # nothing recorded (nor copied) without geometry
