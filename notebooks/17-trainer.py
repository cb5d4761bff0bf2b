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
# # Use it in your own trainer
#
# Most people who unlearn language models today train with the Hugging Face `Trainer`, often through
# OpenUnlearning, whose methods are `Trainer` subclasses whose `compute_loss` reads `inputs["forget"]`
# and `inputs["retain"]`. This page is for them: MASC's stopping rule and its loss, and PCGrad's and
# SAGO's gradient synthesis, are drop-ins for that `Trainer`, in `unlearning.hf`, and they need only
# torch and transformers (`pip install .`, no extras). They follow the conventions TRL users know:
#
# - **`UnlearningArguments`** extends `TrainingArguments` with the update rule (`sum`, `pcgrad`,
#   `pcgrad_global`, `sago`, `sago_additive`) and the two task weights;
# - **`GradientSynthesisMixin`** gives a `Trainer` subclass a `training_step` that backpropagates the
#   forget and the retain loss separately, accumulates each over the accumulation window, and hands
#   the optimizer their combination (SAGO paper, Algorithm 1); the Trainer clips and steps as usual;
# - **`MascStopCallback`** measures MASC's violation rate every few optimizer steps with the two-stage
#   rule of {doc}`05-stopping`, logs it into the Trainer's log history and stops the training;
# - **`masc_forget_loss`** is MASC's restricted-margin hinge as a plain function of a model's outputs
#   and a batch, for any `compute_loss`.
#
# Nothing here changes how the model, the tokenizer or the datasets are built. Each piece calls the
# very function our engine calls, and `tests/unlearning/test_hf.py` runs transformers' real `Trainer` beside
# our engine on the same data and settings: the losses of every step, the step the rule stops at and
# every weight agree (to the bit on one machine; the tests allow 1e-6), for every update rule, with
# gradient accumulation, and under `accelerate launch` with two processes
# (`tests/system/test_distributed.py`). The page runs the same two recipes once more, below.

