"""Interruption of `learn` (two workers).

A command killed (SIGKILL) or interrupted (Ctrl-C) before, during or after its final writes
leaves nothing that a rerun takes as done, and the rerun produces exactly what an
uninterrupted run does (issue 19). Real subprocesses, killed at named points
(`unlearning.failpoints`) and at a random moment within the uninterrupted command's own time;
the helpers are in `processes.py`."""

import json
import random
import signal
import time
from pathlib import Path

import pytest
from processes import cli, kill_group, popen_group, weights

from unlearning.cli import INTERRUPTED


def test_learning_killed_while_saving_a_model_is_redone_exactly(world, tmp_path):
    plan = tmp_path / "learn.yaml"
    plan.write_text("sizes: [xs]\nmain_size: xs\npretrain: {epochs: 1, lr: 0.003, batch_size: 32}\n"
                    "finetune: {epochs: 1, lr: 0.003, batch_size: 16}\noracles: []\nmain_oracles: []\nmuse: []\n"
                    "vocab_size: 256\nseed: 0\n")
    args = ("learn", "--config", plan, "--data", world)
    assert cli(*args, "--out", tmp_path / "reference").returncode == 0
    killed = cli(*args, "--out", tmp_path / "killed", failpoint="save:written")
    assert killed.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed" / "manifest.json").exists()
    again = cli(*args, "--out", tmp_path / "killed")
    assert again.returncode == 0, again.stderr
    reference = json.loads((tmp_path / "reference" / "manifest.json").read_text())
    rerun = json.loads((tmp_path / "killed" / "manifest.json").read_text())
    assert {k: v["key"] for k, v in rerun.items()} == {k: v["key"] for k, v in reference.items()}
    for name in reference:
        assert weights(tmp_path / "killed" / name) == weights(tmp_path / "reference" / name), name


LEARN_PLAN = ("sizes: [xs]\nmain_size: xs\npretrain: {epochs: 1, lr: 0.003, batch_size: 32}\n"
              "finetune: {epochs: 1, lr: 0.003, batch_size: 16}\noracles: [retain90]\nmain_oracles: [retain95]\n"
              "muse: []\nvocab_size: 256\nseed: 0\n")


@pytest.fixture(scope="module")
def learned_reference(world, tmp_path_factory):
    root = tmp_path_factory.mktemp("learn")
    (root / "learn.yaml").write_text(LEARN_PLAN)
    start = time.monotonic()
    done = cli("learn", "--config", root / "learn.yaml", "--data", world, "--out", root / "reference", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    root.joinpath("duration").write_text(str(time.monotonic() - start))
    return root


def _same_models(left: Path, right: Path) -> None:
    reference = json.loads((left / "manifest.json").read_text())
    rerun = json.loads((right / "manifest.json").read_text())
    assert {k: v["key"] for k, v in rerun.items()} == {k: v["key"] for k, v in reference.items()}
    for name in reference:
        assert weights(right / name) == weights(left / name), name


def test_learning_with_two_workers_killed_at_random_moments_is_redone_exactly(learned_reference, world):
    """SIGKILL to the whole process group (the command and its two workers: a power cut) three
    times at random moments, then a rerun: the same models as an uninterrupted learn."""
    out = learned_reference / "killed"
    args = ("learn", "--config", learned_reference / "learn.yaml", "--data", world, "--out", out, "--jobs", "2")
    duration = float((learned_reference / "duration").read_text())
    for attempt in range(2):  # within an uninterrupted learn's own time
        process = popen_group(*args)
        time.sleep(random.Random(10 + attempt).uniform(0.3, 0.95) * duration)
        kill_group(process, signal.SIGKILL)
        process.communicate()
    finished = {str(p.parent.relative_to(out)) for p in out.glob("**/learning.json")}
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    # exactly the unfinished work: every model finished before the kills is read back, the others trained
    assert {line.removeprefix("up to date: ") for line in again.stdout.splitlines() if line.startswith("up to date")} == finished
    _same_models(learned_reference / "reference", out)


def test_ctrl_c_of_learning_says_one_line_and_the_rerun_completes(learned_reference, world):
    """Ctrl-C once the first model is learned (its line on the command's output), while the two
    workers train the next ones: one line, status 130, no manifest; the rerun completes exactly."""
    out = learned_reference / "ctrl-c"
    args = ("learn", "--config", learned_reference / "learn.yaml", "--data", world, "--out", out, "--jobs", "2")
    process = popen_group(*args)
    for line in process.stdout:  # wait for an event, not for a time: the first model is saved
        if line.startswith("learned base-xs"):
            break
    kill_group(process, signal.SIGINT)  # what Ctrl-C in a terminal does: the command and its workers
    _, stderr = process.communicate(timeout=300)
    if process.returncode != 0:  # it may have finished before the signal came
        assert process.returncode == 130, stderr
        assert stderr.strip().splitlines()[-1] == f"laboratory learn: {INTERRUPTED}"
        assert not (out / "manifest.json").exists()
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    _same_models(learned_reference / "reference", out)
