"""Records (`unlearning.records`): atomic, key-sorted JSON; written only on change; YAML mappings read
with one-line errors; the library versions that determine the numbers."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import unlearning
from unlearning.records import read_json, read_yaml_mapping, versions, write_if_changed, write_json


@dataclass
class Point:
    x: int
    where: Path


def test_records_are_indented_sorted_json_and_serialise_dataclasses_and_paths(tmp_path):
    path = tmp_path / "deep" / "record.json"
    write_json(path, {"b": Point(1, Path("/m")), "a": [1.5]})
    assert path.read_text() == '{\n  "a": [\n    1.5\n  ],\n  "b": {\n    "where": "/m",\n    "x": 1\n  }\n}\n'
    assert read_json(path) == {"a": [1.5], "b": {"where": "/m", "x": 1}}
    assert [p.name for p in path.parent.iterdir()] == ["record.json"]  # the temporary file was renamed
    with pytest.raises(TypeError, match="cannot serialise set in a record"):
        write_json(tmp_path / "bad.json", {"s": {1}})


def test_a_record_is_rewritten_only_when_its_content_changes(tmp_path):
    path = tmp_path / "manifest.json"
    assert write_if_changed(path, {"a": Path("x")})
    stamp = path.stat().st_mtime_ns
    assert not write_if_changed(path, {"a": "x"})  # the same JSON: left alone, make sees no new time
    assert path.stat().st_mtime_ns == stamp
    assert write_if_changed(path, {"a": "y"}) and json.loads(path.read_text()) == {"a": "y"}


@pytest.mark.parametrize("text, message", [
    ("a: [1,\n", r"not valid YAML \(line 2\)"),
    ("- 1\n- 2\n", "must hold a mapping of names to values, got list"),
])
def test_a_yaml_file_must_hold_a_mapping(tmp_path, text, message):
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_yaml_mapping(path)


def test_an_empty_yaml_file_is_an_empty_mapping_and_the_caller_chooses_the_error(tmp_path):
    empty, bad = tmp_path / "empty.yaml", tmp_path / "bad.yaml"
    empty.write_text("# nothing set\n")
    bad.write_text("7\n")

    class ProfileError(ValueError):
        pass

    assert read_yaml_mapping(empty) == {}
    with pytest.raises(ProfileError, match=f"^{bad}: must hold a mapping"):
        read_yaml_mapping(bad, ProfileError)


def test_versions_name_the_libraries_that_determine_the_numbers():
    found = versions()
    assert set(found) == {"python", "torch", "transformers", "tokenizers", "unlearning"}
    assert found["torch"] == torch.__version__ and found["unlearning"] == unlearning.__version__
