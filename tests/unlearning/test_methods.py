"""Every method under every rule, on TOFU-mini (QA) and WMDP-mini (corpora); RMU, IdkNLL,
LoRA, gradient accumulation and the probe-set options."""

import copy

import pytest
import torch

from unlearning.data import IDK_ANSWERS, encode_qa_split, encode_text, idk_records, load_split
from unlearning.engine import AdapterDisabledReference, OptimConfig, unlearn
from unlearning.stopping import split_probe_set
from unlearning.methods import METHODS, get_method, method_name, rmu_layer
from unlearning.synthesis import RULES


def _changed(before, after):
    return {n for (n, p), q in zip(after.named_parameters(), before.parameters()) if not torch.equal(p, q)}


def _combos():
    for name, method in METHODS.items():
        for rule in (RULES if method.retain else ("sum",)):
            yield name, rule


@pytest.fixture(scope="module")
def wmdp_sets(world, tokenizer):
    forget = [encode_text(tokenizer, r["text"]) for r in load_split(world / "wmdp", "bio-forget-corpus")]
    retain = [encode_text(tokenizer, r["text"]) for r in load_split(world / "wmdp", "bio-retain-corpus")]
    return forget, retain


@pytest.mark.parametrize(("name", "rule"), list(_combos()))
def test_every_method_and_rule_runs_on_tofu_and_wmdp(target, tokenizer, splits, wmdp_sets, name, rule):
    spec = get_method(name)
    hparams = spec.hparams(**({"min_prefix": 4, "min_suffix": 4} if name == "MASC" else {}))
    for forget, retain in ((splits["forget10"], splits["retain90"]), wmdp_sets):
        model = copy.deepcopy(target)
        result = unlearn(model, spec, hparams, forget, retain, pad_token_id=tokenizer.pad_token_id, rule=rule,
                         max_steps=2, optim=OptimConfig(lr=1e-3, batch_size=2))
        assert result.steps == 2 and _changed(target, model)
        assert all(torch.isfinite(torch.tensor(e["forget_loss"])) for e in result.log)


def test_rmu_trains_only_its_down_projections_and_draws_one_control(target, tokenizer, wmdp_sets):
    spec = get_method("RMU")
    hparams = spec.hparams()
    model = copy.deepcopy(target)
    layer = rmu_layer(model, hparams)
    unlearn(model, spec, hparams, *wmdp_sets, pad_token_id=tokenizer.pad_token_id, max_steps=2,
            optim=OptimConfig(lr=1e-3, batch_size=2))
    expected = {f"model.layers.{i}.mlp.down_proj.weight" for i in range(max(0, layer - 2), layer + 1)}
    assert _changed(target, model) == expected
    everything = copy.deepcopy(target)
    unlearn(everything, spec, spec.hparams(train_scope="all"), *wmdp_sets, pad_token_id=tokenizer.pad_token_id,
            max_steps=1, optim=OptimConfig(lr=1e-3, batch_size=2))
    assert len(_changed(target, everything)) > len(expected)
    with pytest.raises(ValueError, match="layer must lie"):
        rmu_layer(model, {**hparams, "layer": 99})


def test_rmu_activation_norm_matches_one_example_at_a_time_and_scales_the_control(target, tokenizer, splits):
    """Reference: each forget example alone (no padding), the hooked layer's output norms of its
    tokens, averaged over all tokens of the set; the control vector's norm is steering x that."""
    from unlearning.methods import Context, prepare_rmu, rmu_activation_norm

    spec = get_method("RMU")
    hp = spec.hparams(steering=3.0, steering_scale="activation_norm")
    forget = splits["forget10"][:7]
    norms = []
    with torch.no_grad():
        for example in forget:
            out = target(input_ids=torch.tensor([example.input_ids]), output_hidden_states=True)
            norms.extend(out.hidden_states[rmu_layer(target, hp) + 1][0].norm(dim=-1).tolist())
    reference = sum(norms) / len(norms)
    assert rmu_activation_norm(target, forget, tokenizer.pad_token_id, hp, batch_size=3) == pytest.approx(reference, rel=1e-5)
    ctx = Context(hparams=hp, generator=torch.Generator().manual_seed(0))
    prepare_rmu(target, forget, tokenizer.pad_token_id, ctx)
    assert float(ctx.control.norm()) == pytest.approx(3.0 * reference, rel=1e-5)
    ctx = Context(hparams=spec.hparams(steering=3.0), generator=torch.Generator().manual_seed(0))
    prepare_rmu(target, forget, tokenizer.pad_token_id, ctx)
    assert float(ctx.control.norm()) == pytest.approx(3.0, rel=1e-6)  # absolute: the official code
    with pytest.raises(ValueError, match="steering_scale must be"):
        spec.hparams(steering_scale="relative")


