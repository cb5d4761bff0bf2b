"""The Hugging Face drop-ins are our methods (issue 47): transformers' real `Trainer` with
`GradientSynthesisMixin`, `MascStopCallback` and `masc_forget_loss` against `engine.unlearn` on the
same model, data order and settings, step for step.

Tolerance: both sides run the same float32 kernels in the same order in one process (the Trainer's
fused AdamW and clipping are torch's, as the engine's), so they agree to the bit on this machine;
the tests allow 1e-6 on every weight, a thousandth of one step's move at rate 1e-3, so they stay
true where a library's reduction order differs and still fail on any wrong update, batch or stop."""


import pytest
import torch

from hf_trainers import GradDiff, Masc, arguments, collators, engine_order, engine_pairs
from unlearning.engine import OptimConfig, unlearn
from unlearning.hf import MascStopCallback, UnlearningArguments, masc_forget_loss, masc_settings
from unlearning.methods import get_method
from unlearning.stopping import ViolationStop

ATOL = 1e-6
MASC_HP = {"gamma": 1.0, "alpha": 0.0, "rho": 0.3, "min_prefix": 2, "min_suffix": 2}  # the cut matters; V falls in steps


def _optim(lr: float = 1e-3, accum: int = 1) -> OptimConfig:
    """The engine's settings that `hf_trainers.arguments` mirror."""
    return OptimConfig(lr=lr, batch_size=2, grad_accum=accum, decay_groups="trainer", weight_decay=0.01, max_grad_norm=1.0)


def _assert_same_weights(a, b, start) -> None:
    moved = 0.0
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.allclose(x, y, rtol=0, atol=ATOL), name
        moved = max(moved, float((x - start[name]).abs().max()))
    assert moved > 1e-3, "the runs did not train"


@pytest.mark.parametrize(("rule", "accum"), [("sago", 1), ("pcgrad", 2), ("sum", 1), ("pcgrad_global", 1),
                                             ("sago_additive", 2)])
def test_graddiff_in_the_trainer_takes_the_engines_steps(target, tokenizer, splits, target_state, tmp_path, rule, accum):
    """Losses of every step and every weight after three steps, for each update rule, with gradient
    accumulation combining after the window (as the engine does)."""
    engine_model = target
    spec = get_method("GradDiff")
    result = unlearn(engine_model, spec, spec.hparams(), splits["forget10"], splits["retain90"],
                     pad_token_id=tokenizer.pad_token_id, rule=rule, max_steps=3, optim=_optim(accum=accum), seed=0)
    trainer_model = type(target)(target.config)
    trainer_model.load_state_dict(target_state)
    pairs, _ = collators(tokenizer.pad_token_id)
    trainer = GradDiff(model=trainer_model, args=arguments(tmp_path, update_rule=rule, max_steps=3,
                                                           gradient_accumulation_steps=accum),
                       train_dataset=engine_pairs(splits["forget10"], splits["retain90"], 2, 3 * accum), data_collator=pairs)
    trainer.train()
    logged = [h[key] for h in trainer.state.log_history if "forget_loss" in h for key in ("forget_loss", "retain_loss")]
    assert logged == pytest.approx([e[key] for e in result.log for key in ("forget_loss", "retain_loss")], abs=1e-6)
    _assert_same_weights(engine_model, trainer_model, target_state)


@pytest.mark.parametrize("accum", [1, 2])
def test_masc_inside_the_trainer_stops_itself_at_the_engines_step(target, tokenizer, splits, target_state, tmp_path, accum):
    """MASC's hinge as a `compute_loss` and its stop as a callback: the same probes (steps, stages,
    rates), the same stop step (past the first probe: 8 here with one micro-batch, 6 with two) and
    the same weights as the engine's MASC run; every probe is in the Trainer's log history."""
    probe = splits["forget10"][:8]
    hp = get_method("MASC").hparams(**MASC_HP)
    result = unlearn(target, get_method("MASC"), hp, splits["forget10"], splits["retain90"],
                     pad_token_id=tokenizer.pad_token_id, stop=ViolationStop(0.1, 2, 4, 8), max_steps=30,
                     probe_examples=probe, optim=_optim(accum=accum), seed=0)
    assert result.stopped and result.stop_step > 2
    model = type(target)(target.config)
    model.load_state_dict(target_state)
    stop = MascStopCallback(probe, pad_token_id=tokenizer.pad_token_id, tolerance=0.1, every=2, trigger_size=4,
                            confirm_size=8, settings=MASC_HP, seed=0)
    order = engine_order(len(splits["forget10"]), 2, 2 * 30 * accum, seed=0)
    _, encoded = collators(tokenizer.pad_token_id)
    trainer = Masc(model=model, args=arguments(tmp_path, max_steps=30, gradient_accumulation_steps=accum), settings=hp,
                   train_dataset=[splits["forget10"][i] for i in order], data_collator=encoded, callbacks=[stop])
    trainer.train()
    assert stop.stop_step == trainer.state.global_step == result.stop_step
    assert stop.rule.history == result.probes
    probes = [(h["step"], h["probe"], h["probe_size"], h["violation_rate"]) for h in trainer.state.log_history
              if "violation_rate" in h]
    assert probes == result.probes
    _assert_same_weights(target, model, target_state)


