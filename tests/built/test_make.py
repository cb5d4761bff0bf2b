"""The Makefile as a user meets it (issue 19): what is stale is redone and nothing else, and two
makes started at once in one checkout do not corrupt each other's files.

`make test` runs this after the smoke book is built, inside its own locked make: the makes started
here take another lock file (MAKE_LOCK) and drop the outer make's UNLEARNING_MAKE_LOCK, so they
lock against each other only.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if not (ROOT / "book" / "_build" / "html" / "index.html").is_file():
    pytest.skip("no built book (make book PROFILE=smoke)", allow_module_level=True)


# the tests' own makes stamp nowhere: the build's timeline (`perf/timeline.py`) is the build's alone
QUIET_TIMELINE = "TIMELINE=/dev/null"


def _make(*args, env=None, **kwargs):
    return subprocess.run(["make", "--no-print-directory", "PROFILE=smoke", QUIET_TIMELINE, *args], cwd=ROOT,
                          env=env or os.environ, capture_output=True, text=True, **kwargs)


def _stale(target: str, *newer: str) -> bool:
    """Would make execute the chapter `target` again if the files `newer` had just changed?
    (`make -n -W`: the commands it would run are printed, nothing runs)"""
    flags = [f"--what-if={path}" for path in newer]
    done = _make("-n", *flags, target)
    assert done.returncode == 0, done.stderr
    chapter = Path(target).stem
    return f"experiments execute build/notebooks/{chapter}.ipynb" in done.stdout


@pytest.mark.parametrize("chapter, changed, stale", [
    ("11-wmdp", "data/smoke/wmdp/bio-forget-corpus.json", True),  # its data
    ("11-wmdp", "notebooks/profiles/smoke/11-wmdp.yaml", True),  # its parameters
    ("11-wmdp", "notebooks/11-wmdp.py", True),                   # its source
    ("11-wmdp", "src/unlearning/metrics/choice.py", True),       # the library (its runs are then read back)
    ("11-wmdp", "src/experiments/retention.py", True),           # the book's experiment layer
    ("11-wmdp", "notebooks/06-tofu.py", False),                  # another chapter's source
    ("11-wmdp", "notebooks/profiles/smoke/06-tofu.yaml", False),  # another chapter's parameters
    ("06-tofu", "data/smoke/tofu/forget10.json", True),
])
def test_an_executed_chapter_is_redone_exactly_when_what_it_depends_on_changes(chapter, changed, stale):
    target = f"book/generated/{chapter}.ipynb"
    assert (ROOT / changed).is_file(), changed
    assert not _stale(target), f"{target} is not up to date after make book"
    assert _stale(target, changed) == stale


def _wait_until_held(lock: Path, holder: subprocess.Popen) -> None:
    """Wait for an event, not for a time: the lock file names its holder once the first make
    holds the lock (makelock writes the line after taking it)."""
    while not (lock.is_file() and lock.read_text().startswith("pid ")):
        assert holder.poll() is None, "the first make ended before it took the lock"
        time.sleep(0.05)


def test_two_make_books_at_once_wait_for_each_other_and_leave_a_whole_book(tmp_path):
    """Chapter 1 made stale (its source touched), then two `make book` started together: the
    second waits for the first, finds chapter 1 done and executes nothing; both succeed and the
    page is whole."""
    source = ROOT / "notebooks" / "01-pipeline.py"
    os.utime(source)
    env = {k: v for k, v in os.environ.items() if k != "UNLEARNING_MAKE_LOCK"}
    env["MAKE_LOCK"] = str(tmp_path / "make.lock")
    command = ["make", "--no-print-directory", "PROFILE=smoke", QUIET_TIMELINE, f"MAKE_LOCK={tmp_path / 'make.lock'}", "book"]
    first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_until_held(tmp_path / "make.lock", first)
    second = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outputs = [process.communicate(timeout=1200) for process in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    executed = [out for out, _ in outputs if "experiments execute build/notebooks/01-pipeline.ipynb" in out]
    assert len(executed) == 1, "chapter 1 was executed once, by the first make"
    assert "waiting for the make already running in this checkout" in outputs[1][1]
    page = json.loads((ROOT / "book" / "generated" / "01-pipeline.ipynb").read_text())
    assert all(c.get("execution_count") for c in page["cells"] if c["cell_type"] == "code")
    assert (ROOT / "book" / "_build" / "html" / "generated" / "01-pipeline.html").is_file()
    assert not _stale("book/generated/01-pipeline.ipynb")