def test_idk_forget_data_pairs_questions_with_refusals(world):
    records = load_split(world / "tofu", "forget10")
    idk = idk_records(records, seed=3)
    assert [r["question"] for r in idk] == [r["question"] for r in records]
    assert all(r["answer"] in IDK_ANSWERS for r in idk) and idk == idk_records(records, seed=3)
    assert get_method("IdkNLL").forget_records(records, 3) == idk and get_method("NPO").forget_records(records, 3) == records
    with pytest.raises(ValueError, match="IdkNLL needs question-answer data"):
        get_method("IdkNLL").forget_records([{"text": "a passage"}], 3)


def test_idknll_raises_the_refusal_likelihood(target, tokenizer, world, splits):
    from unlearning.metrics.likelihood import answer_probability

    forget = encode_qa_split(tokenizer, idk_records(load_split(world / "tofu", "forget10")))
    before = float(answer_probability(target, forget, tokenizer.pad_token_id).mean())
    spec = get_method("IdkNLL")
    unlearn(target, spec, spec.hparams(), forget, splits["retain90"], pad_token_id=tokenizer.pad_token_id,
            max_steps=20, optim=OptimConfig(lr=3e-3, batch_size=4))
    assert float(answer_probability(target, forget, tokenizer.pad_token_id).mean()) > before


def test_lora_run_uses_the_adapter_disabled_reference_and_merges(target, tokenizer, splits, monkeypatch):
    pytest.importorskip("peft")
    seen = {}
    original = copy.deepcopy

    def spy(obj, *args):
        if isinstance(obj, torch.nn.Module):  # a model copy, not peft's config copies
            seen["deepcopy"] = True
        return original(obj, *args)

    import unlearning.engine as engine

    monkeypatch.setattr(engine.copy, "deepcopy", spy)
    before = original(target)
    spec = get_method("NPO+KLR")
    unlearn(target, spec, spec.hparams(), splits["forget10"], splits["retain90"], pad_token_id=tokenizer.pad_token_id,
            rule="sago", max_steps=3, optim=OptimConfig(lr=1e-2, batch_size=2), lora={"r": 4})
    assert "deepcopy" not in seen  # no second copy of the model for the KL reference
    assert type(target).__name__ == "Qwen2ForCausalLM" and not any("lora" in n for n, _ in target.named_parameters())
    assert _changed(before, target)
    assert AdapterDisabledReference.__doc__


def test_gradient_accumulation_equals_the_large_batch_for_sequence_mean_losses(target, tokenizer, splits):
    # NPO and the cached reference are means over sequences, so two micro-batches of 2 give
    # the same gradient as one batch of 4 (token-mean NLL would weigh tokens differently)
    spec = get_method("NPO")
    big, small = copy.deepcopy(target), copy.deepcopy(target)
    for model, optim in ((big, OptimConfig(lr=1e-2, batch_size=4, optimizer="sgd")),
                         (small, OptimConfig(lr=1e-2, batch_size=2, grad_accum=2, optimizer="sgd"))):
        unlearn(model, spec, spec.hparams(), splits["forget10"], [], pad_token_id=tokenizer.pad_token_id,
                max_steps=2, optim=optim)
    assert max(float((p - q).abs().max()) for p, q in zip(big.parameters(), small.parameters())) < 1e-6


def test_probe_set_options(splits):
    forget = splits["forget10"]
    train, probe = split_probe_set(forget, "official", 8)
    assert train == forget and probe == forget[:8]
    train, probe = split_probe_set(forget, "holdout", 8)
    assert probe == forget[-8:] and train == forget[:-8]
    with pytest.raises(ValueError, match="probe_set"):
        split_probe_set(forget, "random", 8)
    with pytest.raises(ValueError, match="leaves no"):
        split_probe_set(forget[:4], "holdout", 8)


def test_a_method_answers_to_the_names_other_papers_and_toolkits_give_it():
    """One registry entry holds every name of a recipe: the SAGO paper's GA+GD is our GradDiff,
    OpenUnlearning's NPO (NLL retain term) our NPO+GD; other names pass through."""
    assert method_name("GradDiff", "sago") == "GA+GD" and method_name("GradDiff", "masc") == "GA+GDR"
    assert method_name("NPO+GD", "openunlearning") == "NPO" and method_name("NPO+GD", "sago") == "NPO+GD"
    assert method_name("MASC", "sago") == "MASC" and method_name("Target", "sago") == "Target"
