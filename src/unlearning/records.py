"""Run records: what ran (config, hashes, versions), how long it took, and what it logged.

Records are JSON written atomically (temporary name, then rename), so an interrupted run
never leaves a half-written file that a later step could mistake for a result.
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, is_dataclass
from pathlib import Path

import yaml

# Imports inside functions: only `versions` needs torch and transformers; the commands read and write
# records before they import them (their fast start).


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write `text` through a temporary file and a rename: a reader sees the old file or the new
    one, never a part (the temporary name is one per process, so concurrent writers never share it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_json(path: str | Path, obj) -> None:
    """Write `obj` as indented, key-sorted JSON, atomically (`write_text_atomically`)."""
    write_text_atomically(path, json.dumps(obj, indent=2, sort_keys=True, default=_default) + "\n")


def write_if_changed(path: str | Path, obj) -> bool:
    """Write `obj` only when its content differs, so make sees a new time only on change."""
    path = Path(path)
    if path.is_file() and read_json(path) == json.loads(json.dumps(obj, default=_default)):
        return False
    write_json(path, obj)
    return True


def read_json(path: str | Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _default(value):
    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot serialise {type(value).__name__} in a record")


def versions() -> dict[str, str]:
    """Versions of the libraries that determine the numbers."""
    import tokenizers
    import torch
    import transformers

    import unlearning

    return {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__, "unlearning": unlearning.__version__}


def read_yaml_mapping(path: str | Path, error: type[ValueError] = ValueError) -> dict:
    """A YAML file that must hold a mapping (an empty file is an empty one); anything else raises
    `error` with one line naming the file (the book passes its notebook-friendly ParameterError)."""
    try:
        values = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as problem:
        mark = getattr(problem, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise error(f"{path}: not valid YAML{where}") from None
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise error(f"{path}: must hold a mapping of names to values, got {type(values).__name__}")
    return values
