"""The papers' recipes (issue 30): every value pinned against a table written out here from the
official scripts, every value with a source, the laboratory's scaling rule worked out by hand, and
a recipe's run from the command line."""

import json
from pathlib import Path

import pytest

from unlearning.recipes import PAPER_SCALE, budget_steps, laboratory_scale, load, names, scaled, warmup_steps

ROOT = Path(__file__).resolve().parents[2]

# (recipe, run): method, rule, lr, global batch, budget, warm-up, weight decay, decay groups, schedule, clip,
# LoRA rank, stop tolerance (None: fixed), key settings. Read off:
# MASC: repro/run_masc_tofu.sh, repro/run_masc_news.sh, exp_scaling/scripts/run_unlearn_qwen25_family_...sh and
#   scripts/run_margin_unlearning.py (torch AdamW at its default decay, constant rate, no clipping);
# OpenUnlearning: configs/experiment/unlearn/tofu/default.yaml, configs/trainer/{finetune,GradDiff,NPO,SimNPO}.yaml
#   and the HF Trainer's defaults (linear schedule, max_grad_norm 1.0, decay groups);
# Unlearn-Simple MUSE: MUSE/README.md, MUSE/baselines/unlearn.py, baselines/iterative.py;
# SAGO: configs/experiment/unlearn/{wmdp,rwku}/*.yaml, configs/trainer/finetune.yaml, scripts/*.sh (global batch 32).
OU = dict(lr=1e-5, batch=32, budget={"epochs": 10, "anchor": "forget"}, warmup={"epochs": 1.0}, decay=0.01,
          groups="trainer", schedule="linear", clip=1.0, lora=None, tolerance=None)
MASC = dict(lr=1e-4, batch=2, budget={"epochs": 3, "anchor": "max"}, warmup=None, decay=0.01, groups="all",
            schedule="constant", clip=None, lora=16)
MUSE = dict(lr=1e-5, batch=2, budget={"epochs": 10, "anchor": "forget"}, warmup=None, decay=0.0, groups="trainer",
            schedule="constant", clip=1.0, lora=None, tolerance=None)
SAGO = dict(batch=32, warmup={"ratio": 0.1}, decay=0.0, groups="trainer", schedule="linear", clip=1.0, lora=None,
            tolerance=None)
