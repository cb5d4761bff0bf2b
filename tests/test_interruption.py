"""Interruption: a command killed (SIGKILL) or interrupted (Ctrl-C) before, during or after its
final writes leaves nothing that a rerun takes as done, and the rerun produces exactly what an
uninterrupted run does (issue 19). Real subprocesses, killed at named points
(`unlearning.failpoints`) and at a random moment."""

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import without_cost
from unlearning.cli import INTERRUPTED
from unlearning.models import save_model

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "UNLEARNING_PROGRESS": "0", "TQDM_DISABLE": "1"}


def _cli(*args, failpoint=None, signal_kind=None, wait=True):
    env = dict(ENV)
    env.pop("UNLEARNING_FAILPOINT", None)
    if failpoint:
        env["UNLEARNING_FAILPOINT"] = failpoint
    if signal_kind:
        env["UNLEARNING_FAILPOINT_SIGNAL"] = signal_kind
    command = [sys.executable, "-m", "unlearning.cli", *map(str, args)]
    if not wait:
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def _weights(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, world, target_state, tokenizer):
    from unlearning.models import build_model

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
    return without_cost(record), _weights(record_path.parent / "model")


@pytest.fixture(scope="module")
def reference(lab, world):
    """The uninterrupted run: its record and weights, and how long its command took on this machine."""
    start = time.monotonic()
    done = _cli(*_unlearn_args(lab, world, "reference"))
    assert done.returncode == 0, done.stderr
    return _result(lab / "reference"), time.monotonic() - start


POINTS = ["engine:step", "run:trained", "save:written", "run:model-saved", "run:recorded"]


def test_a_run_killed_at_every_point_in_turn_is_redone_exactly(lab, world, reference):
    """One store, one command killed at each point in turn (each run after the first starts from
    what the previous kill left), then a rerun: exactly the uninterrupted run."""
    store = "killed"
    for point in POINTS:
        killed = _cli(*_unlearn_args(lab, world, store), failpoint=point)
        assert killed.returncode == -signal.SIGKILL, (point, killed.stderr)
        finished = list((lab / store).glob("*/record.json"))
        assert bool(finished) == (point == "run:recorded"), point  # no record, no finished run
    again = _cli(*_unlearn_args(lab, world, store))
    assert again.returncode == 0, again.stderr
    assert "cached:" in again.stdout  # the run killed after its record was finished
    assert _result(lab / store) == reference[0]


def test_a_run_killed_at_a_random_moment_is_redone_exactly(lab, world, reference):
    store = "random"
    for attempt in range(2):  # somewhere within the uninterrupted command's own time on this machine
        process = _cli(*_unlearn_args(lab, world, store), wait=False)
        time.sleep(random.Random(attempt).uniform(0.3, 0.95) * reference[1])
        process.send_signal(signal.SIGKILL)
        process.communicate()
    again = _cli(*_unlearn_args(lab, world, store))
    assert again.returncode == 0, again.stderr
    assert _result(lab / store) == reference[0]


def test_ctrl_c_says_one_line_and_the_rerun_completes(lab, world, reference):
    store = "ctrl-c"
    interrupted = _cli(*_unlearn_args(lab, world, store), failpoint="engine:step", signal_kind="INT")
    assert interrupted.returncode == 130
    assert interrupted.stderr.strip().splitlines() == [f"unlearning unlearn: {INTERRUPTED}"]
    assert not list((lab / store).glob("*/record.json"))
    again = _cli(*_unlearn_args(lab, world, store))
    assert again.returncode == 0 and _result(lab / store) == reference[0]


def _evaluate_args(world: Path, lab: Path, model: Path) -> tuple:
    return ("evaluate", "--benchmark", "tofu", "--data", world / "tofu", "--model", model, "--tokenizer", lab / "tok")


@pytest.fixture(scope="module")
def evaluation_reference(lab, world, tmp_path_factory):
    """The uninterrupted evaluation of the lab's model (its cached metrics), and its command's time."""
    fresh = tmp_path_factory.mktemp("fresh-evaluation") / "model"
    shutil.copytree(lab / "model", fresh)
    start = time.monotonic()
    done = _cli(*_evaluate_args(world, lab, fresh))
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
    killed = _cli(*_evaluate_args(world, lab, model), failpoint=point)
    assert killed.returncode == -signal.SIGKILL
    assert bool(list((model / "metrics").glob("*.json"))) == (point == "cache:written")
    again = _cli(*_evaluate_args(world, lab, model))
    assert again.returncode == 0, again.stderr
    assert _evaluated(model) == evaluation_reference[0]


