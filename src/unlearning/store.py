"""The content-addressed store: one way to name what was computed, and to find it again.

Everything the project caches (learned models, unlearning runs, evaluations, 4-bit copies) is
stored under a key that hashes *all that determines it*: its input files, its parameters and
the code that computes it. A changed input gives a new key and is recomputed; an unchanged one
is read back. Three primitives build every key:

- `file_hash(*paths)`: SHA-256 over the bytes of files;
- `weights_hash(model_dir)`: the hash of a model folder's safetensors files, computed once and
  remembered beside the weights (`weights.sha256.json`, checked against the files' sizes and
  modification times), so a multi-GB checkpoint is not re-read on every lookup;
- `code_key(*functions)`: the source of functions and of every top-level function, class and
  constant of their module that they reach, so editing one gate does not invalidate an
  evaluation and editing a metric suite does;

and `content_key(**parts)` joins them into one key. `cached(path, compute)` writes a result
once, atomically, and reads it back afterwards.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from unlearning.failpoints import reached
from unlearning.records import read_json, write_json

WEIGHTS_RECORD = "weights.sha256.json"


def file_hash(*paths: str | Path) -> str:
    """SHA-256 over the bytes of files, in the given order."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def content_key(**parts) -> str:
    """SHA-256 of the parts as sorted JSON: the one key function of the store."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def weight_files(model_dir: str | Path) -> list[Path]:
    return sorted(Path(model_dir).glob("*.safetensors"))


def _stamp(files: list[Path]) -> dict[str, list[int]]:
    return {f.name: [f.stat().st_size, f.stat().st_mtime_ns] for f in files}


def weights_hash(model_dir: str | Path) -> str:
    """SHA-256 of a model folder's safetensors files; remembered in `weights.sha256.json` and
    recomputed only when a file's size or modification time changed. A folder whose weights were
    released (`release_weights`) answers with the hash it recorded."""
    files = weight_files(model_dir)
    record = Path(model_dir) / WEIGHTS_RECORD
    if not files:
        if is_released(model_dir):
            return read_json(record)["sha256"]
        raise FileNotFoundError(f"model: no safetensors weights in {model_dir}")
    stamp = _stamp(files)
    if record.is_file():
        try:
            known = read_json(record)
        except (OSError, ValueError):
            known = {}
        if known.get("files") == stamp:
            return known["sha256"]
    digest = file_hash(*files)
    try:
        write_json(record, {"files": stamp, "sha256": digest})
    except OSError:  # a read-only checkpoint: hash it again next time
        pass
    return digest


SOURCE_ROOT = Path(__file__).parent.parent  # src/: the project's packages side by side
# the project's packages, whose code a cache key follows (the library, the laboratory built on it
# and the book's experiment layer); third-party code is not followed
PROJECT_PACKAGES = ("unlearning", "laboratory", "experiments")


def _is_project_module(dotted: str | None) -> bool:
    return bool(dotted) and dotted.split(".")[0] in PROJECT_PACKAGES


def _module_file(dotted: str) -> Path | None:
    """The source file of a project module or package (None for other packages)."""
    if not _is_project_module(dotted):
        return None
    path = SOURCE_ROOT.joinpath(*dotted.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return path / "__init__.py" if (path / "__init__.py").is_file() else None


def _used_names(node: ast.AST) -> frozenset[str]:
    """Names a definition refers to, type annotations left out (they do not run)."""
    names, stack = set(), [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Name):
            names.add(current.id)
        for field_name, value in ast.iter_fields(current):
            if field_name in ("annotation", "returns"):
                continue
            if isinstance(value, list):
                stack += [v for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                stack.append(value)
    return frozenset(names)


@lru_cache(maxsize=None)
def _definitions(path: str, mtime_ns: int) -> dict[str, tuple]:
    """Top-level names of a source file: name -> ('def', source, names it uses, the
    `from <project package>... import`s in its body) for functions, classes and assignments;
    ('from', module, attribute) for a top-level one."""
    source = Path(path).read_text(encoding="utf-8")
    definitions = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and _is_project_module(node.module):
            for alias in node.names:
                definitions[alias.asname or alias.name] = ("from", node.module, alias.name)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
        else:
            continue
        text = "".join(ast.get_source_segment(source, d) or "" for d in getattr(node, "decorator_list", []))
        text += ast.get_source_segment(source, node) or ""
        used = _used_names(node)
        imports = tuple((n.module, alias.name) for n in ast.walk(node) if isinstance(n, ast.ImportFrom)
                        and _is_project_module(n.module) for alias in n.names)
        for name in names:
            definitions[name] = ("def", text, used, imports)
    return definitions


def _definitions_of(path: Path) -> dict[str, tuple]:
    return _definitions(str(path), path.stat().st_mtime_ns)


def code_closure(*functions: Callable) -> list[tuple[str, str]]:
    """What `code_key` hashes: (file relative to src/, top-level name or '*' for a whole
    module) for `functions` and every definition they reach by name, transitively, in their
    own module and, through `from <project package>... import`, in the project's other modules (a
    module imported whole, such as `metrics.mia`, counts whole). Third-party code is not
    followed: its versions go into run records instead."""
    todo = [(Path(inspect.getsourcefile(sys.modules[f.__module__])), f.__name__) for f in functions]
    seen: set[tuple[Path, str]] = set()
    while todo:
        path, name = todo.pop()
        if (path, name) in seen:
            continue
        entry = _definitions_of(path).get(name)
        if entry is None:
            continue
        seen.add((path, name))
        if entry[0] == "def":
            todo += [(path, used) for used in sorted(entry[2])]
            imports = entry[3]  # imports inside the function body
        else:
            imports = ((entry[1], entry[2]),)
        for module, attribute in imports:
            whole = _module_file(f"{module}.{attribute}")
            if whole is not None:  # a module imported by name: all of it
                seen.add((whole, "*"))
            elif _module_file(module) is not None:
                todo.append((_module_file(module), attribute))
    return sorted((_display(path), name) for path, name in seen)


def _display(path: Path) -> str:
    """A project file by its path under src/ (unlearning/losses.py), any other (a user's own
    benchmark) in full."""
    return str(path.relative_to(SOURCE_ROOT)) if path.is_relative_to(SOURCE_ROOT) else str(path)


def is_released(model_dir: str | Path) -> bool:
    """Were this folder's weights released (`release_weights`), its hash and metrics kept?"""
    record = Path(model_dir) / WEIGHTS_RECORD
    if weight_files(model_dir) or not record.is_file():
        return False
    try:
        return bool(read_json(record).get("released"))
    except (OSError, ValueError):
        return False


