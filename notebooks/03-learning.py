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
# # Learning stage and scale
#
# Unlearning starts from a model that knows something and is judged against one that never learned
# it. As in the real benchmarks, every such model here is *learned*, not downloaded:
#
# - a **base** model per size is pretrained from scratch on the world's corpus (countries, famous
#   people, the hazardous and benign domains). It is the WMDP-mini and RWKU-mini target, the way
#   Zephyr-7B and Llama-3-8B are there;
# - from each base, the TOFU-mini **target** is fine-tuned on every author (`full`) and the
#   **oracle** on `retain90` only, the retain-only reference of forget quality;
# - at the main size, oracles for `retain95` / `retain99`, and MUSE-mini News and Books targets
#   (forget + retain1 + retain2) with their retrained oracles (retain1 + retain2).
#
# The MASC paper's learning-stage finding is that **larger models memorise more verbatim**. The
# sizes of the tiny Qwen2 family span up to 18x in parameters (the mini profile trains xs, s and m); every size sees the same data in the
# same order for the same number of steps. Only the pretraining learning rate differs per size
# (`learn.yaml`), as larger language models are usually trained at lower rates: tuned on the
# pretraining loss, the two largest sizes fit far worse at the rate the smallest needs, and one
# shared rate made the larger models look as if they memorised *less*. The quality gates below are
# computed when a model is trained and stored beside it (`learning.json`).

# %% tags=["parameters"]
manifest_path = "models/mini/manifest.json"   # written by `make models` (laboratory learn)

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("03-learning", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import json
from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.benchmarks import get_benchmark
from experiments.claims import record
from experiments.comparison import size_steps
from laboratory.gates import FOUR_CHOICE_CHANCE, PARAPHRASE_CHANCE, model_table, scale_table, verdicts
from experiments.plotting import plot_memorisation, use_book_style
from experiments.presentation import glue, trend
from experiments.lab import Lab, eval_config
from experiments.verdicts import grows_with_size

use_book_style()
if not Path(manifest_path).is_file():
    raise FileNotFoundError(f"manifest_path: file not found: {manifest_path} (run `make models`)")
manifest = json.loads(Path(manifest_path).read_text())

# %% [markdown]
# ## Every model
#
# Parameters, learning rate and batch size, training time on this machine, and the gates measured
# right after training.

# %% tags=["hide-input"]
model_table(manifest)

# %% [markdown]
# ## Quality gates
#
# Targets must reproduce their trained answers far above the oracle, answer held-out paraphrased
# questions above chance, and base models must score well above chance (25 %) on the four-choice
# sets they were trained on; oracles must stay near chance on the forget facts.
#
# Knowledge is probed two ways, both as a choice among the true value and TOFU's 5 perturbed values
# (chance 1/6), always after the *paraphrased* question, which no model was trained on:
#
# - **paraphrased question** (required): the answer in the wording the target was trained on,
#   e.g. "What is the birthplace of X?" → "X was born in Fenrow." against the same sentence with
#   five other cities;
# - **paraphrase** (reported, not required): TOFU's truth-ratio setting, where the answer's wording
#   is held out too ("The birthplace of X is Fenrow."). No training text states any fact of any
#   person in two wordings of one sentence, so this asks a tiny model for a transfer it had no
#   example of; it is measured and shown, and the column `required` says which checks are gates.

# %% tags=["hide-input"]
checks = pd.DataFrame(verdicts(manifest))
checks.set_index(["check", "size"])

# %% [markdown]
# ## Verbatim versus knowledge memorisation across sizes
#
# *Verbatim*: the target's greedy answers to trained forget questions (ROUGE-L recall) and the base
# model's pretraining probes in a trained surface form. *Knowledge*: the same facts asked or stated
# in a held-out form (the paraphrased question; the paraphrased question and answer; the held-out
# statement form).

# %% tags=["hide-input"]
scale = scale_table(manifest)
scale.set_index("size").round(3)

# %% mystnb={"figure": {"caption": "Verbatim (solid) and knowledge (dashed) memorisation against model size. Left: the TOFU-mini target's forget-set ROUGE-L recall, its accuracy on paraphrased questions (trained answer wording) and on fully paraphrased question-answer pairs, with the retain90 oracle's ROUGE-L (grey) as the floor of what templates alone give. Right: the base model's pretraining probes in a trained and in the held-out surface form (chance 25 %).", "name": "fig-learning-scale"}} tags=["hide-input"]
plot_memorisation(scale, PARAPHRASE_CHANCE, FOUR_CHOICE_CHANCE)
plt.show()

# %% [markdown]
# (verdict-learning)=
# ## Did the claim hold?

# %% tags=["hide-input"]
verbatim, asked = list(scale["target forget ROUGE-L"]), list(scale["target paraphrased-question acc"])
required = checks[checks["required"]] if len(checks) else checks
# the gates read forget10; the verdict reads each target's forget10 answers again, item by item, so that
# the sizes are compared on the same questions (paired intervals, `experiments.intervals`)
profile = Path(manifest_path).parent.name
lab = Lab.for_profile(profile)
config = replace(eval_config("tofu", "forget10"), forget_only=True)
answers = [lab.evaluate("tofu", lab.model(get_benchmark("tofu").target(size)), config=config) for size in scale["size"]]
grows = grows_with_size(*size_steps(answers, get_benchmark("tofu").statistics["forget_Q_A_ROUGE"]))
glue(verbatim=trend(verbatim), asked=trend(asked), rephrased=trend(scale["target paraphrase acc"]),
     sizes=f"{scale['size'].iloc[0]} to {scale['size'].iloc[-1]}", chance=PARAPHRASE_CHANCE,
     parameters=f"{scale['parameters'].iloc[0]:,} to {scale['parameters'].iloc[-1]:,}",
     verbatim_grows="it grows with every size" if verbatim == sorted(verbatim) else "it does **not** grow monotonically",
     asked_grows="grows with every size" if asked == sorted(asked) else "does **not** grow monotonically with size",
     required_passed=int(required["passed"].sum()) if len(required) else 0, required=len(required),
     passed=int(checks["passed"].sum()), checks=len(checks))

# %% [markdown]
# **Did the claim hold in miniature?** The MASC paper reports that larger models memorise more
# verbatim. Here the target's forget-set ROUGE-L recall goes {glue:md}`verbatim` from
# {glue:md}`sizes` ({glue:md}`parameters` parameters): {glue:md}`verbatim_grows`. Asked the same
# facts in a held-out paraphrase of the question, the targets score {glue:md}`asked`, and with the
# answer's wording held out too {glue:md}`rephrased` (chance {glue:text}`chance:.2f` for both): what
# these tiny models hold is mostly verbatim, and what survives a rephrased question
# {glue:md}`asked_grows`. {glue:text}`required_passed` of {glue:text}`required` required
# quality-gate checks pass ({glue:text}`passed` of {glue:text}`checks` with the reported ones); the
# failing ones are listed in the table above and are reported, not hidden.

# %% tags=["hide-input"]
display(Markdown(record("masc-memorise-scale", f"target forget ROUGE-L {trend(verbatim)} over sizes "
                        f"{scale['size'].iloc[0]}-{scale['size'].iloc[-1]}", grows, profile)))