def test_the_callback_reads_a_recipe_run(tokenizer, splits):
    from unlearning.recipes import load

    run = load("masc/tofu").run("MASC")
    stop = MascStopCallback.from_recipe(run, splits["forget10"][:4], pad_token_id=tokenizer.pad_token_id)
    assert (stop.rule.tolerance, stop.rule.every, stop.rule.trigger_size, stop.rule.confirm_size) == (0.475, 2, 4, 32)
    assert stop.settings["rho"] == 0.7 and stop.settings["k"] == 10 and stop.settings["gamma"] == 0.05
    with pytest.raises(ValueError, match="not by MASC's violation rule"):
        MascStopCallback.from_recipe(load("openunlearning/tofu").run("GradDiff"), splits["forget10"][:4], pad_token_id=0)


def test_mixed_precision_keeps_the_update_on_the_retain_side(target, tokenizer, splits, tmp_path):
    """bf16 autocast on the CPU: SAGO's combined gradient never opposes the retain gradient
    (cos(g_final, g_r) >= 0, logged through `log_geometry`), the weights stay finite and move."""
    start = {k: v.clone() for k, v in target.state_dict().items()}
    pairs, _ = collators(tokenizer.pad_token_id)
    trainer = GradDiff(model=target, args=arguments(tmp_path, update_rule="sago", max_steps=3, bf16=True, log_geometry=True),
                       train_dataset=engine_pairs(splits["forget10"], splits["retain90"], 2, 3), data_collator=pairs)
    trainer.train()
    logged = [h for h in trainer.state.log_history if "cos_final_retain" in h]
    assert len(logged) == 3 and all(h["cos_final_retain"] >= 0 for h in logged)
    assert all(0 < h["conflict_coordinates"] < 1 for h in logged)
    assert all(torch.isfinite(v).all() for v in target.state_dict().values())
    assert max(float((v - start[k]).abs().max()) for k, v in target.state_dict().items()) > 1e-4


def test_masc_forget_loss_is_the_engines_objective(target, tokenizer, splits):
    """The plain function on a model's outputs equals the engine's MASC forget objective on the same
    batch and cut stream, and teacher mode uses the teacher's rivals."""
    from unlearning.data import collate
    from unlearning.methods import Context

    batch = collate(splits["forget10"][:4], tokenizer.pad_token_id)
    hp = masc_settings(min_prefix=2, min_suffix=2)
    with torch.no_grad():
        engine = get_method("MASC").forget(target, batch, Context(hparams=hp, generator=torch.Generator().manual_seed(3)))
        outputs = target(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    ours = masc_forget_loss(outputs, batch, hp, generator=torch.Generator().manual_seed(3))
    assert float(ours) == pytest.approx(float(engine), abs=1e-7) and float(ours) > 0
    teacher_hp = masc_settings(competitors="teacher", k=1)
    shuffled = type(outputs)(logits=outputs.logits.flip(-1))
    self_loss = masc_forget_loss(outputs, batch, masc_settings(k=1), generator=torch.Generator().manual_seed(3))
    teacher_loss = masc_forget_loss(outputs, batch, teacher_hp, teacher_outputs=shuffled,
                                    generator=torch.Generator().manual_seed(3))
    assert float(teacher_loss) != pytest.approx(float(self_loss))


def _one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_bad_configuration_fails_at_construction_with_one_line(target, tokenizer, splits, tmp_path):
    from transformers import Trainer, TrainingArguments

    from unlearning.data import Encoded
    from unlearning.hf import GradientSynthesisMixin

    with pytest.raises(ValueError) as error:
        UnlearningArguments(output_dir=str(tmp_path), update_rule="pcgrad-ish", report_to=[])
    assert "update_rule must be one of sum, pcgrad, pcgrad_global, sago, sago_additive" in _one_line(error)

    class ForgetOnly(GradientSynthesisMixin, Trainer):
        def forget_loss(self, model, inputs):
            return model(**inputs["forget"]).loss

    with pytest.raises(TypeError) as error:
        ForgetOnly(model=target, args=arguments(tmp_path))
    assert _one_line(error) == "ForgetOnly must define retain_loss(self, model, inputs)"
    with pytest.raises(TypeError) as error:
        GradDiff(model=target, args=TrainingArguments(output_dir=str(tmp_path), report_to=[], use_cpu=True))
    assert "needs UnlearningArguments" in _one_line(error)
    prompt_only = Encoded([1, 2, 3, 4], [1, -100, -100, -100])  # a label at position 0 only: nothing to predict
    no_answer = [splits["forget10"][0], Encoded([1, 2, 3], [-100, -100, -100])]
    for probe in (no_answer, [prompt_only]):
        with pytest.raises(ValueError) as error:
            MascStopCallback(probe, pad_token_id=tokenizer.pad_token_id)
        assert "has no labelled next token, so no continuation region" in _one_line(error)
    with pytest.raises(ValueError) as error:
        MascStopCallback(splits["forget10"][:2], pad_token_id=0, settings={"rhoo": 0.5})
    assert "MASC has no hyper-parameter 'rhoo'" in _one_line(error)
    with pytest.raises(ValueError) as error:
        MascStopCallback(splits["forget10"][:2], pad_token_id=0, tolerance=1.5)
    assert "tolerance must lie in [0, 1]" in _one_line(error)
    with pytest.raises(ValueError) as error:
        MascStopCallback(splits["forget10"][:2], pad_token_id=0, settings={"competitors": "teacher"})
    assert "pass reference=" in _one_line(error)
