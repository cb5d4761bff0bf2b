"""Checkpoints along a run and the time to a good model (issue 20, experiments.trajectory)."""

import pytest
import torch

from unlearning.models import load_model, save_model
from unlearning.runs import RunSpec, run
from unlearning.store import weights_hash
from experiments.trajectory import Criterion, checkpoint_steps, good_model, time_to_quality


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


STATISTICS = {"forget": lambda items: items["f"]["x"].mean(axis=-1), "utility": lambda items: items["u"]["x"].mean(axis=-1)}


def _row(seconds, forget, utility):
    """A point of a trajectory with per-item scores (20 forget items, 20 utility items): `forget`
    and `utility` are lists of 20 values or a constant."""
    forget = forget if isinstance(forget, list) else [forget] * 20
    utility = utility if isinstance(utility, list) else [utility] * 20
    return {"seconds": seconds, "forget": sum(forget) / 20, "utility": sum(utility) / 20,
            "items": {"f": {"x": forget}, "u": {"x": utility}}}


ORACLE_F = [0.2, 0.6] * 10  # the oracle's forget scores, item by item: mean 0.40
ORACLE_U = [0.2, 0.4] * 10  # its utility: mean 0.30


def test_time_to_quality_is_the_first_point_that_forgets_enough_and_keeps_utility():
    criterion = Criterion(_row(0, ORACLE_F, ORACLE_U), STATISTICS, "forget", "utility", ("forget", "utility"))
    rows = [_row(0.0, 0.80, 0.50),
            _row(1.0, [x + 0.1 for x in ORACLE_F], 0.45),     # remembers 0.1 more on every item: resolved
            _row(2.0, 0.20, 0.10),                             # forgot, but broke the model
            _row(3.0, [x + 0.2 * (i == 0) for i, x in enumerate(ORACLE_F)], 0.35),  # one item 0.2 above: inside
            _row(4.0, 0.30, 0.40)]
    assert time_to_quality(rows, criterion)["seconds"] == 3.0
    assert time_to_quality(rows[:3], criterion) is None
    assert criterion.describe().startswith("forget not above the oracle's (0.400) and utility not below the oracle's (0.300)")
    assert not criterion.met({"forget": float("nan"), "utility": float("nan"), "items": None})  # a diverged run


def test_a_good_model_is_the_oracles_forgetting_and_utility_within_the_paired_interval():
    from unlearning.benchmarks import get_benchmark

    statistics = get_benchmark("tofu").statistics
    good = good_model({"forget_Q_A_ROUGE": 0.3}, statistics)
    assert (good.forget_metric, good.utility_metric, good.level) == ("forget_Q_A_ROUGE", "model_utility", 0.3)
    criterion = Criterion(_row(0, ORACLE_F, ORACLE_U), STATISTICS, "forget", "utility")
    one_item = [x - 0.2 * (i == 0) for i, x in enumerate(ORACLE_U)]   # 0.01 less utility, all of it on one item
    assert criterion.met(_row(1, ORACLE_F, one_item))
    assert not criterion.met(_row(1, ORACLE_F, [x - 0.01 for x in ORACLE_U]))  # 0.01 less on every item: resolved
