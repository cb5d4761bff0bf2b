"""The learning stage's workers (`laboratory learn --jobs`): models trained in worker processes are
bit-identical to those trained in this one (a process start per worker, hence a system test)."""

import json

import pytest
import torch

from laboratory.learning import JOB_THREADS, LearnPlan, learn
from unlearning.models import load_model

from helpers import TINY_PLAN as TINY


def test_parallel_workers_give_the_same_models_as_one(learned, world, tmp_path):
    """Every job trains with JOB_THREADS threads, in a worker or not: same thread count, same
    machine, same seed, so the models are bit-identical (the promise PyTorch makes)."""
    out, manifest = learned
    messages = []
    parallel = learn(LearnPlan.from_dict(TINY), world, tmp_path, log=messages.append, workers=2)
    assert {name: entry["key"] for name, entry in parallel.items()} == {name: entry["key"] for name, entry in manifest.items()}
    assert sum(m.startswith("learned") for m in messages) == len(manifest)
    base_done = next(i for i, m in enumerate(messages) if m.startswith("learned base-xs in"))
    assert base_done < messages.index("learning tofu/target-xs ...")  # a child starts after its parent is saved
    for name in manifest:
        a, b = load_model(out / name), load_model(tmp_path / name)
        assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters())), name
        assert parallel[name]["gates"] == manifest[name]["gates"], name
        assert json.loads((tmp_path / name / "learning.json").read_text())["threads"] == JOB_THREADS
    with pytest.raises(ValueError, match="workers must be >= 1"):
        learn(LearnPlan.from_dict(TINY), world, tmp_path, workers=0)