# %% tags=["parameters"]
profile = "mini"
size = "s"              # the laboratory's TOFU target that the GradDiff trainer unlearns
trainer_steps = 20      # optimizer steps of the GradDiff run (and of the engine run it is compared with)
lr = 1e-3               # its learning rate
real_size = "135m"      # the real checkpoint's TOFU fine-tune that the MASC trainer unlearns
forget_split = "forget10"
masc_cap = 120          # at most this many steps of MASC (its recipe's budget is 3 epochs; the rule stops it first)
device = "auto"

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("17-trainer", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import tempfile

import matplotlib.pyplot as plt
import torch
from transformers import PrinterCallback, Trainer, TrainingArguments

from experiments.own_trainer import answer_probabilities, engine_beside, probes_of, start
from experiments.plotting import plot_trainer_geometry, plot_violation_trace, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab

use_book_style()
lab = Lab.for_profile(profile, device=device)
scratch = tempfile.mkdtemp(prefix="trainer-page-")  # the Trainer's output_dir (it saves nothing here)
lab_target = start(lab, "tofu", size, forget_split)
forget, retain, pad, model = lab_target.forget, lab_target.retain, lab_target.pad, lab_target.model()

# %% [markdown]
# ## GradDiff with SAGO, OpenUnlearning style
#
# GradDiff ascends the forget set's loss and descends the retain set's. As a plain `Trainer` it adds
# the two losses; with the mixin the two gradients are kept apart and SAGO keeps, coordinate by
# coordinate, the forget gradient where it agrees in sign with the retain gradient and the retain
# gradient where they conflict. The whole method is the class below: two losses, nothing else.

# %%
from unlearning.hf import ForgetRetainCollator, GradientSynthesisMixin, UnlearningArguments, engine_pairs


class GradDiff(GradientSynthesisMixin, Trainer):
    def forget_loss(self, model, inputs):
        return -model(**inputs["forget"]).loss  # gradient ascent on the forget answers

    def retain_loss(self, model, inputs):
        return model(**inputs["retain"]).loss  # the usual NLL on the retain answers


# %% [markdown]
# The data are OpenUnlearning's forget-retain pairs, each padded on its own by
# `ForgetRetainCollator` (`forget_retain_pairs(forget, retain)` draws a retain item for every forget
# item, as OpenUnlearning's dataset does). So that the page can compare the Trainer with our engine
# step for step, the pairs come here in the order our engine draws its batches (`engine_pairs`) and
# the Trainer reads them in that order (`train_sampling_strategy="sequential"`). The settings are
# the ones the engine runs below: fused AdamW with the Trainer's decay groups, a constant rate,
# clipping at 1. `log_geometry` adds the gradient geometry of every step to the log.

# %%
args = UnlearningArguments(
    output_dir=scratch, update_rule="sago", max_steps=trainer_steps, learning_rate=lr, per_device_train_batch_size=2,
    weight_decay=0.01, lr_scheduler_type="constant", max_grad_norm=1.0, train_sampling_strategy="sequential",
    log_geometry=True, logging_steps=1, remove_unused_columns=False, save_strategy="no", report_to=[], use_cpu=True)
trainer = GradDiff(model=model, args=args, train_dataset=engine_pairs(forget, retain, 2, trainer_steps),
                   data_collator=ForgetRetainCollator(pad))
trainer.remove_callback(PrinterCallback)  # the page shows the log below, as a figure and a table
trainer.train();

# %% [markdown]
# The Trainer's log history now holds, for every step, the forget and the retain loss (averaged over
# the accumulation window and the processes) and the geometry: the left panel shows that the forget
# and retain gradients of this target often point apart (cos(g_f, g_r) below 0), and that the update
# SAGO hands the optimizer never points against the retain gradient (cos(g_final, g_r) at or above 0,
# the paper's guarantee); the right panel shows how many coordinates the rule had to arbitrate.

# %% tags=["hide-input"]
plot_trainer_geometry(trainer.state.log_history)
plt.show()

# %% [markdown]
# ## The same run in our engine
#
# Our engine (`unlearning.engine.unlearn`, what every chapter runs) takes the same start model, the
# same batches and the same optimiser settings. The table gives both runs' losses at each step and,
# in the last line, the largest difference of any weight after the last step.

# %% tags=["hide-input"]
table, largest, moved = engine_beside(trainer, lab_target, rule="sago", steps=trainer_steps, lr=lr)
glue(steps=trainer_steps, largest=f"{largest:.1e}", moved=f"{moved:.1e}")
table.round(5)

# %% [markdown]
# After {glue:text}`steps` steps the largest weight difference between the two runs is
# {glue:md}`largest`, while the runs moved weights by up to {glue:md}`moved`: the Trainer with the
# mixin takes our engine's steps. The same holds for every rule of `synthesis`, with gradient
# accumulation (the combination is made once the window's gradients are summed, never per
# micro-batch) and across processes, as the tests check.
#
# ## MASC that stops itself inside `Trainer.train()`
#
# MASC needs no retain term in its released TOFU recipe (`masc/tofu`: the hinge at weight 0.05 and a
# LoRA adapter, {doc}`06-tofu`), so it is a `compute_loss` of one line around `masc_forget_loss`, and
# its stopping rule is a callback built from the same recipe. It runs here on the real checkpoint's
# TOFU fine-tune ({doc}`14-tofu-real`), at the recipe's own rate, with its LoRA adapter built by peft
# as any Hugging Face user builds one. The probe set is the first 32 forget sequences in their given
# order, the official behaviour ({doc}`05-stopping` shows the held-out alternative).

# %% tags=["hide-input"]
from peft import LoraConfig, get_peft_model

from unlearning.recipes import load as load_recipe

recipe = load_recipe("masc/tofu").run("MASC")
real = start(lab, "tofu-real", real_size, forget_split)
real_forget, real_pad, real_model = real.forget, real.pad, real.model()
before = answer_probabilities(real_model, real)

# %%
from unlearning.hf import EncodedCollator, MascStopCallback, masc_forget_loss, masc_settings

settings = masc_settings(recipe.hparams)  # the recipe's margin: self top-10 rivals, rho 0.7, eta 0.25, ...
cuts = torch.Generator().manual_seed(0)   # the continuation cuts of the forget batches


class MASC(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        loss = settings["gamma"] * masc_forget_loss(outputs, inputs, settings, generator=cuts)
        return (loss, outputs) if return_outputs else loss


stop = MascStopCallback.from_recipe(recipe, real_forget[:32], pad_token_id=real_pad)  # tolerance 0.475, every 2 steps
lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
masc_args = TrainingArguments(
    output_dir=scratch, max_steps=masc_cap, learning_rate=recipe.optim["lr"], per_device_train_batch_size=2,
    weight_decay=0.01, lr_scheduler_type="constant", max_grad_norm=0.0, logging_steps=1, save_strategy="no",
    remove_unused_columns=False, report_to=[], use_cpu=True)
masc = MASC(model=get_peft_model(real_model, lora), args=masc_args, train_dataset=real_forget,
            data_collator=EncodedCollator(real_pad), callbacks=[stop])
masc.remove_callback(PrinterCallback)
masc.train();

# %% [markdown]
# MASC is not a two-task method, so its arguments are the Trainer's own `TrainingArguments`; the
# recipe's optimiser is AdamW at its rate, a constant schedule and no clipping. The callback wrote every probe into the log history; the figure draws them as {doc}`05-stopping`
# does, with the tolerance as a dashed line and the confirmations as rings.

# %% tags=["hide-input"]
after = answer_probabilities(masc.model.merge_and_unload(), real)
plot_violation_trace(probes_of(masc.state.log_history), stop.rule.tolerance)
plt.title(f"MASC inside Trainer.train() on the {real_size} checkpoint")
plt.show()
fired = f"stopped itself at step {stop.stop_step}" if stop.stop_step else f"did not stop within {masc_cap} steps"
glue(fired=fired, forget_before=before[0], forget_after=after[0], retain_before=before[1], retain_after=after[1])

# %% [markdown]
# The run {glue:md}`fired`. The forget answers' mean probability went from
# {glue:text}`forget_before:.3f` to {glue:text}`forget_after:.3f`, the retain answers' from
# {glue:text}`retain_before:.3f` to {glue:text}`retain_after:.3f`; {doc}`14-tofu-real` evaluates the
# same recipe with every metric of TOFU. MASC's hinge pushes only while a token's margin exceeds
# tau = logit(rho), so once the probe's violation rate falls to the tolerance there is little left
# to push, and the callback ends the training at that step.
#
# **Several processes.** Nothing in the classes above changes for data parallelism: launch the same
# script with `accelerate launch --num_processes 2 script.py` (on CPUs,
# `accelerate launch --multi_gpu --num_processes 2` with `use_cpu=True` in the arguments forms a gloo
# group). The mixin computes both losses on the unwrapped network, so DDP's reducer stays out of
# the two backward passes, and averages the two accumulated gradients over the processes once per
# optimizer step before it combines them, which is what one process accumulating the same global
# batch would combine. `tests/system/test_distributed.py` runs the GradDiff trainer with SAGO and
# the MASC callback as two processes and finds one process's losses, probes, stop step and weights.
#
# **What the drop-ins guarantee, and what they do not.** The mixin combines the gradients that the
# Trainer would otherwise have summed; the optimizer, its schedule, clipping, mixed precision and the
# processes stay the Trainer's. Under fp16 the loss scale multiplies both gradients alike, and every
# rule is positively homogeneous, so the scaler's unscaling stays exact. The stop is decided on the
# main process and shared with the others, so every process stops at the same step. A wrong
# configuration fails when it is built, with one line: an update rule that does not exist, a subclass
# that lacks one of the two losses, arguments that are not `UnlearningArguments`, or a probe sequence
# without a single labelled next token (an empty continuation region).
