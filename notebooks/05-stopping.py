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
from unlearning.parameters import check_parameters

check_parameters("05-stopping", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.plotting import method_color, plot_violation_trace, use_book_style
from unlearning.protocol import Lab, Protocol, eval_config, tofu_oracle
from unlearning.runs import StopConfig

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
target = f"tofu/target-{size}"
oracle_name = tofu_oracle(forget_split, size)
protocol = Protocol()
config = eval_config("tofu", forget_split)
oracle = lab.evaluate("tofu", lab.model(oracle_name), config=config)
base = lab.evaluate("tofu", lab.model(target), config=config, oracle=oracle)
masc = lab.run("tofu", "MASC", target, protocol, forget_split=forget_split)
stop = StopConfig(**masc["stop"])
display(Markdown(f"Settings of this page: a trigger probe on the first {stop.trigger_size} forget sequences every "
                 f"{stop.every} steps, a confirmation on the first {stop.confirm_size}, tolerance {stop.tolerance}, "
                 f"a cap of {protocol.cap} steps; learning rate {protocol.lr:g}, batches of {protocol.batch_size}."))

# %% [markdown]
# ## One run, probe by probe

# %% mystnb={"figure": {"caption": "MASC on TOFU-mini: the violation rate on the trigger sequences at every probe (line), the confirmations on the larger set (rings) and the tolerance (dashed). Training stops at the first confirmation at or below the tolerance.", "name": "fig-stop-trace"}} tags=["hide-input"]
fig, ax = plt.subplots(figsize=(7, 3.6))
plot_violation_trace(masc["probes"], protocol.tolerance, ax=ax)
ax.set_title(f"MASC, {forget_split}, target-{size}: stopped at step {masc['stop_step']}")
plt.show()

# %% [markdown]
# ## The tolerance decides how far MASC goes
#
# A lower tolerance asks for fewer violating positions before stopping: more steps, a lower
# forget-set probability, and a cost in utility.

# %%
rows = []
for tolerance in tolerances:
    run = lab.run("tofu", "MASC", target, forget_split=forget_split, stop=StopConfig("violation", tolerance=tolerance),
                  max_steps=protocol.cap, optim=protocol.optim, seed=protocol.seed)
    metrics = lab.evaluate("tofu", run["dir"], config=config, oracle=oracle)
    rows.append({"tolerance": tolerance, "steps": run["steps"], "stopped by itself": run["stopped"],
                 "train + probe s": run["train_seconds"] + run["probe_seconds"],
                 "forget ROUGE-L": metrics["forget_Q_A_ROUGE"], "forget Prob": metrics["forget_Q_A_Prob"],
                 "forget quality": metrics["forget_quality"], "model utility": metrics["model_utility"]})
by_tolerance = pd.DataFrame(rows).set_index("tolerance")
by_tolerance.round(3)

# %% [markdown]
# ## The alternative: a fixed budget and checkpoint selection
#
# The same MASC objective, trained for a fixed budget, with a checkpoint at each of the steps
# below; each checkpoint is evaluated with the full TOFU suite, as one would to pick the best. The
# runs are deterministic, so the checkpoint at step $n$ is the run stopped after $n$ steps.

# %%
rows = []
for steps in checkpoints:
    run = lab.run("tofu", "MASC", target, forget_split=forget_split, stop=StopConfig("fixed"), max_steps=steps,
                  optim=protocol.optim, seed=protocol.seed)
    metrics = lab.evaluate("tofu", run["dir"], config=config, oracle=oracle)
    rows.append({"steps": steps, "train s": run["train_seconds"], "eval s": metrics["eval_seconds"],
                 "forget ROUGE-L": metrics["forget_Q_A_ROUGE"], "forget Prob": metrics["forget_Q_A_Prob"],
                 "forget quality": metrics["forget_quality"], "model utility": metrics["model_utility"]})
fixed = pd.DataFrame(rows).set_index("steps")
fixed.round(3)

# %% mystnb={"figure": {"caption": "Fixed budget with checkpoints (lines) against the self-stopped run (star): forget-set ROUGE-L and model utility per checkpoint step. The self-stopped run lands where the checkpoints would have to be searched for.", "name": "fig-stop-checkpoints"}} tags=["hide-input"]
masc_metrics = lab.evaluate("tofu", masc["dir"], config=config, oracle=oracle)
fig, ax = plt.subplots(figsize=(7, 3.6))
ax.plot(fixed.index, fixed["forget ROUGE-L"], "o-", color=method_color("MASC"), label="forget ROUGE-L (checkpoints)")
ax.plot(fixed.index, fixed["model utility"], "s--", color=method_color("Oracle"), label="model utility (checkpoints)")
ax.scatter([masc["steps"]], [masc_metrics["forget_Q_A_ROUGE"]], marker="*", s=220, color=method_color("MASC"),
           edgecolor="black", zorder=3, label="self-stopped: forget ROUGE-L")
ax.scatter([masc["steps"]], [masc_metrics["model_utility"]], marker="*", s=220, color=method_color("Oracle"),
           edgecolor="black", zorder=3, label="self-stopped: model utility")
ax.axhline(oracle["forget_Q_A_ROUGE"], color="grey", linewidth=0.8, linestyle=":", label="oracle forget ROUGE-L")
ax.set_xlabel("optimizer steps")
ax.set_ylim(0, 1.02)
ax.legend(fontsize=7, loc="center right")
plt.show()

# %% tags=["hide-input"]
self_cost = masc["train_seconds"] + masc["probe_seconds"]
budget_cost = fixed["train s"].iloc[-1] + fixed["eval s"].sum()
display(Markdown(
    f"**What the run shows.** Self-stopping took {masc['steps']} steps and {self_cost:.1f} s including "
    f"{masc['probe_seconds']:.1f} s of probing. The fixed budget of {checkpoints[-1]} steps with "
    f"{len(checkpoints)} evaluated checkpoints costs {fixed['train s'].iloc[-1]:.1f} s of training plus "
    f"{fixed['eval s'].sum():.1f} s of evaluation, {budget_cost / max(self_cost, 1e-9):.1f}x as much, "
    f"and still leaves the choice of checkpoint to a criterion that needs the oracle or a held-out set. "
    f"Before unlearning the target's forget ROUGE-L is {base['forget_Q_A_ROUGE']:.2f} "
    f"(oracle {oracle['forget_Q_A_ROUGE']:.2f}); the self-stopped model reaches "
    f"{masc_metrics['forget_Q_A_ROUGE']:.2f} with model utility {masc_metrics['model_utility']:.2f} "
    f"(target {base['model_utility']:.2f})."))
