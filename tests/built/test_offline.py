"""A smoke chapter runs with the network blocked (issue 19): the smoke and mini profiles never touch it.

Every Python process of the run (the `experiments execute` command, papermill and the chapter's
kernel) starts with a `sitecustomize` that refuses any socket connection or name lookup that
leaves the machine and logs it; loopback stays open, since papermill talks to its kernel over it.
The chapter (12-rwku: five unlearning runs and their evaluations) runs in a scratch copy of the
smoke laboratory with an empty run store and no cached evaluation, so everything is computed,
not read back; no hub variable (HF_HUB_OFFLINE and the like) is set, so nothing is hidden.

`make test` runs this after the smoke book is built (it needs models/smoke).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "12-rwku"

if not (ROOT / "models" / "smoke" / "manifest.json").is_file():
    pytest.skip("no smoke models (make models PROFILE=smoke)", allow_module_level=True)

BLOCKER = '''
import os, socket

_LOG = os.environ["NETWORK_LOG"]
_LOCAL = {"127.0.0.1", "::1", "localhost", "0.0.0.0", ""}


def _refuse(what):
    with open(_LOG, "a") as handle:
        handle.write(f"{os.getpid()} {what}\\n")
    raise OSError(f"network blocked by the test: {what}")


def _guard(original):
    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and str(address[0]) not in _LOCAL:
            _refuse(f"connect {address!r}")
        return original(self, address)
    return connect


socket.socket.connect = _guard(socket.socket.connect)
socket.socket.connect_ex = _guard(socket.socket.connect_ex)
_getaddrinfo = socket.getaddrinfo


def getaddrinfo(host, *args, **kwargs):
    if host is not None and str(host) not in _LOCAL:
        _refuse(f"lookup {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = getaddrinfo
'''


def _scratch_laboratory(folder: Path) -> None:
    """data/smoke and models/smoke (without the real model's fine-tunes and without cached evaluations)."""
    shutil.copytree(ROOT / "data" / "smoke", folder / "data" / "smoke")
    shutil.copytree(ROOT / "models" / "smoke", folder / "models" / "smoke",
                    ignore=shutil.ignore_patterns("tofu-real", "metrics", "*.tmp"))


def test_a_smoke_chapter_computes_everything_with_the_network_blocked(tmp_path):
    import jupytext

    _scratch_laboratory(tmp_path)
    (tmp_path / "blocker").mkdir()
    (tmp_path / "blocker" / "sitecustomize.py").write_text(BLOCKER)
    notebook = tmp_path / f"{CHAPTER}.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / f"{CHAPTER}.py"), notebook)
    log = tmp_path / "network.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "UNLEARNING_FAILPOINT"))}
    env.update(PYTHONPATH=str(tmp_path / "blocker"), NETWORK_LOG=str(log), UNLEARNING_PROGRESS="0")
    page = tmp_path / "book" / "generated" / f"{CHAPTER}.ipynb"
    done = subprocess.run([sys.executable, "-m", "experiments.cli", "execute", str(notebook), "--out", str(page),
                           "--profile", "smoke", "--parameters",
                           str(ROOT / "notebooks" / "profiles" / "smoke" / f"{CHAPTER}.yaml")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not log.exists(), log.read_text()  # nothing tried to leave the machine
    # the blocker is in force for every Python started with this environment (the kernel is one),
    # and the chapter computed its runs and evaluations rather than reading them back
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('192.0.2.1', 80), 1)"],
                           env=env, capture_output=True, text=True)
    assert "network blocked by the test" in probe.stderr
    log.unlink()
    runs = list((tmp_path / "runs" / "smoke").glob("*/record.json"))
    evaluations = list((tmp_path / "models" / "smoke").glob("**/metrics/*.json")) + \
        list((tmp_path / "runs" / "smoke").glob("**/metrics/*.json"))
    assert len(runs) >= 5 and len(evaluations) >= 5, (len(runs), len(evaluations))
    executed = json.loads(page.read_text())
    assert all(c.get("execution_count") for c in executed["cells"] if c["cell_type"] == "code")
