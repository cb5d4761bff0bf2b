"""Helpers shared by the tests (importable: pytest puts this folder on sys.path)."""

import importlib
import site
from pathlib import Path

CLI_MODULES = ("unlearning.cli", "laboratory.cli", "experiments.cli")  # one console script per package


def command_module(command: str) -> str:
    """The CLI module whose COMMANDS has `command` (for `python -m MODULE command ...`); a name
    no CLI has goes to `unlearning.cli`, which refuses it with its usage line."""
    return next((name for name in CLI_MODULES if command in importlib.import_module(name).COMMANDS), CLI_MODULES[0])


def run_cli(argv: list[str]) -> int:
    """The command line `argv` in this process, through the main() of its package's command."""
    return importlib.import_module(command_module(argv[0])).main(argv)


def without_cost(value):
    """A record or metrics dict without what may differ between equal runs: seconds and memory peaks."""
    if isinstance(value, dict):
        return {k: without_cost(v) for k, v in value.items() if "seconds" not in k and not k.startswith("peak_")}
    if isinstance(value, list):
        return [without_cost(v) for v in value]
    return value


def tofu_metrics(name: str, rouge: float, utility: float, prob: float | None = None, truth_ratio: float = 0.6,
                 n: int = 40, noise: float = 0.15) -> dict:
    """A TOFU evaluation written by hand, with per-item scores whose means are the aggregates (each
    field: the value plus noise centred to zero, drawn from a stream named by `name`, so two models
    differ item by item): forget ROUGE-L `rouge`, forget probability `prob` (rouge / 2), truth ratio,
    and every model-utility part at `utility` (model utility `utility`: a harmonic mean of equal parts)."""
    import zlib

    import numpy as np

    rng = np.random.default_rng(zlib.crc32(name.encode()))

    def around(value):
        draw = rng.normal(0, noise, n)
        return list(value + draw - draw.mean())

    prob = rouge / 2 if prob is None else prob
    items = {"forget": {"rouge": around(rouge), "prob": around(prob), "truth_ratio": around(truth_ratio)},
             **{part: {field: around(utility) for field in ("prob", "rouge", "truth_ratio")}
                for part in ("retain", "real_authors", "world_facts")}}
    return {"forget_Q_A_ROUGE": rouge, "forget_Q_A_Prob": prob, "forget_truth_ratio": truth_ratio,
            "model_utility": utility, "items": items}


# what only the extras (book, dev, gpu) install: absent after a plain `pip install .`
EXTRAS_ONLY = {"matplotlib", "mpl_toolkits", "seaborn", "nbformat", "papermill", "ipython", "ipykernel", "jupytext",
               "jupyter_book", "peft", "datasets", "pytest", "_pytest", "selenium", "bitsandbytes"}


def _distribution(entry: str) -> str:
    """The package a site-packages entry belongs to ('matplotlib-3.9.dist-info' -> 'matplotlib')."""
    return entry.split("-")[0].split(".")[0].lower()


def site_without_extras(tmp_path: Path) -> Path:
    """A site-packages folder of links to every installed package but the extras' (and their
    metadata, and no .pth file, so not this project): what `pip install .` with no extras leaves.
    Run `python -S` with it and src/ on sys.path."""
    installed = Path(next(p for p in site.getsitepackages() if p.endswith("site-packages")))
    core = tmp_path / "site-packages"
    core.mkdir()
    for entry in installed.iterdir():
        if _distribution(entry.name) not in EXTRAS_ONLY and entry.suffix != ".pth":
            (core / entry.name).symlink_to(entry)
    return core


# a learning plan of one size, one epoch each: the learning tests' models (the `learned` fixture)
TINY_PLAN = {"sizes": ["xs"], "main_size": "xs", "pretrain": {"epochs": 1, "batch_size": 64},
             "finetune": {"epochs": 1, "batch_size": 64}, "main_oracles": [], "muse": ["muse-news"], "vocab_size": 512}