def test_learning_killed_while_saving_a_model_is_redone_exactly(world, tmp_path):
    plan = tmp_path / "learn.yaml"
    plan.write_text("sizes: [xs]\nmain_size: xs\npretrain: {epochs: 1, lr: 0.003, batch_size: 32}\n"
                    "finetune: {epochs: 1, lr: 0.003, batch_size: 16}\noracles: []\nmain_oracles: []\nmuse: []\n"
                    "vocab_size: 256\nseed: 0\n")
    args = ("learn", "--config", plan, "--data", world)
    assert _cli(*args, "--out", tmp_path / "reference").returncode == 0
    killed = _cli(*args, "--out", tmp_path / "killed", failpoint="save:written")
    assert killed.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed" / "manifest.json").exists()
    again = _cli(*args, "--out", tmp_path / "killed")
    assert again.returncode == 0, again.stderr
    reference = json.loads((tmp_path / "reference" / "manifest.json").read_text())
    rerun = json.loads((tmp_path / "killed" / "manifest.json").read_text())
    assert {k: v["key"] for k, v in rerun.items()} == {k: v["key"] for k, v in reference.items()}
    for name in reference:
        assert _weights(tmp_path / "killed" / name) == _weights(tmp_path / "reference" / name), name


def _popen_group(*args, env_extra=None):
    """The CLI in a process group of its own (it and every worker it spawns), as a terminal runs it."""
    env = {**ENV, **(env_extra or {})}
    env.pop("UNLEARNING_FAILPOINT", None)
    return subprocess.Popen([sys.executable, "-m", "unlearning.cli", *map(str, args)], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kill_group(process, sig) -> None:
    """Send `sig` to a process group, unless it already ended."""
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


LEARN_PLAN = ("sizes: [xs]\nmain_size: xs\npretrain: {epochs: 1, lr: 0.003, batch_size: 32}\n"
              "finetune: {epochs: 1, lr: 0.003, batch_size: 16}\noracles: [retain90]\nmain_oracles: [retain95]\n"
              "muse: []\nvocab_size: 256\nseed: 0\n")


@pytest.fixture(scope="module")
def learned_reference(world, tmp_path_factory):
    root = tmp_path_factory.mktemp("learn")
    (root / "learn.yaml").write_text(LEARN_PLAN)
    start = time.monotonic()
    done = _cli("learn", "--config", root / "learn.yaml", "--data", world, "--out", root / "reference", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    root.joinpath("duration").write_text(str(time.monotonic() - start))
    return root


def _same_models(left: Path, right: Path) -> None:
    reference = json.loads((left / "manifest.json").read_text())
    rerun = json.loads((right / "manifest.json").read_text())
    assert {k: v["key"] for k, v in rerun.items()} == {k: v["key"] for k, v in reference.items()}
    for name in reference:
        assert _weights(right / name) == _weights(left / name), name


def test_learning_with_two_workers_killed_at_random_moments_is_redone_exactly(learned_reference, world):
    """SIGKILL to the whole process group (the command and its two workers: a power cut) three
    times at random moments, then a rerun: the same models as an uninterrupted learn."""
    out = learned_reference / "killed"
    args = ("learn", "--config", learned_reference / "learn.yaml", "--data", world, "--out", out, "--jobs", "2")
    duration = float((learned_reference / "duration").read_text())
    for attempt in range(2):  # within an uninterrupted learn's own time
        process = _popen_group(*args)
        time.sleep(random.Random(10 + attempt).uniform(0.3, 0.95) * duration)
        _kill_group(process, signal.SIGKILL)
        process.communicate()
    finished = {str(p.parent.relative_to(out)) for p in out.glob("**/learning.json")}
    again = _cli(*args)
    assert again.returncode == 0, again.stderr
    # exactly the unfinished work: every model finished before the kills is read back, the others trained
    assert {line.removeprefix("up to date: ") for line in again.stdout.splitlines() if line.startswith("up to date")} == finished
    _same_models(learned_reference / "reference", out)


def test_ctrl_c_of_learning_says_one_line_and_the_rerun_completes(learned_reference, world):
    """Ctrl-C once the first model is learned (its line on the command's output), while the two
    workers train the next ones: one line, status 130, no manifest; the rerun completes exactly."""
    out = learned_reference / "ctrl-c"
    args = ("learn", "--config", learned_reference / "learn.yaml", "--data", world, "--out", out, "--jobs", "2")
    process = _popen_group(*args)
    for line in process.stdout:  # wait for an event, not for a time: the first model is saved
        if line.startswith("learned base-xs"):
            break
    _kill_group(process, signal.SIGINT)  # what Ctrl-C in a terminal does: the command and its workers
    _, stderr = process.communicate(timeout=300)
    if process.returncode != 0:  # it may have finished before the signal came
        assert process.returncode == 130, stderr
        assert stderr.strip().splitlines()[-1] == f"unlearning learn: {INTERRUPTED}"
        assert not (out / "manifest.json").exists()
    again = _cli(*args)
    assert again.returncode == 0, again.stderr
    _same_models(learned_reference / "reference", out)


def test_an_evaluation_killed_at_a_random_moment_leaves_nothing_and_the_rerun_is_exact(lab, world, tmp_path,
                                                                                         evaluation_reference):
    model = tmp_path / "model"
    shutil.copytree(lab / "model", model)
    args = _evaluate_args(world, lab, model)
    for attempt in range(2):  # somewhere within the uninterrupted command's own time on this machine
        process = _cli(*args, wait=False)
        time.sleep(random.Random(30 + attempt).uniform(0.3, 0.9) * evaluation_reference[1])
        process.send_signal(signal.SIGKILL)
        process.communicate()
        for written in (model / "metrics").glob("*.json"):  # a cache entry is whole or absent
            json.loads(written.read_text())
    assert _cli(*args).returncode == 0
    assert _evaluated(model) == evaluation_reference[0]


def test_ctrl_c_of_an_evaluation_writes_nothing(lab, world, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(lab / "model", model)
    interrupted = _cli(*_evaluate_args(world, lab, model), failpoint="cache:computed", signal_kind="INT")
    assert interrupted.returncode == 130
    assert interrupted.stderr.strip().splitlines() == [f"unlearning evaluate: {INTERRUPTED}"]
    assert not list((model / "metrics").glob("*.json"))


# --- a papermill chapter ----------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def chapter(world, target_state, tokenizer, tmp_path_factory):
    """Chapter 0 (two runs, MASC and GradDiff) as the Makefile gives it to `unlearning execute`,
    and a folder that looks like a smoke checkout to it: data, a tokenizer, a target and an oracle."""
    import jupytext

    from unlearning.models import build_model

    root = tmp_path_factory.mktemp("chapter")
    notebook = root / "00-pipeline.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / "00-pipeline.py"), notebook)
    model = build_model("xs", tokenizer, seed=0)
    model.load_state_dict(target_state)

    def checkout(name: str) -> Path:
        folder = root / name
        shutil.copytree(world, folder / "data" / "smoke")
        tokenizer.save_pretrained(folder / "models" / "smoke" / "tokenizer")
        for model_name in ("tofu/target-xs", "tofu/retain90-xs"):
            save_model(model, folder / "models" / "smoke" / model_name)
        return folder

    return notebook, checkout


def _execute(notebook: Path, cwd: Path, failpoint=None, wait=True):
    env = dict(ENV)
    if failpoint:
        env["UNLEARNING_FAILPOINT"] = failpoint
    command = [sys.executable, "-m", "unlearning.cli", "execute", str(notebook), "--out",
               str(cwd / "book" / "generated" / "00-pipeline.ipynb"), "--profile", "smoke", "--parameters",
               str(ROOT / "notebooks" / "profiles" / "smoke" / "00-pipeline.yaml")]
    if not wait:
        return subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _is_whole_page(page: Path) -> bool:
    """An executed notebook that ran to its end: every code cell has an execution count."""
    executed = json.loads(page.read_text())
    return all(c.get("execution_count") for c in executed["cells"] if c["cell_type"] == "code")


def _runs(store: Path) -> dict:
    out = {}
    for record_path in sorted(store.glob("*/record.json")):
        out[record_path.parent.name] = (without_cost(json.loads(record_path.read_text())), _weights(record_path.parent / "model"))
    return out


@pytest.fixture(scope="module")
def chapter_reference(chapter):
    notebook, checkout = chapter
    folder = checkout("reference")
    start = time.monotonic()
    done = _execute(notebook, folder)
    assert done.returncode == 0, done.stderr
    return _runs(folder / "runs" / "smoke"), time.monotonic() - start


def test_a_chapter_whose_kernel_dies_after_one_run_leaves_no_page_and_the_rerun_does_the_rest(chapter, chapter_reference):
    notebook, checkout = chapter
    folder = checkout("kernel-killed")
    page = folder / "book" / "generated" / "00-pipeline.ipynb"
    killed = _execute(notebook, folder, failpoint="run:recorded@1")  # the kernel dies right after MASC's record
    assert killed.returncode == 1 and "00-pipeline" in killed.stderr
    assert not page.exists() and not list(page.parent.glob("*.ipynb"))  # no page, no temporary file left
    assert len(_runs(folder / "runs" / "smoke")) == 1  # MASC's run is finished and kept
    again = _execute(notebook, folder)
    assert again.returncode == 0, again.stderr
    assert page.is_file() and _runs(folder / "runs" / "smoke") == chapter_reference[0]
    assert _is_whole_page(page)


def test_a_chapter_killed_at_a_random_moment_is_redone_exactly(chapter, chapter_reference):
    notebook, checkout = chapter
    folder = checkout("random")
    page = folder / "book" / "generated" / "00-pipeline.ipynb"
    runs, duration = chapter_reference
    # killed somewhere between a fifth and nine tenths of an uninterrupted run's time on this machine
    process = _execute(notebook, folder, wait=False)
    time.sleep(random.Random(20).uniform(0.2, 0.9) * duration)
    _kill_group(process, signal.SIGKILL)  # papermill and its kernel
    process.communicate()
    if page.exists():  # only ever a whole page: one that ran to its end
        assert _is_whole_page(page)
    again = _execute(notebook, folder)
    assert again.returncode == 0, again.stderr
    assert _runs(folder / "runs" / "smoke") == runs
