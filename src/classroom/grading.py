"""Grade submissions: notebooks or plain `.py` files that define the exercise functions.

A submission's graded code is the whole `.py` file, or every code cell of a notebook except those
tagged `check` (the student's self-check calls) and `capstone` (the ungraded experiment). It runs in
a fresh namespace with a time limit; each exercise of the assignment is then graded by its checks
(`classroom.checks`) against a reference: all checks pass -> the exercise's points, else 0 and the
hints of the failing checks. An answer that merely calls the library is refused twice over: a
static look at the source (names imported from `unlearning` used in, or bound to, an exercise) and,
while the checks run, a library that cannot be imported (`library_hidden`).
"""

from __future__ import annotations

import ast
import contextlib
import csv
import importlib
import importlib.abc
import io
import json
import re
import signal
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from .checks import EXERCISES, TAKES_MODULE, Exercise

# where each graded name lives in the library (the reference)
LIBRARY = {"restricted_margin": "unlearning.margin", "masc_loss": "unlearning.losses", "tau_from_rho": "unlearning.margin",
           "violation_rate": "unlearning.margin", "ViolationStop": "unlearning.stopping", "combine": "unlearning.synthesis",
           "truth_ratio": "unlearning.metrics.tofu", "forget_quality": "unlearning.metrics.tofu"}
SKIPPED_TAGS = {"check", "capstone"}
TIME_LIMIT_S = 60


class UnreadableSubmission(ValueError):
    """A submission that cannot be graded at all (not found, bad JSON, a syntax error, a crash)."""


class LibraryCalled(RuntimeError):
    """Raised when a submission imports the library while its checks run."""


@dataclass
class Result:
    """One exercise's grade: points earned of `points`, and the hints of the failing checks."""
    key: str
    points: int
    earned: int
    hints: list[str] = field(default_factory=list)


def exercises_of(assignment: str) -> list[Exercise]:
    """The exercises of an assignment ("A1"...), or a ValueError naming the assignments."""
    found = [e for e in EXERCISES if e.assignment == assignment]
    if not found:
        raise ValueError(f"assignment must be one of {', '.join(sorted({e.assignment for e in EXERCISES}))}; got {assignment!r}")
    return found


def library_reference() -> SimpleNamespace:
    """The library's implementations of every graded name: the reference in this repository."""
    return SimpleNamespace(**{name: getattr(importlib.import_module(module), name) for name, module in LIBRARY.items()})


CELL_MARKER = re.compile(r"^# %%(?P<header>.*)$")
TAGS = re.compile(r"tags\s*=\s*\[(?P<tags>[^\]]*)\]")


def _cells_of_percent_script(text: str) -> list[tuple[set[str], str]]:
    """(tags, code) of every code cell of a py:percent script; markdown cells are dropped."""
    cells, tags, lines, markdown = [], set(), [], False
    for line in text.splitlines():
        marker = CELL_MARKER.match(line)
        if marker:
            if not markdown:
                cells.append((tags, "\n".join(lines)))
            header = marker["header"]
            markdown = "[markdown]" in header
            found = TAGS.search(header)
            tags = {tag.strip().strip("'\"") for tag in found["tags"].split(",")} if found else set()
            lines = []
        else:
            lines.append(line)
    if not markdown:
        cells.append((tags, "\n".join(lines)))
    return cells


def _cells_of_notebook(path: Path, text: str) -> list[tuple[set[str], str]]:
    try:
        cells = json.loads(text)["cells"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise UnreadableSubmission(f"{path}: not a notebook ({error})") from None
    out = []
    for cell in cells:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            out.append((set(cell.get("metadata", {}).get("tags", [])),
                        "".join(source) if isinstance(source, list) else source))
    return out


def graded_source(path: Path | str) -> str:
    """The code of a submission that is graded: every code cell of a notebook or of a py:percent
    script except those tagged `check` or `capstone` (a plain script is graded whole); IPython
    magics and shell escapes are dropped."""
    path = Path(path)
    if not path.is_file():
        raise UnreadableSubmission(f"{path}: file not found")
    if path.suffix not in (".py", ".ipynb"):
        raise UnreadableSubmission(f"{path}: a submission is a .ipynb notebook or a .py file")
    text = path.read_text(errors="replace")
    if path.suffix == ".ipynb":
        cells = _cells_of_notebook(path, text)
    elif any(CELL_MARKER.match(line) for line in text.splitlines()):
        cells = _cells_of_percent_script(text)
    else:
        cells = [(set(), text)]
    kept = [code for tags, code in cells if not tags & SKIPPED_TAGS]
    return "\n\n".join("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
                       for code in kept)


def library_uses(source: str, names: set[str]) -> set[str]:
    """The graded `names` that the source implements with the library: bound by an import from
    `unlearning`, assigned from it, or defined by a function or class whose body uses a name
    imported from it."""
    tree = ast.parse(source)
    imported, refused = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "unlearning"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "unlearning":
            imported |= {a.asname or a.name for a in node.names}
    refused |= names & imported
    for node in ast.walk(tree):
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names and used & imported:
            refused.add(node.name)
        if isinstance(node, ast.Assign) and used & imported:
            refused |= {t.id for t in node.targets if isinstance(t, ast.Name) and t.id in names}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"__import__"}:
            refused |= names
    return refused