def release_weights(model_dir: str | Path) -> int:
    """Delete a model folder's weights, keeping everything a later step reads without them: its
    configuration, tokenizer, cached evaluations (`metrics/`) and the hash of the weights (so every
    key that names them still resolves). A step that needs the weights again recomputes them
    (`runs.run(..., weights=True)`: the same run gives the same bits). Returns the bytes freed."""
    files = weight_files(model_dir)
    if not files:
        return 0
    digest = weights_hash(model_dir)
    write_json(Path(model_dir) / WEIGHTS_RECORD, {"files": {}, "sha256": digest, "released": True})
    freed = sum(f.stat().st_size for f in files)
    for f in files:
        f.unlink()
    return freed


def code_key(*functions: Callable) -> str:
    """Hash of the code `functions` run in the project's packages (`code_closure`): a cache key's code part."""
    digest = hashlib.sha256()
    for relative, name in code_closure(*functions):
        path = SOURCE_ROOT / relative  # an absolute path stays itself
        if name == "*":
            digest.update(f"{relative}\n".encode() + path.read_bytes())
        else:
            entry = _definitions_of(path)[name]
            digest.update(f"{relative}:{name}\n{entry[1]}\n".encode())
    return digest.hexdigest()


def cached(path: str | Path, compute: Callable[[], dict], log=None) -> dict:
    """The JSON object at `path`, computed by `compute()` and written atomically the first
    time; a partial write is never read (temporary name, then rename)."""
    path = Path(path)
    if path.is_file():
        if log:
            log(f"cached: {path}")
        return read_json(path)
    value = compute()
    reached("cache:computed")
    write_json(path, value)
    reached("cache:written")
    if log:
        log(f"wrote {path}")
    return value
