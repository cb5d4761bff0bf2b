"""The chapters' tables, computed with the library: a paper's recipe as a page runs it
(`show_recipe`), the violation rate over MASC's knobs (`violation_grid`) and Proposition 1 on
every sequence (`proposition1_table`, `proposition1_summary`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd
import torch
from IPython.display import Markdown, display

from unlearning.margin import tau_from_rho, violation_rate
from experiments.memorization import proposition1_rows, sequence_margins
from unlearning.recipes import PAPER_SCALE, Recipe, RunRecipe, Scale, load, scaled


def recipe_table(recipe: Recipe, runs: list[str] | None = None, scale: Scale = PAPER_SCALE,
                 factors: Mapping[str, float] | None = None) -> pd.DataFrame:
    """The chapters' recipe table: one row per run, as the paper ran it (`paper lr`, `paper
    batch`) and as this page runs it under `scale` (at the run's calibrated rate factor in
    `factors`, `experiments.calibration`), with the source of the rate and the method."""
    rows = []
    for name in runs or list(recipe.runs):
        run_scale = scale if name not in (factors or {}) else replace(scale, lr_factor=factors[name])
        paper, ours = recipe.run(name), scaled(recipe.run(name), run_scale)
        row = {"run": name, "paper lr": f"{paper.optim['lr']:.3g}", "paper batch": paper.optim["batch_size"],
               **describe_run(ours), "source": recipe.source(name, "optim.lr") + "; " + recipe.source(name, "method")}
        rows.append(row)
    return pd.DataFrame(rows).set_index("run")


def show_recipe(lab, recipe: str | Recipe, runs: list[str] | None, model: str, *,
                factors: Mapping[str, float] | None = None, **where) -> None:
    """The chapters' "recipes of this page": the scaling rule in one sentence and the table of
    `runs` of `recipe` as run from `model` (`Lab.recipe_scale`, each run at its calibrated rate
    factor in `factors`; `where`: benchmark and forget split), displayed."""
    recipe = load(recipe) if isinstance(recipe, str) else recipe
    scale = lab.recipe_scale(recipe, model, where.get("forget_split"), where.get("benchmark"))
    named = ", ".join(f"{name} x {factors[name]:g}" for name in runs or recipe.runs if name in (factors or {}))
    rule = scale.describe() + (f" Each run's rate factor is then calibrated on this model ({named}): the "
                               "largest of its ladder that keeps the model ({ref}`scaling-rule`)." if named else "")
    display(Markdown(f"**{recipe.title}** (recipe `{recipe.name}`, {recipe.paper}). {rule}"))
    display(recipe_table(recipe, runs, scale, factors))


def violation_grid(models: dict, examples, pad_token_id: int, ks, betas, rhos) -> pd.DataFrame:
    """The violation rate V of each model of `models` (name -> model) on `examples` for every
    competitor-set size k, inverse temperature beta and rho (tau = logit(rho)): one row each."""
    rows = []
    for name, model in models.items():
        for k in ks:
            for beta in betas:
                margins, mask = sequence_margins(model, examples, pad_token_id, k, beta)
                rows += [{"model": name, "k": k, "beta": beta, "rho": rho,
                          "V": violation_rate(margins, mask, tau_from_rho(rho))} for rho in rhos]
    return pd.DataFrame(rows)


def proposition1_table(models: dict, batch: dict, hparams: dict) -> pd.DataFrame:
    """`proposition1_rows` of every model of `models` (name -> model) on one batch, a column
    `model` naming it (each model's own generator, seeded 0, cuts the continuations)."""
    return pd.DataFrame([{"model": name, **row} for name, model in models.items()
                         for row in proposition1_rows(model, batch, hparams, torch.Generator().manual_seed(0))])


def proposition1_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per model: sequences, on how many the bound holds (measured <= bound), the mean violation
    fraction, the mean log10 measured probability and bound."""
    return table.assign(holds=table.log10_measured <= table.log10_bound + 1e-9).groupby("model", sort=False).agg(
        sequences=("holds", "size"), bound_holds=("holds", "sum"), mean_v=("violation_fraction", "mean"),
        mean_log10_measured=("log10_measured", "mean"), mean_log10_bound=("log10_bound", "mean"))


def describe_run(run: RunRecipe) -> dict:
    """A run's settings in words, one entry per column of the chapters' recipe tables."""
    o = run.optim
    budget = f"{run.budget['steps']} steps" if "steps" in run.budget else \
        f"{run.budget['epochs']:g} epochs ({'forget set' if run.budget['anchor'] == 'forget' else 'longer loader'})"
    warm = "none" if run.warmup is None else (f"{run.warmup['epochs']:g} epoch" if "epochs" in run.warmup
                                              else f"{run.warmup['ratio']:.0%} of the steps")
    stop = "fixed budget" if run.stop["kind"] == "fixed" else \
        f"self-stop at V <= {run.stop['tolerance']} (confirmed on {run.stop['confirm_size']})"
    return {"method": run.method, "rule": run.rule, "lr": f"{o['lr']:.3g}", "global batch": o["batch_size"],
            "budget": budget, "warm-up": warm, "schedule": o["schedule"],
            "decay": f"{o['weight_decay']:g} ({'all tensors' if o['decay_groups'] == 'all' else 'no norms/biases'})",
            "clip": "none" if o["max_grad_norm"] is None else f"{o['max_grad_norm']:g}",
            "LoRA": "full" if run.lora is None else f"r {run.lora['r']}, alpha {run.lora['alpha']}",
            "stop": stop, "packing": "per example" if run.packing is None else f"{run.packing['block_length']}-token blocks",
            "settings": ", ".join(f"{k} {v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else f"{k} {v}"
                                  for k, v in run.hparams.items()),
            "beyond the paper": "yes" if run.beyond_paper else ""}
