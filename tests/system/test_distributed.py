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


def _store_runs(store: Path) -> list[Path]:
    return sorted(p.parent for p in store.glob("*/record.json"))


def test_accelerate_launch_of_the_cli_writes_one_run_equal_to_one_process(world, target, tokenizer, tmp_path):
    """`accelerate launch` of `unlearning unlearn` as two CPU processes: they form one group
    (gloo), share every global batch, and the main process alone writes one model and one record,
    equal to a single process that accumulates the same global batch. accelerate 1.x starts a
    single process for `--cpu --num_processes 2` unless MPI is set up, so the group is launched
    with its torchrun launcher (`--multi_gpu`) and `--device cpu` (gloo, no GPU needed)."""
    from unlearning.cli import main

    save_model(target, tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "tok")
    common = ["unlearn", "--data", str(world / "tofu"), "--model", str(tmp_path / "model"), "--tokenizer",
              str(tmp_path / "tok"), "--method", "NPO+GD", "--rule", "sago", "--max-steps", "3", "--batch-size", "4",
              "--lr", "1e-2", "--optimizer", "sgd", "--device", "cpu"]
    assert main(common + ["--grad-accum", "2", "--store", str(tmp_path / "one")]) == 0
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
              "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
              "-m", "unlearning.cli"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "UNLEARNING_PROGRESS": "0"}
    done = subprocess.run(launch + common + ["--store", str(tmp_path / "two")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("NPO+GD (sago) on tofu: 3 steps") == 1  # the main process reports, once
    (one,), (two,) = _store_runs(tmp_path / "one"), _store_runs(tmp_path / "two")
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == [two.name]  # one run folder, nothing else
    a, b = json.loads((one / "record.json").read_text()), json.loads((two / "record.json").read_text())
    assert a["runtime"]["processes"] == 1 and b["runtime"]["processes"] == 2 and b["optim"]["grad_accum"] == 1
    for x, y in zip(a["log"], b["log"]):
        assert x["forget_loss"] == pytest.approx(y["forget_loss"], rel=1e-5)
        assert x["retain_loss"] == pytest.approx(y["retain_loss"], rel=1e-5)
    single, group = load_file(str(one / "model" / "model.safetensors")), load_file(str(two / "model" / "model.safetensors"))
    assert single.keys() == group.keys()
    for name in single:
        assert torch.allclose(single[name], group[name], atol=1e-6), name
    assert max(float((single[n] - target.state_dict()[n]).abs().max()) for n in single) > 1e-4  # it trained


def test_the_trainer_drop_ins_under_accelerate_launch_equal_one_process(world, target, tokenizer, splits, tmp_path):
    """transformers' `Trainer` with `GradientSynthesisMixin` (SAGO) and `MascStopCallback`, launched
    as two CPU processes by `accelerate launch` (tests/system/hf_worker.py): every process stops at
    the step the main process's probe decides, and the losses, probes, stop step and weights equal one
    engine process that accumulates the same global batch (two micro-batches) and stops by the same rule."""
    from hf_worker import LR, PROBE, TOLERANCE
    from unlearning.stopping import ViolationStop

    save_model(target, tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "tok")
    out = tmp_path / "hf"
    out.mkdir()
    tests = Path(__file__).parents[1]
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
              "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
              str(Path(__file__).with_name("hf_worker.py")), str(tmp_path / "model"), str(tmp_path / "tok"),
              str(world / "tofu"), str(out), "30"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": f"{tests}{os.pathsep}{Path(__file__).parent}"}
    done = subprocess.run(launch, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    info = json.loads((out / "info.json").read_text())

    single = load_model(tmp_path / "model")
    spec = get_method("GradDiff")
    result = unlearn(single, spec, spec.hparams(), splits["forget10"], splits["retain90"], pad_token_id=tokenizer.pad_token_id,
                     rule="sago", max_steps=30, stop=ViolationStop(TOLERANCE, 2, 4, 8), probe_examples=splits["forget10"][:8],
                     probe_hparams=PROBE, optim=OptimConfig(lr=LR, batch_size=2, grad_accum=2, decay_groups="trainer",
                                                            weight_decay=0.01, max_grad_norm=1.0), seed=0)
    assert result.stopped and result.stop_step > 2
    assert (info["processes"], info["steps"], info["stop_step"]) == (2, result.stop_step, result.stop_step)
    assert [(s, stage, n) for s, stage, n, _ in info["probes"]] == [(s, stage, n) for s, stage, n, _ in result.probes]
    assert [r for *_, r in info["probes"]] == pytest.approx([r for *_, r in result.probes], abs=1e-6)
    assert [x for pair in info["losses"] for x in pair] == \
        pytest.approx([e[k] for e in result.log for k in ("forget_loss", "retain_loss")], abs=1e-6)
    weights = load_file(str(out / "weights.safetensors"))
    for name, value in single.state_dict().items():
        assert torch.allclose(weights[name], value, rtol=0, atol=1e-6), name
