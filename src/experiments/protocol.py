"""The book's shared protocol (the recipe `book/protocol`, also the `unlearning unlearn` command's
default): the settings every run without a paper's recipe uses in the chapters' comparisons beyond
the papers, which a chapter varies.

A paper's recipe (`unlearning.recipes`) is that paper's own run; the protocol is the one budget
and rate the book gives every method where it compares them on equal terms (masc.md s. 12-13).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from unlearning.recipes import PAPER_SCALE, PROTOCOL, Changes, RunRecipe, build_spec, load, protocol_run
from unlearning.runs import RunSpec
from unlearning.stopping import StopConfig

_RECIPE = load(PROTOCOL)
_FIXED, _VIOLATION = _RECIPE.run("fixed"), _RECIPE.run("violation")


@dataclass(frozen=True)
class Protocol:
    """The settings every chapter shares (the recipe file `book/protocol`; a chapter changes some).

    As in the MASC paper's comparison (masc.md s. 12-13): every baseline trains for a fixed
    budget of `epochs` passes over the forget set; a method whose default stop is the violation
    rule (MASC), or any method given `stop="violation"`, stops by itself once the violation rate
    falls to `tolerance`, capped at `cap` steps.
    """

    lr: float = _FIXED.optim["lr"]
    batch_size: int = _FIXED.optim["batch_size"]
    epochs: float = _FIXED.budget["epochs"]
    cap: int = _VIOLATION.budget["steps"]
    tolerance: float = _VIOLATION.stop["tolerance"]
    seed: int = 0

    def __post_init__(self) -> None:
        if self.cap < 1:
            raise ValueError(f"cap must be >= 1, got {self.cap!r}")
        Changes(lr=self.lr, batch_size=self.batch_size, epochs=self.epochs)  # checks each value
        StopConfig("violation", tolerance=self.tolerance)

    def describe(self) -> str:
        """The settings in one sentence, for the pages that use them (no number typed by hand)."""
        return (f"AdamW at learning rate {self.lr:g}, {self.batch_size} forget and {self.batch_size} retain examples "
                f"per step; fixed budgets of {self.epochs:g} epoch(s) over the forget split; self-stopping runs end at "
                f"a violation rate of {self.tolerance} (at most {self.cap} steps)")

    def recipe_run(self, method: str, stop_kind: str | None = None) -> RunRecipe:
        """The protocol's run of `method`: the recipe file's run of its stopping kind (the
        method's own when None), with this protocol's rate, batch, budget and tolerance."""
        run = protocol_run(method, stop_kind)
        kind = run.stop["kind"]
        budget = {"steps": self.cap} if kind == "violation" else {**run.budget, "epochs": self.epochs}
        stop = {**run.stop, "tolerance": self.tolerance} if kind == "violation" else run.stop
        return replace(run, optim={**run.optim, "lr": self.lr, "batch_size": self.batch_size},
                       budget=budget, stop=stop)

    def spec(self, benchmark: str, method: str, model: str | Path, n_forget: int, *,
             stop: "str | StopConfig | None" = None, **changes) -> RunSpec:
        """The run of `method` under this protocol (`recipes.build_spec`); `n_forget` sizes the epoch
        budget. `stop` is the method's default stop when None, a kind ("violation": at `tolerance`,
        capped at `cap` steps; "fixed": the epoch budget) or a whole StopConfig; `changes` are
        `recipes.Changes` fields (rule, forget_split, hparams, max_steps, seed, ...)."""
        kind = stop.kind if isinstance(stop, StopConfig) else stop
        given = {"stop": stop} if isinstance(stop, StopConfig) else {}
        return build_spec(self.recipe_run(method, kind), benchmark, model, PAPER_SCALE, n_forget=n_forget,
                          n_retain=n_forget, changes=Changes(**{"seed": self.seed, **given, **changes}))

