"""Execute one chapter into the book: papermill, then `presentation.present`, then a rename.

`execute_chapter(notebook, out, profile, parameters)` is what `make` runs for every chapter
(`experiments execute`). papermill writes its output notebook cell by cell as it goes, so a chapter
killed halfway would leave a half-executed page under the final name, and `make` would take it
as done. Here papermill writes to a temporary name (one per process), the page is tidied there,
and only a chapter that ran to its end is renamed into `out`. A chapter that fails, is
interrupted (Ctrl-C) or whose kernel dies leaves `out` as it was; every run and evaluation it
finished is in the store, so the rerun redoes only the rest.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import papermill

from experiments.parameters import ParameterError
from experiments.presentation import present
from unlearning.records import read_yaml_mapping


def execute_chapter(notebook: str | Path, out: str | Path, profile: str, parameters: str | Path,
                    cwd: str | Path = ".") -> Path:
    """Run `notebook` with the profile's `parameters` (a YAML file) in `cwd` and write the
    executed, tidied notebook to `out` atomically; returns `out`. papermill's errors (a failing
    cell, a dead kernel) propagate after the temporary file is removed."""
    notebook, out = Path(notebook), Path(out)
    values = read_yaml_mapping(Path(parameters), ParameterError)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.stem}.{os.getpid()}.tmp.ipynb")
    logging.getLogger("papermill").setLevel(logging.WARNING)
    try:
        papermill.execute_notebook(str(notebook), str(tmp), parameters=values, cwd=str(cwd), progress_bar=False,
                                   log_output=False)
        present(tmp, profile, parameters)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return out
