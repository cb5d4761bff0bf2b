"""The student edition of the built book (`make book-student`) leaks no solution: no solution line
in any file of the site (pages, search index, scripts), no page sources, no notebooks to download.

`make test` runs this after building both editions at the smoke profile; it skips (and says why)
where the student edition is not built. STUDENT_HTML points it at another build.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest

from classroom import assignments

ROOT = Path(__file__).resolve().parents[2]
STUDENT = Path(os.environ.get("STUDENT_HTML", ROOT / "build" / "book-student" / "_build" / "html"))
INSTRUCTOR = ROOT / "book" / "_build" / "html"

if not (STUDENT / "index.html").is_file():
    pytest.skip(f"no student edition at {STUDENT} (make book-student PROFILE=smoke)", allow_module_level=True)


def _solution_lines() -> set[str]:
    """Lines that only a solution contains (long enough to be distinctive)."""
    masters = [assignments.read_master(p) for p in assignments.sources(ROOT / "notebooks" / "assignments").values()]
    # what the student may see anyway: the student notebooks and the chapters' sources
    student = "\n".join([c.source for m in masters for c in assignments.student_notebook(m).cells]
                        + [p.read_text() for p in (ROOT / "notebooks").glob("*.py")])
    lines = set()
    for master in masters:
        for cell in master.cells:
            if assignments.BEGIN in cell.source:
                inside = cell.source.split(assignments.BEGIN)[1].split(assignments.END)[0]
                lines |= {line.strip() for line in inside.splitlines() if len(line.strip()) > 15 and line.strip() not in student}
    return lines


def _site_text(root: Path) -> str:
    """Every text file of a site, markup removed (highlighted code is split into spans)."""
    return "\n".join(html.unescape(re.sub(r"<[^>]*>", "", p.read_text(errors="ignore"))) for p in root.rglob("*")
                     if p.is_file() and p.suffix in {".html", ".js", ".txt", ".ipynb", ".md", ".py", ".json"})


def test_the_student_edition_has_the_assignment_pages():
    pages = sorted(p.name for p in (STUDENT / "generated" / "assignments").glob("*.html"))
    assert pages == [f"{p.stem}.html" for p in assignments.sources(ROOT / "notebooks" / "assignments").values()]


def test_no_solution_line_anywhere_in_the_student_edition():
    solutions = _solution_lines()
    assert len(solutions) > 20
    text = _site_text(STUDENT)
    assert not [line for line in solutions if line in text]


def test_no_page_sources_or_notebooks_to_download():
    assert not (STUDENT / "_sources").exists()
    assert not list(STUDENT.rglob("*.ipynb"))
    page = (STUDENT / "generated" / "assignments" / "A1-margin.html").read_text()
    assert "_sources" not in page and "colab.research.google.com" not in page and "mybinder" not in page


def test_the_instructor_edition_does_carry_the_solutions():
    """The check above can fail: the same lines are found in the instructor edition."""
    if not (INSTRUCTOR / "index.html").is_file():
        pytest.skip(f"no instructor edition at {INSTRUCTOR}")
    text = _site_text(INSTRUCTOR / "generated" / "assignments")
    assert all(line in text for line in _solution_lines())
