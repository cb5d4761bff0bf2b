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
manifest_path = "models/mini/manifest.json"   # written by `make models` (unlearning learn)

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("03-learning", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.claims import record
from unlearning.data import load_split
from unlearning.gates import FOUR_CHOICE_CHANCE, PARAPHRASE_CHANCE, scale_table, verdicts
from unlearning.plotting import use_book_style
from unlearning.verdicts import grows_with_size, item_resolution

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
def recipe(entry: dict) -> dict:
    train = json.loads((Path(entry["path"]) / "learning.json").read_text())["train"]
    return {"lr": train["lr"], "batch": train["batch_size"], "epochs": train["epochs"]}


models = pd.DataFrame([{"model": name, "parameters": entry["parameters"], **recipe(entry), "train s": entry["train_seconds"],
                        **{k: round(v, 3) for k, v in entry["gates"].items()}} for name, entry in manifest.items()])
models.set_index("model").fillna("")

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
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.plot(scale["parameters"], scale["target forget ROUGE-L"], "o-", label="target ROUGE-L (verbatim)")
left.plot(scale["parameters"], scale["target paraphrased-question acc"], "s--", label="target paraphrased-question acc")
left.plot(scale["parameters"], scale["target paraphrase acc"], "^--", label="target paraphrase acc (question and answer)")
left.plot(scale["parameters"], scale["oracle forget ROUGE-L"], "o-", color="grey", label="oracle ROUGE-L")
left.axhline(PARAPHRASE_CHANCE, color="grey", lw=0.8, ls=":", label="paraphrase chance")
right.plot(scale["parameters"], scale["probe trained form"], "o-", label="trained form (verbatim)")
right.plot(scale["parameters"], scale["probe held-out form"], "s--", label="held-out form (knowledge)")
right.axhline(FOUR_CHOICE_CHANCE, color="grey", lw=0.8, ls=":", label="chance")
for ax, title in ((left, "TOFU-mini target"), (right, "base model probes")):
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=8)
fig.tight_layout()
plt.show()


# %% [markdown]
# (verdict-learning)=
# ## Did the claim hold?

# %% tags=["hide-input"]
def monotone(values) -> bool:
    values = list(values)
    return all(b >= a for a, b in zip(values, values[1:]))


verbatim = scale["target forget ROUGE-L"]
asked = scale["target paraphrased-question acc"]
rephrased = scale["target paraphrase acc"]
required = checks[checks["required"]] if len(checks) else checks
passed = int(required["passed"].sum()) if len(required) else 0


def trend(values) -> str:
    return " → ".join(f"{v:.2f}" for v in values)


display(Markdown(
    f"**Did the claim hold in miniature?** The MASC paper reports that larger models memorise more "
    f"verbatim. Here the target's forget-set ROUGE-L recall goes {trend(verbatim)} from "
    f"{scale['size'].iloc[0]} to {scale['size'].iloc[-1]} "
    f"({scale['parameters'].iloc[0]:,} to {scale['parameters'].iloc[-1]:,} parameters): "
    f"{'it grows with every size' if monotone(verbatim) else 'it does **not** grow monotonically'}. "
    f"Asked the same facts in a held-out paraphrase of the question, the targets score {trend(asked)}, "
    f"and with the answer's wording held out too {trend(rephrased)} (chance {PARAPHRASE_CHANCE:.2f} for both): "
    f"what these tiny models hold is mostly verbatim, and what survives a rephrased question "
    f"{'grows with every size' if monotone(asked) else 'does **not** grow monotonically with size'}. "
    f"{passed} of {len(required)} required quality-gate checks pass "
    f"({int(checks['passed'].sum())} of {len(checks)} with the reported ones); the failing ones are listed "
    f"in the table above and are reported, not hidden."))
# the gates read forget10: one of its answers moves the mean ROUGE-L by at most 1/n
profile = Path(manifest_path).parent.name
resolution = item_resolution(len(load_split(Path("data") / profile / "tofu", "forget10")))
display(Markdown(record("masc-memorise-scale", f"target forget ROUGE-L {trend(verbatim)} over sizes "
                        f"{scale['size'].iloc[0]}-{scale['size'].iloc[-1]}",
                        grows_with_size(list(verbatim), resolution), profile)))
