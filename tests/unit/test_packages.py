"""The library installs and imports on its own (issue 46): after `pip install .` with no extras,
every module of `unlearning` imports; the book's extras (matplotlib, nbformat, IPython, ...) are
needed by `experiments` only."""

import shutil
import subprocess
import sys
from pathlib import Path

from helpers import site_without_extras

SRC = Path(__file__).resolve().parents[2] / "src"
IMPORT_EVERY_MODULE = (
    "import importlib, pkgutil, unlearning\n"
    "failed = []\n"
    "for module in pkgutil.walk_packages(unlearning.__path__, 'unlearning.'):\n"
    "    try:\n"
    "        importlib.import_module(module.name)\n"
    "    except ImportError as error:\n"
    "        failed.append(f'{module.name}: {error}')\n"
    "print('\\n'.join(failed) or 'ok')\n")


def _import_every_module(src: Path, site: Path) -> str:
    """What `python -S` prints after importing every module of the `unlearning` under `src` with
    only `site` installed: 'ok', or one line per module that failed."""
    done = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path[:0] = [{str(src)!r}, {str(site)!r}]\n"
                           + IMPORT_EVERY_MODULE], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_every_module_of_the_library_imports_with_no_extras(tmp_path):
    site = site_without_extras(tmp_path)
    assert _import_every_module(SRC, site) == "ok"
    planted = tmp_path / "planted"
    shutil.copytree(SRC / "unlearning", planted / "unlearning", ignore=shutil.ignore_patterns("__pycache__"))
    (planted / "unlearning" / "figure.py").write_text("import matplotlib\n")  # a plot in the core
    assert _import_every_module(planted, site) == "unlearning.figure: No module named 'matplotlib'"
