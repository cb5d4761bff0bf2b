# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The stopping rule
#
# Baselines train for a fixed budget and a practitioner then picks a checkpoint by evaluating
# several of them. MASC instead measures, every few steps, the violation rate $\hat V$ on a
# few probe sequences (the *trigger*); only when $\hat V \le$ tolerance does it re-measure on a
# larger set (the *confirmation*), and it stops when that also passes (the sizes used on this page
# are printed below). The probes reuse the forget set (the official code's behaviour); `probe_set="holdout"`
# holds them out of training instead. This chapter shows the rule at work, how the tolerance moves
# the stopping point, and what the fixed-budget alternative with checkpoint selection costs.

# %% tags=["parameters"]
profile = "mini"
size = "s"
forget_split = "forget10"
tolerances = [0.3, 0.475, 0.6]      # 0.475: the TOFU setting of the MASC paper
checkpoints = [10, 25, 50, 75, 100, 125]   # fixed-budget checkpoints (steps)
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("05-stopping", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt

from experiments.comparison import fixed_budgets, tolerance_sweep
from experiments.plotting import plot_checkpoints_against_stop, plot_violation_trace, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab, Protocol, eval_config, tofu_oracle, tofu_target

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
target, protocol, config = tofu_target(size), Protocol(), eval_config("tofu", forget_split)
oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
base = lab.evaluate("tofu", lab.model(target), config=config, oracle=oracle)
masc = lab.run("tofu", "MASC", target, protocol, forget_split=forget_split)
glue(**masc["stop"], cap=protocol.cap, lr=protocol.lr, batch=protocol.batch_size)  # its stop: tolerance, every, sizes

# %% [markdown]
# Settings of this page: a trigger probe on the first {glue:text}`trigger_size` forget sequences every
# {glue:text}`every` steps, a confirmation on the first {glue:text}`confirm_size`, tolerance
# {glue:text}`tolerance`, a cap of {glue:text}`cap` steps; learning rate {glue:text}`lr`, batches of
# {glue:text}`batch`.
#
# ## One run, probe by probe
#
# A probe costs forward passes only: the margins of the probe sequences under the current model,
# no gradient. The trigger is cheap because it is small, and it is allowed to be noisy: a trigger
# that passes too early only buys a confirmation, which must pass on the larger set before the run
# ends. The cost of every probe is part of the run's reported time (`probe s` in the tables of the
# other chapters), so the comparison with a fixed budget below pays for it.

# %% mystnb={"figure": {"caption": "MASC on TOFU-mini: the violation rate on the trigger sequences at every probe (line), the confirmations on the larger set (rings) and the tolerance (dashed). Training stops at the first confirmation at or below the tolerance.", "name": "fig-stop-trace"}} tags=["hide-input"]
ax = plot_violation_trace(masc["probes"], protocol.tolerance, ax=plt.subplots(figsize=(7, 3.6))[1])
ax.set_title(f"MASC, {forget_split}, target-{size}: stopped at step {masc['stop_step']}")
plt.show()

# %% [markdown]
# ## The tolerance decides how far MASC goes
#
# A lower tolerance asks for fewer violating positions before stopping: more steps, a lower
# forget-set probability, and a cost in utility. The tolerance is the one knob of the rule that a
# user sets; the MASC paper uses 0.475 on TOFU. Each row below is a separate run from the same
# target with the same data order and seed (the probes draw from their own generator), so the
# training steps are the same until a run stops: only the threshold differs.

# %%
tolerance_sweep(lab, target, forget_split, protocol, tolerances, config, oracle).round(3)

# %% [markdown]
# ## The alternative: a fixed budget and checkpoint selection
#
# The same MASC objective, trained for a fixed budget, with a checkpoint at each of the steps
# below; each checkpoint is evaluated with the full TOFU suite, as one would to pick the best. The
# runs are deterministic, so the checkpoint at step $n$ is the run stopped after $n$ steps.
#
# What a practitioner would do with these rows is pick one, and that needs a criterion: the oracle's
# forget ROUGE-L, which exists only in a benchmark, or a held-out set of the facts to forget. The
# `eval s` column is the price of looking: every checkpoint is evaluated with the whole suite,
# greedy generation included, and the last sentence of the page adds it up against the
# self-stopped run.

# %%
fixed = fixed_budgets(lab, target, forget_split, protocol, checkpoints, config, oracle)
fixed.round(3)

# %% [markdown]
# The figure puts the two approaches side by side: the lines are the fixed budget's checkpoints, the
# stars the one model the self-stopped run returns, at the step where it stopped. Where the stars
# sit near the lines, self-stopping found, without any evaluation, a model the checkpoint search
# would have had to find by evaluating every checkpoint; where forget ROUGE-L falls past the oracle's
# dotted line, the run forgot more than retraining would have.

# %% mystnb={"figure": {"caption": "Fixed budget with checkpoints (lines) against the self-stopped run (star): forget-set ROUGE-L and model utility per checkpoint step. The self-stopped run lands where the checkpoints would have to be searched for.", "name": "fig-stop-checkpoints"}} tags=["hide-input"]
masc_metrics = lab.evaluate("tofu", masc["dir"], config=config, oracle=oracle)
plot_checkpoints_against_stop(fixed, masc["steps"], masc_metrics, oracle)
plt.show()

# %% tags=["hide-input"]
self_cost, budget_cost = masc["train_seconds"] + masc["probe_seconds"], fixed["train s"].iloc[-1] + fixed["eval s"].sum()
glue(masc_steps=masc["steps"], self_cost=self_cost, probe_seconds=masc["probe_seconds"], budget=checkpoints[-1],
     n_checkpoints=len(checkpoints), budget_train=fixed["train s"].iloc[-1], budget_eval=fixed["eval s"].sum(),
     ratio=budget_cost / max(self_cost, 1e-9), base_rouge=base["forget_Q_A_ROUGE"], oracle_rouge=oracle["forget_Q_A_ROUGE"],
     masc_rouge=masc_metrics["forget_Q_A_ROUGE"], masc_mu=masc_metrics["model_utility"], base_mu=base["model_utility"])

# %% [markdown]
# **What the run shows.** Self-stopping took {glue:text}`masc_steps` steps and
# {glue:text}`self_cost:.1f` s including {glue:text}`probe_seconds:.1f` s of probing. The fixed budget
# of {glue:text}`budget` steps with {glue:text}`n_checkpoints` evaluated checkpoints costs
# {glue:text}`budget_train:.1f` s of training plus {glue:text}`budget_eval:.1f` s of evaluation,
# {glue:text}`ratio:.1f`x as much, and still leaves the choice of checkpoint to a criterion that needs
# the oracle or a held-out set. Before unlearning the target's forget ROUGE-L is
# {glue:text}`base_rouge:.2f` (oracle {glue:text}`oracle_rouge:.2f`); the self-stopped model reaches
# {glue:text}`masc_rouge:.2f` with model utility {glue:text}`masc_mu:.2f` (target
# {glue:text}`base_mu:.2f`).
