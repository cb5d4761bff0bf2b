"""Results that cannot go stale (issue 19): every cached thing is keyed by all that determines it.

A small laboratory (learned models with their gates, an unlearning run, four TOFU evaluations and
a 4-bit copy, `staleness_driver.py`) is built by a copy of the package. Then one input at a time
is changed, for real (a data file, a learning-stage setting, and the source code of a metric, a
gate, the quantizer, the unlearning and the learning code, in the copy), the driver runs again,
and the test checks that exactly the entries that depend on the change were written again and
every other one was read back.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("staleness_driver.py")
PLAN = ("sizes: [xs]\nmain_size: xs\npretrain: {epochs: 1, lr: 0.003, batch_size: 32}\n"
        "finetune: {epochs: 1, lr: 0.003, batch_size: 16}\noracles: [retain90]\nmain_oracles: []\nmuse: []\n"
        "vocab_size: 256\nseed: 0\n")


def _entries(root: Path) -> dict[Path, tuple[str, int]]:
    """Every stored result by its file: a readable name and when it was written. Learned models
    (learning.json, which holds the gates), run records, evaluations and 4-bit copies."""
    found = {}
    for path in root.glob("models/**/learning.json"):
        found[path] = f"model {path.parent.relative_to(root / 'models')}"
    for path in root.glob("runs/*/record.json"):
        found[path] = f"run {json.loads(path.read_text())['method']}"
    for path in root.glob("runs/quantized/*/config.json"):
        found[path] = "4-bit copy"
    for path in root.glob("**/metrics/*.json"):
        found[path] = f"evaluation of {_evaluated(root, path)}"
    return {path: (name, path.stat().st_mtime_ns) for path, name in found.items()}


def _evaluated(root: Path, metrics_file: Path) -> str:
    model = metrics_file.parent.parent.relative_to(root)
    if model.parts[0] == "models":
        return "/".join(model.parts[1:])
    return "4-bit copy" if model.parts[1] == "quantized" else "run GA"


def _edit_function(path: Path, name: str) -> None:
    """Insert a statement at the top of function `name` in `path`: its code changes, its result does not."""
    lines = path.read_text().splitlines(keepends=True)
    node = next(n for n in ast.walk(ast.parse("".join(lines))) if isinstance(n, ast.FunctionDef) and n.name == name)
    first = node.body[0]
    lines.insert(first.lineno - 1, " " * first.col_offset + "_edited = True  # a test's edit\n")
    path.write_text("".join(lines))


@pytest.fixture(scope="module")
def laboratory(world, tmp_path_factory):
    top = tmp_path_factory.mktemp("staleness")
    for package in ("unlearning", "laboratory", "experiments"):
        shutil.copytree(ROOT / "src" / package, top / "src" / package, ignore=shutil.ignore_patterns("__pycache__"))
    root = top / "lab"
    for benchmark in ("tofu", "pretrain", "wmdp", "rwku"):
        shutil.copytree(world / benchmark, root / "data" / benchmark)
    (root / "learn.yaml").write_text(PLAN)
    return top, root


def _rebuild(top: Path, root: Path) -> set[str]:
    """Run the driver; the entries it wrote (new, or written again)."""
    before = _entries(root)
    env = {**os.environ, "PYTHONPATH": str(top / "src"), "OMP_NUM_THREADS": "1", "UNLEARNING_PROGRESS": "0"}
    done = subprocess.run([sys.executable, str(DRIVER), str(root)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    written = [name for path, (name, time) in _entries(root).items() if before.get(path, (name, None))[1] != time]
    assert len(written) == len(set(written)), f"an entry written twice: {sorted(written)}"
    return set(written)


EVALUATIONS = {"evaluation of tofu/target-xs", "evaluation of tofu/retain90-xs", "evaluation of run GA",
               "evaluation of 4-bit copy"}
TOFU_MODELS = {"model tofu/target-xs", "model tofu/retain90-xs"}
EVERYTHING = {"model base-xs", *TOFU_MODELS, "run GA", "4-bit copy", *EVALUATIONS}


def _change_data(root: Path, top: Path) -> None:
    path = root / "data" / "tofu" / "forget10.json"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["answer"] += " Indeed."
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


def _change_learning_setting(root: Path, top: Path) -> None:
    (root / "learn.yaml").write_text(PLAN.replace("finetune: {epochs: 1", "finetune: {epochs: 2"))


def _source(relative: str, function: str, package: str = "unlearning"):
    return lambda root, top: _edit_function(top / "src" / package / relative, function)


# (what changes, the change, the entries that must be written again); each step starts from the last
CHANGES = [
    ("nothing", lambda root, top: None, set()),
    # forget10 is read by the run and by every TOFU evaluation, by no model (they learn `full`)
    ("a data file (tofu forget10)", _change_data, {"run GA", *EVALUATIONS}),
    ("a metric's code (metrics/tofu.py)", _source("metrics/tofu.py", "truth_ratio"), EVALUATIONS),
    # the gates are re-measured on the models they judge; no model is trained, nothing downstream moves
    ("a gate's code (benchmarks/tofu.py gates)", _source("benchmarks/tofu.py", "gates"), TOFU_MODELS),
    ("the quantizer (quantize.py)", _source("quantize.py", "round_trip_4bit"), {"4-bit copy", "evaluation of 4-bit copy"}),
    # the unlearning code: the run again, so its model is measured again; nothing learned or quantized moves
    ("the unlearning code (losses.py)", _source("losses.py", "ga_loss"), {"run GA", "evaluation of run GA"}),
    # the learning code: every model is trained again, to the same weights, so nothing downstream is redone
    ("the learning code (family.train_causal_lm)", _source("family.py", "train_causal_lm", "laboratory"),
     {"model base-xs", *TOFU_MODELS}),
    # a learning-stage setting of the TOFU fine-tunes: new target and oracle, so everything after them
    ("a learning-stage setting (finetune epochs)", _change_learning_setting, EVERYTHING - {"model base-xs"}),
]


def test_exactly_the_dependent_entries_are_recomputed(laboratory):
    top, root = laboratory
    assert _rebuild(top, root) == EVERYTHING  # the first build computes everything
    for what, change, expected in CHANGES:
        change(root, top)
        assert _rebuild(top, root) == expected, f"after changing {what}"
