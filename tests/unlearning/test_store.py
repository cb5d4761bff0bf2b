"""The content-addressed store (`unlearning.store`): each key primitive against a slow, obvious
reference written here, and the caching rules (computed once, stale records noticed, released weights
still answer with their hash)."""

import hashlib
import json
import os
from pathlib import PurePosixPath

import pytest

from unlearning import store
from unlearning.losses import masc_objective
from unlearning.store import (cached, code_closure, content_key, file_hash, is_released, release_weights, weight_files,
                              weights_hash)


def test_file_hash_is_sha256_over_the_files_bytes_in_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"x" * (3 << 20) + b"tail")  # longer than one read chunk (1 MiB)
    b.write_bytes(b"second")
    assert file_hash(a, b) == hashlib.sha256(a.read_bytes() + b.read_bytes()).hexdigest()
    assert file_hash(b, a) != file_hash(a, b)
    assert file_hash() == hashlib.sha256(b"").hexdigest()


def test_content_key_is_sha256_of_the_sorted_json_of_its_parts():
    expected = hashlib.sha256(b'{"a": [1, 2], "b": "x"}').hexdigest()
    assert content_key(b="x", a=[1, 2]) == content_key(a=[1, 2], b="x") == expected
    assert content_key(a=[1, 2], b="y") != expected
    assert content_key(path=PurePosixPath("/models/t")) == content_key(path="/models/t")  # default=str


def _model_folder(path, *contents: bytes):
    path.mkdir()
    for i, content in enumerate(contents):
        (path / f"model-{i:05d}.safetensors").write_bytes(content)
    (path / "config.json").write_text("{}")
    return path


def test_weights_hash_covers_the_safetensors_files_only_and_is_remembered(tmp_path):
    model = _model_folder(tmp_path / "m", b"first", b"second")
    expected = hashlib.sha256(b"firstsecond").hexdigest()
    assert [f.name for f in weight_files(model)] == ["model-00000.safetensors", "model-00001.safetensors"]
    assert weights_hash(model) == expected
    record = json.loads((model / store.WEIGHTS_RECORD).read_text())
    assert record["sha256"] == expected and set(record["files"]) == {"model-00000.safetensors", "model-00001.safetensors"}
    (model / "config.json").write_text('{"changed": true}')  # not a weight: the hash stays
    assert weights_hash(model) == expected


def test_a_changed_weight_file_is_hashed_again_and_a_stale_record_is_not_trusted(tmp_path):
    model = _model_folder(tmp_path / "m", b"first")
    before = weights_hash(model)
    weights = model / "model-00000.safetensors"
    weights.write_bytes(b"other!")  # a new size
    assert weights_hash(model) == hashlib.sha256(b"other!").hexdigest() != before
    # same size, a new modification time: the record's stamp no longer matches, so the bytes are read
    weights.write_bytes(b"OTHER!")
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert weights_hash(model) == hashlib.sha256(b"OTHER!").hexdigest()
    (model / store.WEIGHTS_RECORD).write_text("not json")  # a torn record is recomputed, not read
    assert weights_hash(model) == hashlib.sha256(b"OTHER!").hexdigest()


def test_a_folder_without_weights_is_an_error_unless_they_were_released(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no safetensors"):
        weights_hash(empty)
    model = _model_folder(tmp_path / "m", b"12345", b"678")
    digest = weights_hash(model)
    assert not is_released(model)
    assert release_weights(model) == 8  # bytes freed
    assert weight_files(model) == [] and is_released(model) and weights_hash(model) == digest
    assert (model / "config.json").is_file()
    assert release_weights(model) == 0 and not is_released(empty)


def test_cached_computes_once_and_reads_back(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}

    path = tmp_path / "deep" / "result.json"
    messages = []
    assert cached(path, compute, log=messages.append) == {"value": 1}
    assert cached(path, compute, log=messages.append) == {"value": 1}
    assert calls == [1] and messages == [f"wrote {path}", f"cached: {path}"]
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]  # no temporary file left


def test_code_closure_follows_the_names_a_function_uses_across_project_modules():
    closure = code_closure(masc_objective)
    assert ("unlearning/losses.py", "masc_objective") in closure
    assert ("unlearning/losses.py", "masc_loss") in closure  # called in the same module
    # imported from unlearning.margin at the module's head, and reached through it
    assert ("unlearning/margin.py", "shifted_margins") in closure and ("unlearning/margin.py", "tau_from_rho") in closure
    # what the objective does not reach stays out: the losses' other objectives
    assert ("unlearning/losses.py", "npo_loss") not in closure and ("unlearning/losses.py", "ga_loss") not in closure