@contextlib.contextmanager
def _time_limit(seconds: int, what: str):
    def expire(signum, frame):
        raise TimeoutError(f"{what} ran for more than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class _LibraryHidden(importlib.abc.MetaPathFinder):
    """A finder that refuses every module of the library (the submission's imports while the checks run)."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "unlearning":
            raise LibraryCalled(f"{name}: the submission imported the library")
        return None


@contextlib.contextmanager
def library_hidden():
    """While the checks run, the library cannot be imported: its modules leave `sys.modules` and a
    finder refuses them. The reference keeps working (its functions hold their modules already) and
    the library itself is never modified."""
    hidden = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "unlearning"}
    for name in hidden:
        del sys.modules[name]
    finder = _LibraryHidden()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        sys.modules.update(hidden)


def run_source(source: str, label: str) -> dict:
    """Execute a submission's graded code in a fresh module (registered while it runs, so that
    dataclasses work); its printing is swallowed."""
    module = types.ModuleType("submission")
    sys.modules["submission"] = module
    try:
        with _time_limit(TIME_LIMIT_S, label), contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, label, "exec"), module.__dict__)
    except Exception as error:  # a student's code may raise anything
        raise UnreadableSubmission(f"{label}: running it raised {type(error).__name__}: {error}") from None
    finally:
        sys.modules.pop("submission", None)
    return module.__dict__


def grade_exercise(exercise: Exercise, namespace: dict, reference, refused: set[str]) -> Result:
    """All checks of one exercise on the submission's namespace."""
    result = Result(exercise.key, exercise.points, 0)
    names = {exercise.name} | ({"tau_from_rho"} if exercise.key in TAKES_MODULE else set())
    if names & refused:
        result.hints.append(f"{', '.join(sorted(names & refused))}: implement it yourself, not with the unlearning library")
        return result
    if exercise.name not in namespace:
        result.hints.append(f"define {exercise.name} (same name and signature as the library's)")
        return result
    target = SimpleNamespace(**namespace) if exercise.key in TAKES_MODULE else namespace[exercise.name]
    for check in exercise.checks:
        try:
            with _time_limit(TIME_LIMIT_S, f"exercise {exercise.key}"), library_hidden(), \
                    contextlib.redirect_stdout(io.StringIO()):
                hint = check(target, reference)
        except LibraryCalled as error:
            hint = f"{error}: implement it yourself"
        except NotImplementedError:
            hint = "not implemented yet"
        except Exception as error:
            hint = f"raised {type(error).__name__}: {error}"
        if hint:
            result.hints.append(hint)
            if hint == "not implemented yet":
                break
    result.earned = 0 if result.hints else exercise.points
    return result


def grade_source(source: str, assignment: str, reference=None, label: str = "submission") -> list[Result]:
    """Grade the code of one submission for one assignment."""
    exercises = exercises_of(assignment)
    try:
        refused = library_uses(source, {e.name for e in exercises} | {"tau_from_rho"})
    except SyntaxError as error:
        raise UnreadableSubmission(f"{label}: syntax error, line {error.lineno}: {error.msg}") from None
    namespace = run_source(source, label)
    reference = reference or library_reference()
    return [grade_exercise(e, namespace, reference, refused) for e in exercises]


def grade_folder(folder: Path | str, assignment: str, out: Path | str | None = None,
                 reference=None) -> tuple[Path, list[str]]:
    """Grade every submission (`*.ipynb`, `*.py`) in `folder` against `reference` (default: the
    library) and write `grades.csv` (a row per submission, a column per exercise, the total, the
    hints); returns the CSV's path and the submissions that could not be read."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"submissions: folder not found: {folder}")
    exercises = exercises_of(assignment)
    out = Path(out) if out else folder / "grades.csv"
    reference = reference or library_reference()
    rows, unreadable = [], []
    for path in sorted(p for p in folder.iterdir() if p.suffix in (".ipynb", ".py")):
        row = {"submission": path.name}
        try:
            results = grade_source(graded_source(path), assignment, reference, label=path.name)
        except UnreadableSubmission as error:
            unreadable.append(str(error))
            rows.append({**row, **{f"{e.key} {e.name}": 0 for e in exercises}, "total": 0, "status": f"unreadable: {error}"})
            continue
        rows.append({**row, **{f"{e.key} {e.name}": r.earned for e, r in zip(exercises, results)},
                     "total": sum(r.earned for r in results),
                     "status": "; ".join(f"{r.key}: {h}" for r in results for h in r.hints) or "ok"})
    columns = ["submission", *[f"{e.key} {e.name}" for e in exercises], "total", "status"]
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return out, unreadable


def check(key: str, obj=None, namespace: dict | None = None) -> Result:
    """The student's self-check in a notebook: grade one exercise on `obj` (or, for an exercise
    that needs several names, the caller's `namespace`) and print the points or the hints."""
    exercise = next((e for e in EXERCISES if e.key == key), None)
    if exercise is None:
        raise ValueError(f"exercise must be one of {', '.join(e.key for e in EXERCISES)}; got {key!r}")
    if namespace is None:
        namespace = {exercise.name: obj}
    result = grade_exercise(exercise, namespace, library_reference(), set())
    print(f"Exercise {key} ({exercise.title}): {result.earned}/{result.points}")
    for hint in result.hints:
        print(f"  - {hint}")
    return result
