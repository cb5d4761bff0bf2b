"""Helpers of the system tests: the project's commands in a real subprocess, killed at a named
point (`unlearning.failpoints`) or interrupted, and the results compared file by file."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import command_module, without_cost

ROOT = Path(__file__).resolve().parents[2]
# one torch thread in every child: equal numbers need equal thread counts, and two children at
# two threads each would slow each other down on two cores
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "UNLEARNING_PROGRESS": "0", "TQDM_DISABLE": "1"}


def cli(*args, failpoint=None, signal_kind=None, wait=True):
    env = dict(ENV)
    env.pop("UNLEARNING_FAILPOINT", None)
    if failpoint:
        env["UNLEARNING_FAILPOINT"] = failpoint
    if signal_kind:
        env["UNLEARNING_FAILPOINT_SIGNAL"] = signal_kind
    command = [sys.executable, "-m", command_module(str(args[0])), *map(str, args)]
    if not wait:
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def weights(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()



def popen_group(*args, env_extra=None):
    """The CLI in a process group of its own (it and every worker it spawns), as a terminal runs it."""
    env = {**ENV, **(env_extra or {})}
    env.pop("UNLEARNING_FAILPOINT", None)
    return subprocess.Popen([sys.executable, "-m", command_module(str(args[0])), *map(str, args)], env=env,
                            start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def kill_group(process, sig) -> None:
    """Send `sig` to a process group, unless it already ended."""
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def stored_runs(store: Path) -> dict:
    """Every finished run of a store: its record (without costs) and the hash of its weights."""
    out = {}
    for record_path in sorted(store.glob("*/record.json")):
        out[record_path.parent.name] = (without_cost(json.loads(record_path.read_text())), weights(record_path.parent / "model"))
    return out