PINNED = {
    ("masc/tofu", "MASC"): dict(MASC, method="MASC", tolerance=0.475, confirm=32,
                                settings=dict(gamma=0.05, alpha=0.0, competitors="self", k=10, beta=1.0, rho=0.7,
                                              eta=0.25, cut_min=0.2, cut_max=0.6, min_prefix=32, min_suffix=32)),
    ("masc/muse-news", "MASC"): dict(MASC, method="MASC", tolerance=0.55, confirm=64,
                                     settings=dict(gamma=0.5, alpha=1.0, competitors="teacher", k=2, delta=0.5, beta=5.0,
                                                   rho=0.7, eta=0.5, cut_min=0.6, cut_max=0.6, min_suffix=128)),
    ("masc/scale", "MASC"): dict(MASC, method="MASC", tolerance=0.2, confirm=64,
                                 settings=dict(gamma=0.1, alpha=1.0, competitors="self", k=10, beta=1.0, rho=0.5, eta=0.5)),
    ("masc/scale", "SimNPO"): dict(OU, method="SimNPO+GD", settings=dict(gamma=0.125, alpha=1.0, beta=4.5, simnpo_gamma=0.0)),
    ("openunlearning/tofu", "GradDiff"): dict(OU, method="GradDiff", settings=dict(gamma=1.0, alpha=1.0)),
    ("openunlearning/tofu", "NPO+KLR"): dict(OU, method="NPO+KLR", settings=dict(beta=0.1, gamma=1.0, alpha=1.0)),
    ("openunlearning/tofu", "SimNPO+GD"): dict(OU, method="SimNPO+GD",
                                               settings=dict(gamma=0.125, alpha=1.0, beta=4.5, simnpo_gamma=0.0)),
    ("unlearn-simple/muse-news", "GradDiff"): dict(MUSE, method="GradDiff", settings=dict(gamma=0.1, alpha=0.1)),
    ("unlearn-simple/muse-news", "NPO+KLR"): dict(MUSE, method="NPO+KLR", settings=dict(beta=0.1, gamma=1.0, alpha=0.1)),
    ("unlearn-simple/muse-news", "SimNPO+GD"): dict(MUSE, method="SimNPO+GD", batch=4,
                                                    settings=dict(gamma=1.0, alpha=0.1, beta=0.7, simnpo_gamma=0.07)),
    ("unlearn-simple/muse-books", "SimNPO+GD"): dict(MUSE, method="SimNPO+GD", batch=4,
                                                     settings=dict(gamma=1.0, alpha=0.1, beta=0.75, simnpo_gamma=0.075)),
    ("sago/wmdp-bio", "GA"): dict(SAGO, method="GA", lr=5e-7, budget={"steps": 100}, settings=dict(gamma=1.0)),
    ("sago/wmdp-bio", "GradDiff/sum"): dict(SAGO, method="GradDiff", lr=3e-6, budget={"steps": 100},
                                            settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/wmdp-cyber", "GradDiff/sum"): dict(SAGO, method="GradDiff", lr=5e-6, budget={"steps": 100},
                                              settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/wmdp-bio", "GradDiff/pcgrad"): dict(SAGO, method="GradDiff", rule="pcgrad", lr=1e-5, budget={"steps": 100},
                                               settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/wmdp-bio", "GradDiff/pcgrad_global"): dict(SAGO, method="GradDiff", rule="pcgrad_global", lr=1e-5,
                                                      budget={"steps": 300}, settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/wmdp-cyber", "GradDiff/pcgrad_global"): dict(SAGO, method="GradDiff", rule="pcgrad_global", lr=1e-5,
                                                        budget={"steps": 100}, settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/wmdp-bio", "GradDiff/sago"): dict(SAGO, method="GradDiff", rule="sago", lr=1e-5, budget={"steps": 500},
                                             settings=dict(alpha=0.5, gamma=1.0)),
    ("sago/wmdp-cyber", "GradDiff/sago"): dict(SAGO, method="GradDiff", rule="sago", lr=1e-5, budget={"steps": 500},
                                               settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/wmdp-bio", "NPO"): dict(SAGO, method="NPO", lr=5e-6, budget={"steps": 100}, settings=dict(beta=0.05)),
    ("sago/wmdp-bio", "NPO+GD/sum"): dict(SAGO, method="NPO+GD", lr=1e-5, budget={"steps": 100},
                                          settings=dict(beta=0.01, alpha=0.1, gamma=1.0)),
    ("sago/wmdp-bio", "NPO+GD/pcgrad"): dict(SAGO, method="NPO+GD", rule="pcgrad", lr=1e-5, budget={"steps": 100},
                                             settings=dict(beta=1e-4, alpha=1.0, gamma=0.1)),
    ("sago/wmdp-cyber", "NPO+GD/pcgrad"): dict(SAGO, method="NPO+GD", rule="pcgrad", lr=1e-5, budget={"steps": 100},
                                               settings=dict(beta=0.005, alpha=0.1, gamma=1.0)),
    ("sago/wmdp-bio", "NPO+GD/sago"): dict(SAGO, method="NPO+GD", rule="sago", lr=1e-5, budget={"steps": 150},
                                           settings=dict(beta=1e-4, alpha=1.0, gamma=0.1)),
    ("sago/wmdp-cyber", "NPO+GD/sago"): dict(SAGO, method="NPO+GD", rule="sago", lr=1e-5, budget={"steps": 300},
                                             settings=dict(beta=0.001, alpha=0.1, gamma=1.0)),
    ("sago/wmdp-bio", "SimNPO"): dict(SAGO, method="SimNPO", lr=5e-6, budget={"steps": 100},
                                      settings=dict(beta=5.0, simnpo_gamma=0.5)),
    ("sago/wmdp-bio", "SimNPO+GD/sum"): dict(SAGO, method="SimNPO+GD", lr=1e-5, budget={"steps": 100},
                                             settings=dict(alpha=0.1, gamma=1.0, beta=0.7, simnpo_gamma=0.07)),
    ("sago/wmdp-bio", "SimNPO+GD/pcgrad"): dict(SAGO, method="SimNPO+GD", rule="pcgrad", lr=1e-5, budget={"steps": 100},
                                                settings=dict(alpha=0.1, gamma=1.0, beta=0.02, simnpo_gamma=0.002)),
    ("sago/wmdp-bio", "SimNPO+GD/sago"): dict(SAGO, method="SimNPO+GD", rule="sago", lr=1e-5, budget={"steps": 150},
                                              settings=dict(alpha=0.1, gamma=1.0, beta=0.02, simnpo_gamma=0.002)),
    ("sago/wmdp-cyber", "SimNPO+GD/sago"): dict(SAGO, method="SimNPO+GD", rule="sago", lr=1e-5, budget={"steps": 200},
                                                settings=dict(alpha=0.1, gamma=1.0, beta=0.1, simnpo_gamma=0.01)),
    ("sago/rwku", "GA"): dict(SAGO, method="GA", lr=7e-7, budget={"epochs": 2, "anchor": "forget"}, settings=dict(gamma=1.0)),
    ("sago/rwku", "GradDiff/sum"): dict(SAGO, method="GradDiff", lr=8e-7, budget={"epochs": 2, "anchor": "forget"},
                                        settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/rwku", "GradDiff/pcgrad"): dict(SAGO, method="GradDiff", rule="pcgrad", lr=3e-6,
                                           budget={"epochs": 2, "anchor": "forget"}, settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/rwku", "GradDiff/pcgrad_global"): dict(SAGO, method="GradDiff", rule="pcgrad_global", lr=4e-6,
                                                  budget={"epochs": 2, "anchor": "forget"}, settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/rwku", "GradDiff/sago"): dict(SAGO, method="GradDiff", rule="sago", lr=1e-5,
                                         budget={"epochs": 2, "anchor": "forget"}, settings=dict(alpha=1.0, gamma=1.0)),
    ("sago/rwku", "NPO+GD/sum"): dict(SAGO, method="NPO+GD", lr=3e-6, budget={"epochs": 2, "anchor": "forget"},
                                      settings=dict(beta=0.001, alpha=1.0, gamma=1.0)),
    ("sago/rwku", "NPO+GD/pcgrad"): dict(SAGO, method="NPO+GD", rule="pcgrad", lr=8e-6,
                                         budget={"epochs": 2, "anchor": "forget"},
                                         settings=dict(beta=0.001, alpha=1.0, gamma=1.0)),
    ("sago/rwku", "NPO+GD/sago"): dict(SAGO, method="NPO+GD", rule="sago", lr=1e-5,
                                       budget={"epochs": 2, "anchor": "forget"}, settings=dict(beta=0.001, alpha=1.0, gamma=1.0)),
    ("sago/rwku", "SimNPO+GD/sum"): dict(SAGO, method="SimNPO+GD", lr=8e-6, budget={"epochs": 2, "anchor": "forget"},
                                         settings=dict(alpha=1.0, gamma=1.0, beta=0.5, simnpo_gamma=0.05)),
    ("sago/rwku", "SimNPO+GD/pcgrad"): dict(SAGO, method="SimNPO+GD", rule="pcgrad", lr=8e-6,
                                            budget={"epochs": 2, "anchor": "forget"},
                                            settings=dict(alpha=0.5, gamma=1.0, beta=0.5, simnpo_gamma=0.05)),
    ("sago/rwku", "SimNPO+GD/sago"): dict(SAGO, method="SimNPO+GD", rule="sago", lr=1e-5,
                                          budget={"epochs": 2, "anchor": "forget"},
                                          settings=dict(alpha=0.1, gamma=1.0, beta=0.1, simnpo_gamma=0.01)),
}


@pytest.mark.parametrize("recipe, run", sorted(PINNED))
def test_every_pinned_value_is_the_official_scripts(recipe, run):
    expected, got = PINNED[recipe, run], load(recipe).run(run)
    assert got.method == expected["method"] and got.rule == expected.get("rule", "sum")
    o = got.optim
    assert (o["optimizer"], o["lr"], o["batch_size"], o["weight_decay"], o["decay_groups"], o["schedule"],
            o["max_grad_norm"]) == ("adamw", pytest.approx(expected["lr"]), expected["batch"], expected["decay"],
                                    expected["groups"], expected["schedule"], expected["clip"])
    assert got.budget == expected["budget"] and got.warmup == expected["warmup"]
    assert (got.lora or {}).get("r") == expected["lora"]
    if expected["lora"]:
        assert got.lora == {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}
    if expected["tolerance"] is None:
        assert got.stop == {"kind": "fixed"}
    else:
        assert got.stop == {"kind": "violation", "tolerance": expected["tolerance"], "every": 2, "trigger_size": 4,
                            "confirm_size": expected["confirm"]}
    for key, value in expected["settings"].items():
        assert got.hparams[key] == pytest.approx(value), key
    assert got.packing == ({"block_length": 512} if recipe.startswith("sago/") else None)


def test_every_recipe_loads_with_a_source_for_every_value_and_its_method_settings():
    from unlearning.methods import get_method
    from unlearning.recipes import value_keys

    assert len(names()) == 11
    for name in names():
        recipe = load(name)
        assert all(recipe.source(run, key) for run, key in value_keys(recipe))
        for run in recipe.runs.values():
            if run.method is not None:  # the book's protocol: the caller's method
                get_method(run.method).hparams(**run.hparams)  # every setting is one the method has, of its type


def test_a_value_without_a_source_is_refused(tmp_path, monkeypatch):
    import unlearning.recipes as recipes

    text = (recipes.RECIPES_DIR / "masc" / "tofu.yaml").read_text().replace(
        '  MASC.hparams.eta: "repro/run_masc_tofu.sh: --forget_margin_buffer_eta 0.25"\n', "")
    (tmp_path / "masc").mkdir()
    (tmp_path / "masc" / "tofu.yaml").write_text(text)
    monkeypatch.setattr(recipes, "RECIPES_DIR", tmp_path)
    with pytest.raises(ValueError, match="no source for MASC.hparams.eta"):
        recipes.load("masc/tofu")
    with pytest.raises(ValueError, match="recipe must be one of masc/tofu"):
        recipes.load("masc/nope")


def test_the_laboratory_rule_by_hand():
    """TOFU-mini from a model fine-tuned at 2e-3 on a forget set of 100: rates x 200, batches x 1/4
    (OpenUnlearning's 32 -> 8; MASC's 2 -> 0.5 -> at least 1), so MASC's rate stays 10x the baselines'."""
    masc, baselines = load("masc/tofu"), load("openunlearning/tofu")
    for recipe in (masc, baselines):
        scale = laboratory_scale(recipe, model_lr=2e-3, forget_size=100)
        assert scale.lr_factor == pytest.approx(200) and scale.size_factor == pytest.approx(0.25)
        assert scale.block_length is None  # no packing in these recipes
    scale = laboratory_scale(masc, model_lr=2e-3, forget_size=100)
    ours_masc, ours_npo = scaled(masc.run("MASC"), scale), scaled(baselines.run("NPO+KLR"), scale)
    assert ours_masc.optim["lr"] == pytest.approx(2e-2) and ours_masc.optim["batch_size"] == 1
    assert ours_npo.optim["lr"] == pytest.approx(2e-3) and ours_npo.optim["batch_size"] == 8
    assert ours_masc.optim["lr"] / ours_npo.optim["lr"] == pytest.approx(10)
    assert ours_masc.hparams == masc.run("MASC").hparams and ours_masc.stop == masc.run("MASC").stop
    # a real checkpoint runs the recipe's own rates; the batch still follows the forget set
    real = laboratory_scale(baselines, model_lr=None, forget_size=20)
    assert real.lr_factor == 1.0 and scaled(baselines.run("GradDiff"), real).optim["batch_size"] == 2  # 32 x 20/400 = 1.6
    assert "x 200" in scale.describe() and "x 1 " in real.describe()


def test_the_rule_on_sago_keeps_the_steps_and_rate_ratios_and_packs_in_laboratory_blocks():
    recipe = load("sago/wmdp-bio")
    scale = laboratory_scale(recipe, model_lr=3e-3, forget_size=120)
    assert scale.size_factor is None and scale.block_length == 64 and scale.lr_factor == pytest.approx(300)
    pcgrad, sago = (scaled(recipe.run(name), scale) for name in ("GradDiff/pcgrad", "GradDiff/sago"))
    assert pcgrad.optim["batch_size"] == sago.optim["batch_size"] == 1  # the paper's corpus size is not released
    assert (pcgrad.budget, sago.budget) == ({"steps": 100}, {"steps": 500})
    assert sago.optim["lr"] / pcgrad.optim["lr"] == pytest.approx(1.0) and pcgrad.packing == {"block_length": 64}
    assert scaled(recipe.run("GradDiff/sago"), PAPER_SCALE) == recipe.run("GradDiff/sago")


@pytest.mark.parametrize("recipe, run, n_forget, steps, warmup", [
    ("openunlearning/tofu", "NPO+KLR", 400, 130, 12),   # 10 x ceil(400/32); int(1.0 * 400 // 32)
    ("masc/tofu", "MASC", 400, 5400, 0),                 # 3 x max(3600, 400) / 2: the official 1,800 steps an epoch
    ("sago/wmdp-bio", "GradDiff/sago", 10_000, 500, 50),  # ceil(0.1 x 500)
    ("sago/rwku", "NPO+GD/sago", 333, 22, 3),             # 2 x ceil(333/32) = 22; ceil(0.1 x 22) = 3
])
def test_budgets_and_warm_ups_as_the_official_trainers_count_them(recipe, run, n_forget, steps, warmup):
    r = load(recipe).run(run)
    assert budget_steps(r, n_forget, 3600) == steps and warmup_steps(r, n_forget, 3600) == warmup
    spec = load(recipe).spec(run, "some/model", PAPER_SCALE, n_forget=n_forget, n_retain=3600)
    assert spec.max_steps == steps and spec.optim.warmup_steps == warmup
    assert spec.optim.schedule == r.optim["schedule"] and spec.optim.decay_groups == r.optim["decay_groups"]
    assert spec.optim.max_grad_norm == r.optim["max_grad_norm"] and spec.lora == r.lora
    assert spec.packing == ((r.packing or {}).get("block_length")) and spec.hparams == r.hparams


def test_a_sago_recipe_from_the_command_line_packs_clips_decays_and_schedules_as_named(target, tokenizer, tmp_path,
                                                                                        capsys, monkeypatch):
    """Issue 36: `unlearning unlearn --recipe sago/wmdp-bio` on the smoke corpus, at the laboratory
    scale: record.json names the packing, optimiser, schedule, decay groups and clipping the recipe
    names, and gives the rate of every step (the warm-up's first at 0)."""
    from unlearning.cli import main
    from unlearning.models import save_model

    monkeypatch.chdir(ROOT)  # data/smoke/wmdp is committed
    save_model(target, tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "tok")
    code = main(["unlearn", "--recipe", "sago/wmdp-bio", "--method", "GradDiff", "--rule", "sago", "--scale", "laboratory",
                 "--benchmark", "wmdp-smoke", "--model", str(tmp_path / "model"), "--tokenizer", str(tmp_path / "tok"),
                 "--max-steps", "10", "--store", str(tmp_path / "runs")])
    assert code == 0, capsys.readouterr().err
    (path,) = (tmp_path / "runs").glob("*/record.json")
    record = json.loads(path.read_text())
    assert record["rule"] == "sago" and record["packing"] == 64 and record["hparams"]["alpha"] == 0.5
    optim = record["optim"]
    assert (optim["optimizer"], optim["schedule"], optim["decay_groups"], optim["max_grad_norm"], optim["weight_decay"]) \
        == ("adamw", "linear", "trainer", 1.0, 0.0)
    assert optim["warmup_steps"] == 1 and optim["batch_size"] == 1  # ceil(0.1 x 10); the paper's corpus size is unknown
    rates = [entry["lr"] for entry in record["log"]]
    assert rates[0] == 0.0 and rates[1] == pytest.approx(optim["lr"]) and rates[-1] == pytest.approx(optim["lr"] / 9)
    assert record["forget_examples"] > 10  # 64-token blocks of the smoke corpus, not its passages


def test_the_command_line_refuses_an_unknown_recipe_or_run(tmp_path, capsys):
    from unlearning.cli import main

    for extra, words in ((["--recipe", "masc/nope"], "recipe must be one of"),
                         (["--recipe", "sago/wmdp-bio"], "has several runs"),
                         (["--recipe", "sago/wmdp-bio", "--method", "MASC"], "has no run MASC"),
                         (["--recipe", "masc/tofu", "--scale", "huge"], "--scale must be paper or laboratory")):
        code = main(["unlearn", "--model", str(tmp_path), "--data", str(tmp_path), *extra])
        assert code == 2 and words in capsys.readouterr().err, extra


def test_the_learned_rate_is_the_fine_tunes_own_and_none_for_a_base_or_real_checkpoint(tmp_path):
    from unlearning.recipes import learned_rate

    fine_tune, base, real = tmp_path / "target", tmp_path / "base", tmp_path / "real"
    for folder, info in ((fine_tune, {"train": {"lr": "0.002"}}), (base, {"base": True, "train": {"lr": 0.01}})):
        folder.mkdir()
        (folder / "learning.json").write_text(json.dumps(info))
    real.mkdir()  # a fetched checkpoint: no learning.json
    assert learned_rate(fine_tune) == 0.002 and learned_rate(base) is None and learned_rate(real) is None
