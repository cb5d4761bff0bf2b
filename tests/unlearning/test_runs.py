"""One run's specification and key (`unlearning.runs`): resolving fills what the benchmark and the
method default to and checks every value; the key changes with every field, the starting weights and
the data, and with nothing else; a stored record gives back its spec."""

from dataclasses import asdict, fields, replace

import pytest

from unlearning.engine import OptimConfig
from unlearning.runs import RunSpec, checkpoint_name, diverged_message, run, spec_from_record
from unlearning.stopping import StopConfig


def _spec(**changes) -> RunSpec:
    return replace(RunSpec(benchmark="tofu", method="NPO", model="models/target"), **changes)


def test_resolving_fills_the_benchmarks_splits_and_the_methods_defaults():
    spec = _spec(hparams={"beta": 0.5}).resolved()
    assert (spec.forget_split, spec.retain_split) == ("forget10", "retain90")
    assert spec.hparams == {"gamma": 1.0, "beta": 0.5}  # NPO's defaults, beta overridden
    assert _spec(forget_split="forget01", retain_split="retain99").resolved().forget_split == "forget01"
    assert spec.resolved() == spec  # resolving twice changes nothing


@pytest.mark.parametrize("changes, message", [
    ({"rule": "average"}, "rule must be one of"),
    ({"max_steps": 0}, "max_steps must be >= 1"),
    ({"probe_set": "mine"}, "probe_set must be one of"),
    ({"lora": {"r": 0}}, "LoRA rank must be >= 1"),
    ({"packing": 64}, "packing must be a block length >= 1 on a text benchmark"),  # TOFU is QA
    ({"method": "nope"}, "nope"),
    ({"benchmark": "pretrain"}, "cannot be unlearned"),
    ({"hparams": {"bta": 1.0}}, "NPO has no hyper-parameter 'bta'"),
])
def test_resolving_rejects_each_wrong_value_in_one_line(changes, message):
    with pytest.raises(ValueError, match=message) as error:
        _spec(**changes).resolved()
    assert "\n" not in str(error.value)


def test_a_record_gives_back_the_spec_it_was_computed_from():
    spec = _spec(rule="sago", stop=StopConfig("violation", tolerance=0.2), optim=OptimConfig(lr=3e-4), seed=4,
                 lora={"r": 4}, max_steps=7).resolved()
    record = {**asdict(spec), "steps": 7, "key": "tofu-NPO-0123"}  # a record holds more than the spec
    assert spec_from_record(record) == spec


def _inputs(tmp_path, weights: bytes = b"weights"):
    model, data = tmp_path / "model", tmp_path / "data"
    model.mkdir(exist_ok=True)
    data.mkdir(exist_ok=True)
    (model / "model.safetensors").write_bytes(weights)
    for split in ("forget10", "retain90", "forget01", "retain99"):
        (data / f"{split}.json").write_text(f'[{{"question": "{split}?", "answer": "a"}}]')
    return model, data


def test_the_key_changes_with_every_field_of_the_spec_the_weights_and_the_data(tmp_path):
    model, data = _inputs(tmp_path)
    spec = _spec(model=str(model))
    key = spec.key(data)
    assert spec.key(data) == key and len(key) == 64
    changed = {"rule": "pcgrad", "forget_split": "forget01", "retain_split": "retain99", "hparams": {"beta": 0.2},
               "stop": StopConfig("violation"), "max_steps": 99, "optim": OptimConfig(lr=1e-3), "seed": 1,
               "probe_set": "holdout", "record_geometry": True, "lora": {"r": 2}, "method": "GA"}
    # every field but the model's path (its weights' hash stands in for it) and packing (not for QA) is changed
    assert set(changed) | {"benchmark", "model", "packing"} == {f.name for f in fields(RunSpec)}
    keys = {name: replace(spec, **{name: value}).key(data) for name, value in changed.items()}
    assert key not in keys.values() and len(set(keys.values())) == len(changed)
    # the same weights in another folder: the same key; other weights: another
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "model.safetensors").write_bytes(b"weights")
    assert replace(spec, model=str(other)).key(data) == key
    (other / "model.safetensors").write_bytes(b"WEIGHTS")
    assert replace(spec, model=str(other)).key(data) != key
    # the data: a retain file that changed
    (data / "retain90.json").write_text('[{"question": "changed?", "answer": "a"}]')
    assert spec.key(data) != key


def test_a_missing_folder_is_named_before_any_work(tmp_path):
    model, data = _inputs(tmp_path)
    spec = _spec(model=str(model))
    for folders, what in (((tmp_path / "nodata", model), "data"), ((data, tmp_path / "notok"), "tokenizer")):
        with pytest.raises(FileNotFoundError, match=f"^{what}: folder not found"):
            run(spec, folders[0], folders[1], tmp_path / "store")
    with pytest.raises(FileNotFoundError, match="^model: folder not found"):
        run(_spec(model=str(tmp_path / "nomodel")), data, model, tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_checkpoint_folders_sort_by_step_and_a_divergence_is_one_line():
    assert checkpoint_name(7) == "checkpoints/step-00007"
    assert sorted(checkpoint_name(s) for s in (10, 9, 100)) == [checkpoint_name(s) for s in (9, 10, 100)]
    record = {"method": "GA", "benchmark": "tofu", "diverged": {"step": 3, "objective": "forget loss", "value": "nan"}}
    assert diverged_message(record) == ("GA on tofu diverged at step 3: the forget loss is nan; no model was saved "
                                        "(the run is recorded as diverged)")
