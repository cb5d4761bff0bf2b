"""Checkpoints along a run and the time to a good model (issue 20, unlearning.trajectory)."""

import pytest
import torch

from unlearning.models import load_model, save_model
from unlearning.runs import RunSpec, run
from unlearning.store import weights_hash
from unlearning.trajectory import Criterion, checkpoint_steps, good_model, time_to_quality


def test_checkpoint_steps_grow_geometrically_below_the_budget():
    assert checkpoint_steps(20) == (2, 3, 4, 6, 9, 14)  # 2, then round(x * 1.5), at least one more
    assert checkpoint_steps(5, first=1, growth=2) == (1, 2, 4)
    assert checkpoint_steps(2) == ()
    with pytest.raises(ValueError, match="growth"):
        checkpoint_steps(10, growth=1.0)


@pytest.fixture
def stored(target, tokenizer, tmp_path):
    save_model(target, tmp_path / "target")
    tokenizer.save_pretrained(tmp_path / "tok")
    return tmp_path


def _run(stored, world, steps, store="runs", checkpoints=()):
    spec = RunSpec("tofu", "GA", str(stored / "target"), forget_split="forget10", max_steps=steps)
    return run(spec, world / "tofu", stored / "tok", stored / store, checkpoints=checkpoints)


def test_a_checkpoint_holds_the_weights_of_a_run_stopped_at_its_step(stored, world):
    """No learning-rate schedule, same batches: step 4 of a 6-step run is the 4-step run's model."""
    record = _run(stored, world, 6, checkpoints=(2, 4, 9))
    assert [c["step"] for c in record["checkpoints"]] == [2, 4] and record["checkpoints_requested"] == [2, 4, 9]
    seconds = [c["seconds"] for c in record["checkpoints"]]
    assert 0 < seconds[0] < seconds[1] < record["train_seconds"] + record["probe_seconds"]
    short = _run(stored, world, 4, store="short")
    assert weights_hash(record["checkpoints"][1]["dir"]) == weights_hash(short["dir"])
    reloaded = load_model(record["checkpoints"][0]["dir"])
    assert not torch.equal(reloaded.model.embed_tokens.weight, load_model(short["dir"]).model.embed_tokens.weight)


def test_a_stored_run_asked_for_checkpoints_is_run_again_to_the_same_model(stored, world):
    plain = _run(stored, world, 5)
    final = weights_hash(plain["dir"])
    assert plain["checkpoints"] == [] and plain["checkpoints_requested"] == []
    again = _run(stored, world, 5, checkpoints=(3,))
    assert [c["step"] for c in again["checkpoints"]] == [3] and weights_hash(again["dir"]) == final
    both = _run(stored, world, 5, checkpoints=(2,))  # the earlier request is kept
    assert [c["step"] for c in both["checkpoints"]] == [2, 3]
    reread = _run(stored, world, 5, checkpoints=(2, 3))
    assert reread["checkpoints"] == both["checkpoints"]  # read back: the same times, not a new run


def test_time_to_quality_is_the_first_point_that_forgets_enough_and_keeps_utility():
    criterion = Criterion("forget", level=0.40, tolerance=0.05, utility_metric="utility", floor=0.30)
    rows = [{"seconds": 0.0, "forget": 0.80, "utility": 0.50},
            {"seconds": 1.0, "forget": 0.50, "utility": 0.45},
            {"seconds": 2.0, "forget": 0.20, "utility": 0.10},   # forgot, but broke the model
            {"seconds": 3.0, "forget": 0.45, "utility": 0.35},   # 0.45 <= 0.40 + 0.05 and 0.35 >= 0.30
            {"seconds": 4.0, "forget": 0.30, "utility": 0.40}]
    assert time_to_quality(rows, criterion)["seconds"] == 3.0
    assert time_to_quality(rows[:3], criterion) is None
    assert criterion.describe() == "forget ROUGE-L at most 0.400 + 0.05 (the oracle's level) with model utility at least 0.300"


def test_a_good_model_is_the_oracles_forgetting_and_utility_within_one_item():
    oracle = {"forget_Q_A_ROUGE": 0.30, "model_utility": 0.50}
    good = good_model(oracle, {"1-ROUGE-L": 0.05, "1-Prob": 0.05, "Truth Ratio": 0.05, "MU": 0.02})
    assert good.met({"forget_Q_A_ROUGE": 0.349, "model_utility": 0.481})  # both within one item
    assert not good.met({"forget_Q_A_ROUGE": 0.36, "model_utility": 0.60})  # remembers one item more
    assert not good.met({"forget_Q_A_ROUGE": 0.10, "model_utility": 0.47})  # lost more than one item of utility
