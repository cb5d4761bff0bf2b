"""Publishing: the workflows pass actionlint, `make publish` pushes the built HTML to gh-pages, and
the README says how the book is published."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_publishing_workflow_passes_actionlint():
    actionlint = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(actionlint).exists():
        pytest.skip("actionlint is not installed (pip install -e '.[dev]')")
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows
    done = subprocess.run([actionlint, *map(str, workflows)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_make_publish_pushes_the_html_to_gh_pages_of_a_bare_repository(tmp_path):
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    bare, work = tmp_path / "site.git", tmp_path / "work"
    subprocess.run([git, "init", "--bare", "--quiet", str(bare)], check=True)
    work.mkdir()
    shutil.copy(ROOT / "Makefile", work / "Makefile")
    html = work / "book" / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<html>the book</html>")
    (html / "_static").mkdir()
    (html / "_static" / "style.css").write_text("body {}")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run([git, "init", "--quiet"], cwd=work, check=True, env=env)
    done = subprocess.run(["make", "publish", f"REMOTE={bare}", f"BIN={Path(sys.executable).parent}"],
                          cwd=work, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    files = subprocess.run([git, "--git-dir", str(bare), "ls-tree", "-r", "--name-only", "gh-pages"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert sorted(files) == [".nojekyll", "_static/style.css", "index.html"]
    shown = subprocess.run([git, "--git-dir", str(bare), "show", "gh-pages:index.html"], capture_output=True, text=True)
    assert shown.stdout == "<html>the book</html>"


def test_make_publish_refuses_without_a_built_book(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    done = subprocess.run(["make", "publish", "REMOTE=nowhere"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0 and "run make book first" in done.stderr


def test_the_readme_says_how_the_book_is_published_and_names_no_site_nothing_publishes():
    """Issue 29: a paragraph under the title (issue 46: not above it) says the workflow publishes to
    the Pages of the repository it runs in; no fixed github.io address, since no workflow here
    publishes to one."""
    readme = (ROOT / "README.md").read_text()
    assert readme.startswith("# ")
    (paragraph,) = [p for p in readme.split("\n\n") if p.startswith("**The book** is published")]
    assert ".github/workflows/book.yml" in paragraph and "gh-pages" in paragraph
    assert "github.io" not in readme
    workflow = (ROOT / ".github" / "workflows" / "book.yml").read_text()
    assert "make publish REMOTE=origin" in workflow and "branches: [main]" in workflow
