"""Interruption of `unlearn` and `evaluate`.

A command killed (SIGKILL) or interrupted (Ctrl-C) before, during or after its final writes
leaves nothing that a rerun takes as done, and the rerun produces exactly what an
uninterrupted run does (issue 19). Real subprocesses, killed at named points
(`unlearning.failpoints`) and at a random moment within the uninterrupted command's own time;
the helpers are in `processes.py`."""

import json
import random
import shutil
import signal
import time
from pathlib import Path

import pytest
from helpers import without_cost
from processes import cli, weights

from unlearning.cli import INTERRUPTED
from unlearning.models import save_model


@pytest.fixture(scope="module")
def lab(tmp_path_factory, world, target_state, tokenizer):
    from laboratory.family import build_model

    root = tmp_path_factory.mktemp("interrupt")
    model = build_model("xs", tokenizer, seed=0)
    model.load_state_dict(target_state)
    save_model(model, root / "model")
    tokenizer.save_pretrained(root / "tok")
    return root


def _unlearn_args(lab: Path, world: Path, store: str):
    return ("unlearn", "--benchmark", "tofu", "--data", world / "tofu", "--model", lab / "model", "--tokenizer",
            lab / "tok", "--method", "NPO+KLR", "--max-steps", "12", "--store", lab / store)


def _result(store: Path):
    (record_path,) = store.glob("*/record.json")
    record = json.loads(record_path.read_text())
    return without_cost(record), weights(record_path.parent / "model")


@pytest.fixture(scope="module")
def reference(lab, world):
    """The uninterrupted run: its record and weights, and how long its command took on this machine."""
    start = time.monotonic()
    done = cli(*_unlearn_args(lab, world, "reference"))
    assert done.returncode == 0, done.stderr
    return _result(lab / "reference"), time.monotonic() - start


POINTS = ["engine:step", "run:trained", "save:written", "run:model-saved", "run:recorded"]


def test_a_run_killed_at_every_point_in_turn_is_redone_exactly(lab, world, reference):
    """One store, one command killed at each point in turn (each run after the first starts from
    what the previous kill left), then a rerun: exactly the uninterrupted run."""
    store = "killed"
    for point in POINTS:
        killed = cli(*_unlearn_args(lab, world, store), failpoint=point)
        assert killed.returncode == -signal.SIGKILL, (point, killed.stderr)
        finished = list((lab / store).glob("*/record.json"))
        assert bool(finished) == (point == "run:recorded"), point  # no record, no finished run
    again = cli(*_unlearn_args(lab, world, store))
    assert again.returncode == 0, again.stderr
    assert "cached:" in again.stdout  # the run killed after its record was finished
    assert _result(lab / store) == reference[0]


def test_a_run_killed_at_a_random_moment_is_redone_exactly(lab, world, reference):
    store = "random"
    for attempt in range(2):  # somewhere within the uninterrupted command's own time on this machine
        process = cli(*_unlearn_args(lab, world, store), wait=False)
        time.sleep(random.Random(attempt).uniform(0.3, 0.95) * reference[1])
        process.send_signal(signal.SIGKILL)
        process.communicate()
    again = cli(*_unlearn_args(lab, world, store))
    assert again.returncode == 0, again.stderr
    assert _result(lab / store) == reference[0]


def test_ctrl_c_says_one_line_and_the_rerun_completes(lab, world, reference):
    store = "ctrl-c"
    interrupted = cli(*_unlearn_args(lab, world, store), failpoint="engine:step", signal_kind="INT")
    assert interrupted.returncode == 130
    assert interrupted.stderr.strip().splitlines() == [f"unlearning unlearn: {INTERRUPTED}"]
    assert not list((lab / store).glob("*/record.json"))
    again = cli(*_unlearn_args(lab, world, store))
    assert again.returncode == 0 and _result(lab / store) == reference[0]


def _evaluate_args(world: Path, lab: Path, model: Path) -> tuple:
    return ("evaluate", "--benchmark", "tofu", "--data", world / "tofu", "--model", model, "--tokenizer", lab / "tok")


@pytest.fixture(scope="module")
def evaluation_reference(lab, world, tmp_path_factory):
    """The uninterrupted evaluation of the lab's model (its cached metrics), and its command's time."""
    fresh = tmp_path_factory.mktemp("fresh-evaluation") / "model"
    shutil.copytree(lab / "model", fresh)
    start = time.monotonic()
    done = cli(*_evaluate_args(world, lab, fresh))
    assert done.returncode == 0, done.stderr
    (expected,) = (fresh / "metrics").glob("*.json")
    return without_cost(json.loads(expected.read_text())), time.monotonic() - start


def _evaluated(model: Path) -> dict:
    (metrics,) = (model / "metrics").glob("*.json")
    return without_cost(json.loads(metrics.read_text()))


@pytest.mark.parametrize("point", ["cache:computed", "cache:written"])
def test_an_evaluation_killed_before_or_after_its_write_is_redone_or_reused(lab, world, point, tmp_path,
                                                                             evaluation_reference):
    model = tmp_path / "model"
    shutil.copytree(lab / "model", model)
    killed = cli(*_evaluate_args(world, lab, model), failpoint=point)
    assert killed.returncode == -signal.SIGKILL
    assert bool(list((model / "metrics").glob("*.json"))) == (point == "cache:written")
    again = cli(*_evaluate_args(world, lab, model))
    assert again.returncode == 0, again.stderr
    assert _evaluated(model) == evaluation_reference[0]


def test_an_evaluation_killed_at_a_random_moment_leaves_nothing_and_the_rerun_is_exact(lab, world, tmp_path,
                                                                                         evaluation_reference):
    model = tmp_path / "model"
    shutil.copytree(lab / "model", model)
    args = _evaluate_args(world, lab, model)
    for attempt in range(2):  # somewhere within the uninterrupted command's own time on this machine
        process = cli(*args, wait=False)
        time.sleep(random.Random(30 + attempt).uniform(0.3, 0.9) * evaluation_reference[1])
        process.send_signal(signal.SIGKILL)
        process.communicate()
        for written in (model / "metrics").glob("*.json"):  # a cache entry is whole or absent
            json.loads(written.read_text())
    assert cli(*args).returncode == 0
    assert _evaluated(model) == evaluation_reference[0]


def test_ctrl_c_of_an_evaluation_writes_nothing(lab, world, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(lab / "model", model)
    interrupted = cli(*_evaluate_args(world, lab, model), failpoint="cache:computed", signal_kind="INT")
    assert interrupted.returncode == 130
    assert interrupted.stderr.strip().splitlines() == [f"unlearning evaluate: {INTERRUPTED}"]
    assert not list((model / "metrics").glob("*.json"))
