"""Interruption of a chapter (papermill and its kernel).

A command killed (SIGKILL) or interrupted (Ctrl-C) before, during or after its final writes
leaves nothing that a rerun takes as done, and the rerun produces exactly what an
uninterrupted run does (issue 19). Real subprocesses, killed at named points
(`unlearning.failpoints`) and at a random moment within the uninterrupted command's own time;
the helpers are in `processes.py`."""

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import ENV, ROOT, kill_group, stored_runs

from unlearning.models import save_model


@pytest.fixture(scope="module")
def chapter(world, target_state, tokenizer, tmp_path_factory):
    """Chapter 1 (two runs, MASC and GradDiff) as the Makefile gives it to `experiments execute`,
    and a folder that looks like a smoke checkout to it: data, a tokenizer, a target and an oracle."""
    import jupytext

    from laboratory.family import build_model

    root = tmp_path_factory.mktemp("chapter")
    notebook = root / "01-pipeline.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / "01-pipeline.py"), notebook)
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
    command = [sys.executable, "-m", "experiments.cli", "execute", str(notebook), "--out",
               str(cwd / "book" / "generated" / "01-pipeline.ipynb"), "--profile", "smoke", "--parameters",
               str(ROOT / "notebooks" / "profiles" / "smoke" / "01-pipeline.yaml")]
    if not wait:
        return subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _is_whole_page(page: Path) -> bool:
    """An executed notebook that ran to its end: every code cell has an execution count."""
    executed = json.loads(page.read_text())
    return all(c.get("execution_count") for c in executed["cells"] if c["cell_type"] == "code")


@pytest.fixture(scope="module")
def chapter_reference(chapter):
    notebook, checkout = chapter
    folder = checkout("reference")
    start = time.monotonic()
    done = _execute(notebook, folder)
    assert done.returncode == 0, done.stderr
    return stored_runs(folder / "runs" / "smoke"), time.monotonic() - start


def test_a_chapter_whose_kernel_dies_after_one_run_leaves_no_page_and_the_rerun_does_the_rest(chapter, chapter_reference):
    notebook, checkout = chapter
    folder = checkout("kernel-killed")
    page = folder / "book" / "generated" / "01-pipeline.ipynb"
    killed = _execute(notebook, folder, failpoint="run:recorded@1")  # the kernel dies right after MASC's record
    assert killed.returncode == 1 and "01-pipeline" in killed.stderr
    assert not page.exists() and not list(page.parent.glob("*.ipynb"))  # no page, no temporary file left
    assert len(stored_runs(folder / "runs" / "smoke")) == 1  # MASC's run is finished and kept
    again = _execute(notebook, folder)
    assert again.returncode == 0, again.stderr
    assert page.is_file() and stored_runs(folder / "runs" / "smoke") == chapter_reference[0]
    assert _is_whole_page(page)


def test_a_chapter_killed_at_a_random_moment_is_redone_exactly(chapter, chapter_reference):
    notebook, checkout = chapter
    folder = checkout("random")
    page = folder / "book" / "generated" / "01-pipeline.ipynb"
    runs, duration = chapter_reference
    # killed somewhere between a fifth and nine tenths of an uninterrupted run's time on this machine
    process = _execute(notebook, folder, wait=False)
    time.sleep(random.Random(20).uniform(0.2, 0.9) * duration)
    kill_group(process, signal.SIGKILL)  # papermill and its kernel
    process.communicate()
    if page.exists():  # only ever a whole page: one that ran to its end
        assert _is_whole_page(page)
    again = _execute(notebook, folder)
    assert again.returncode == 0, again.stderr
    assert stored_runs(folder / "runs" / "smoke") == runs
