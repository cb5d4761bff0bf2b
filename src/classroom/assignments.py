"""Turn the assignments' text sources into what a course hands out.

A source (`notebooks/assignments/A1-margin.py`, jupytext py:percent) is the instructor's master:
exercise cells (tag `exercise`) hold the solution between `# BEGIN SOLUTION` and `# END SOLUTION`;
`check` cells call the self-check; `capstone` cells run the ungraded experiment. From it:

- the **student notebook**: each solution replaced by `raise NotImplementedError(...)`;
- the **solutions notebook**: the markers dropped;
- the **autograder bundle** (a zip): the checks, the grader and the solutions, with
  `run_autograder.py SUBMISSIONS` that grades a folder without this repository;
- the **book pages**: the instructor edition shows the student's stub with the solution folded
  under it and the mistakes the grader catches; the student edition shows the stub only.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import jupytext
import nbformat
import yaml

from .checks import EXERCISES

SOURCES = Path("notebooks/assignments")
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
STUB = 'raise NotImplementedError("your answer here")'
EDITIONS = ("instructor", "student")
_BLOCK = re.compile(rf"^(?P<indent>[ \t]*){re.escape(BEGIN)}\n.*?^[ \t]*{re.escape(END)}[ \t]*\n?", re.S | re.M)


def sources(folder: Path | str = SOURCES) -> dict[str, Path]:
    """The assignment sources by name ("A1" -> notebooks/assignments/A1-margin.py)."""
    found = {path.stem.split("-")[0]: path for path in sorted(Path(folder).glob("A*-*.py"))}
    if not found:
        raise FileNotFoundError(f"no assignment sources (A<n>-<name>.py) in {folder}")
    return found


def student_code(code: str) -> str:
    """Every solution block replaced by a stub at the block's indentation."""
    return _BLOCK.sub(lambda m: f"{m['indent']}{STUB}\n", code)


def solution_code(code: str) -> str:
    """The solution with its marker lines removed."""
    return "\n".join(line for line in code.splitlines() if line.strip() not in (BEGIN, END)) + (
        "\n" if code.endswith("\n") else "")


def _check_markers(notebook, path: Path) -> None:
    for cell in notebook.cells:
        tagged = "exercise" in cell.metadata.get("tags", [])
        begins, ends = cell.source.count(BEGIN), cell.source.count(END)
        if begins != ends or (tagged and not begins) or (begins and not tagged):
            raise ValueError(f"{path}: every cell tagged 'exercise' needs matched {BEGIN} / {END} lines "
                             f"(and only those cells): {cell.source[:60]!r}")


def read_master(path: Path | str):
    """The master notebook of a source, its markers checked."""
    path = Path(path)
    notebook = jupytext.read(path, fmt="py:percent")
    _check_markers(notebook, path)
    return notebook


def _is_exercise(cell) -> bool:
    return cell.cell_type == "code" and "exercise" in cell.metadata.get("tags", [])


def _with_exercises(master, rewrite):
    """A copy of `master` whose exercise cells are passed through `rewrite`."""
    notebook = nbformat.from_dict(nbformat.v4.new_notebook(metadata=master.metadata))
    for cell in master.cells:
        copy = nbformat.from_dict(dict(cell))
        if _is_exercise(cell):
            copy.source = rewrite(cell.source)
        notebook.cells.append(copy)
    return notebook


def student_notebook(master):
    """The notebook handed to students: stubs instead of solutions."""
    return _with_exercises(master, student_code)


def solutions_notebook(master):
    """The instructor's notebook: solutions in place, markers dropped."""
    return _with_exercises(master, solution_code)


def _mistakes_markdown(names: set[str], assignment: str) -> str:
    lines = ["**What the grader catches** (each listed wrong implementation loses the exercise's points; "
             "`tests/classroom/test_classroom.py` proves it):", ""]
    for exercise in EXERCISES:
        if exercise.assignment == assignment and exercise.name in names:
            lines.append(f"- Exercise {exercise.key} ({exercise.title}): {'; '.join(exercise.mistakes)}.")
    return "\n".join(lines)


def book_notebook(master, assignment: str, edition: str):
    """A book page: the student's stubs; in the instructor edition each solution folded under its
    stub (tag hide-input) with the mistakes the grader catches. Never executed."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {', '.join(EDITIONS)}; got {edition!r}")
    notebook = nbformat.from_dict(nbformat.v4.new_notebook(metadata=master.metadata))
    for cell in master.cells:
        if not _is_exercise(cell):
            notebook.cells.append(nbformat.from_dict(dict(cell)))
            continue
        notebook.cells.append(nbformat.v4.new_code_cell(student_code(cell.source)))
        if edition == "instructor":
            notebook.cells.append(nbformat.v4.new_markdown_cell("*Solution (instructor edition):*"))
            notebook.cells.append(nbformat.v4.new_code_cell(solution_code(cell.source), metadata={"tags": ["hide-input"]}))
            defined = set(re.findall(r"^(?:def|class) (\w+)", cell.source, re.M))
            notebook.cells.append(nbformat.v4.new_markdown_cell(_mistakes_markdown(defined, assignment)))
    return notebook


def solutions_script(masters: dict[str, object]) -> str:
    """The code of every exercise cell's solution (and the imports before them), one module: the
    reference an autograder bundle grades against."""
    parts = []
    for name, master in masters.items():
        parts.append(f"# ---- {name}")
        for cell in master.cells:
            tags = set(cell.metadata.get("tags", []))
            if cell.cell_type == "code" and not tags & {"check", "capstone"}:
                parts.append(solution_code(cell.source))
    return "\n\n".join(parts) + "\n"


RUN_AUTOGRADER = '''"""Grade every submission in a folder: python run_autograder.py SUBMISSIONS [--out grades.csv]

