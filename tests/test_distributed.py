"""Data parallelism: two CPU processes (gloo) give the same update as one process that
accumulates the same two micro-batches (issue: results must not depend on the process count)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from unlearning.engine import OptimConfig, unlearn
from unlearning.methods import get_method
from unlearning.models import load_model, save_model


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(("method", "rule"), [("GradDiff", "sum"), ("NPO+GD", "sago")])
def test_two_processes_equal_one_process_with_accumulation(world, target, tokenizer, splits, tmp_path, method, rule):
    save_model(target, tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "tok")
    out = tmp_path / "ddp"
    out.mkdir()
    worker = Path(__file__).with_name("ddp_worker.py")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parent)}
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(_free_port()),
               str(worker), str(tmp_path / "model"), str(tmp_path / "tok"), str(world / "tofu"), method, rule, str(out)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((out / "info.json").read_text()) == {"processes": 2, "steps": 3}

    single = load_model(tmp_path / "model")
    spec = get_method(method)
    unlearn(single, spec, spec.hparams(), splits["forget10"], splits["retain90"], pad_token_id=tokenizer.pad_token_id,
            rule=rule, max_steps=3, optim=OptimConfig(lr=1e-2, batch_size=2, optimizer="sgd", grad_accum=2), seed=0)
    ddp = load_file(str(out / "weights.safetensors"))
    moved = 0.0
    for name, value in single.state_dict().items():
        assert torch.allclose(ddp[name], value, atol=1e-6), name
        moved = max(moved, float((value - target.state_dict()[name]).abs().max()))
    assert moved > 1e-4  # the runs really trained