Generated by `make assignments` for assignment {name}; needs torch and scipy, not the library.
Exit status 1 when a submission could not be read (it is listed, and scored 0 in grades.csv).
"""
import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grader.grading import grade_folder  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("submissions", type=Path)
parser.add_argument("--out", type=Path)
args = parser.parse_args()
namespace = {{"__name__": "reference"}}
exec(compile((Path(__file__).resolve().parent / "solutions.py").read_text(), "solutions.py", "exec"), namespace)
csv_path, unreadable = grade_folder(args.submissions, "{name}", args.out, reference=SimpleNamespace(**namespace))
print(f"grades: {{csv_path}}")
for line in unreadable:
    print(f"unreadable: {{line}}", file=sys.stderr)
sys.exit(1 if unreadable else 0)
'''


def write_bundle(name: str, master, out: Path) -> Path:
    """The autograder zip of one assignment."""
    here = Path(__file__).parent
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("grader/__init__.py", "")
        bundle.write(here / "checks.py", "grader/checks.py")
        bundle.write(here / "grading.py", "grader/grading.py")
        bundle.writestr("solutions.py", solutions_script({name: master}))
        bundle.writestr("run_autograder.py", RUN_AUTOGRADER.format(name=name))
    return out


def build(out: Path | str = "build/assignments", folder: Path | str = SOURCES) -> list[Path]:
    """Student notebooks, solutions and autograder bundles of every assignment under `out`
    (student/, solutions/, autograder/); returns the files written."""
    out, written = Path(out), []
    for sub in ("student", "solutions", "autograder"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for name, path in sources(folder).items():
        master = read_master(path)
        for sub, notebook in (("student", student_notebook(master)), ("solutions", solutions_notebook(master))):
            target = out / sub / f"{path.stem}.ipynb"
            nbformat.write(notebook, target)
            written.append(target)
        written.append(write_bundle(name, master, out / "autograder" / f"{path.stem}-autograder.zip"))
    return written


def write_book_pages(out: Path | str, edition: str, folder: Path | str = SOURCES) -> list[Path]:
    """The book's assignment pages of one edition under `out` (one notebook per assignment)."""
    if edition not in EDITIONS:
        raise ValueError(f"--edition must be one of {', '.join(EDITIONS)}; got {edition!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, path in sources(folder).items():
        target = out / f"{path.stem}.ipynb"
        nbformat.write(book_notebook(read_master(path), name, edition), target)
        written.append(target)
    return written


# what the student edition changes in book/_config.yml: no page sources (a page's .ipynb would
# carry the solutions), no download, repository, issues or launch buttons (the repository holds
# the instructor's masters)
STUDENT_HTML = {"use_repository_button": False, "use_issues_button": False}
# Jupyter Book 1 does not pass html.use_download_button to the theme: it is a theme option
STUDENT_SPHINX_CONFIG = {"html_copy_source": False, "html_show_sourcelink": False,
                         "html_theme_options": {"use_download_button": False}}


def student_config(config: dict) -> dict:
    """The book's configuration, changed so that no page offers its source."""
    config = dict(config)
    config["title"] = f"{config.get('title', 'The book')} (student edition)"
    config["html"] = {**config.get("html", {}), **STUDENT_HTML}
    config.pop("launch_buttons", None)
    config.pop("repository", None)
    sphinx = dict(config.get("sphinx", {}))
    theme = {**sphinx.get("config", {}).get("html_theme_options", {}), **STUDENT_SPHINX_CONFIG["html_theme_options"]}
    sphinx["config"] = {**sphinx.get("config", {}), **STUDENT_SPHINX_CONFIG, "html_theme_options": theme}
    config["sphinx"] = sphinx
    return config


def write_student_book(book: Path | str, out: Path | str, folder: Path | str = SOURCES) -> Path:
    """A copy of the book's source (`book`, its built HTML left out) under `out` with the student
    edition's assignment pages and configuration; `jupyter-book build OUT` then builds it."""
    book, out = Path(book), Path(out)
    if not (book / "_config.yml").is_file():
        raise FileNotFoundError(f"book: no _config.yml in {book}")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(book, out, ignore=shutil.ignore_patterns("_build"))
    pages = out / "generated" / "assignments"
    if pages.exists():
        shutil.rmtree(pages)
    write_book_pages(pages, "student", folder)
    config = yaml.safe_load((book / "_config.yml").read_text())
    (out / "_config.yml").write_text(yaml.safe_dump(student_config(config), sort_keys=False, allow_unicode=True))
    return out
