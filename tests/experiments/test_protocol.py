"""The book's lab and protocol (`experiments.lab`) over the run store, the paper-scale fetch,
and small helpers the chapters plot with."""

import os
from pathlib import Path

import pytest
import torch

from unlearning.engine import OptimConfig
from laboratory.learning import LearnPlan, learn
from experiments.lab import Lab, Protocol, tofu_oracle, tofu_target
from experiments.retention import sago_grid
from unlearning.recipes import load as load_recipe
from unlearning.runs import StopConfig

TINY = {"sizes": ["xs"], "main_size": "xs", "pretrain": {"epochs": 1, "batch_size": 64},
        "finetune": {"epochs": 2, "batch_size": 64}, "main_oracles": [], "muse": [], "vocab_size": 512}
QUICK = Protocol(lr=1e-3, batch_size=4, epochs=0.5, cap=6)


@pytest.fixture(scope="module")
def lab(world, tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    (root / "data").mkdir()
    os.symlink(world, root / "data" / "smoke")
    learn(LearnPlan.from_dict(TINY), world, root / "models" / "smoke", log=lambda _: None)
    return Lab.for_profile("smoke", root)


def test_missing_folders_name_the_make_target(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"make data PROFILE=mini"):
        Lab.for_profile("mini", tmp_path)


def test_a_run_is_computed_once_and_keyed_by_its_inputs(lab, monkeypatch):
    options = dict(forget_split="forget10", stop=StopConfig("fixed"), max_steps=2, optim=OptimConfig(lr=1e-3, batch_size=4))
    first = lab.run("tofu", "GradDiff", "tofu/target-xs", **options)
    assert first["steps"] == 2 and Path(first["dir"]).is_dir()
    # the same inputs, with a default hyper-parameter spelled out, read the stored record back
    import unlearning.runs as runs

    monkeypatch.setattr(runs, "unlearn", lambda *a, **k: pytest.fail("recomputed a stored run"))
    again = lab.run("tofu", "GradDiff", "tofu/target-xs", hparams={"alpha": 1.0}, **options)
    assert again["dir"] == first["dir"] and again["log"] == first["log"]
    monkeypatch.undo()
    other = lab.run("tofu", "GradDiff", "tofu/target-xs", **{**options, "optim": OptimConfig(lr=2e-3, batch_size=4)})
    assert other["dir"] != first["dir"]


def test_the_protocol_stops_masc_by_itself_and_gives_baselines_the_epoch_budget(lab):
    masc = lab.run("tofu", "MASC", "tofu/target-xs", QUICK, forget_split="forget10")
    assert masc["stop"]["kind"] == "violation" and masc["steps"] <= QUICK.cap
    ga = lab.run("tofu", "GA", "tofu/target-xs", QUICK, forget_split="forget10")
    assert ga["stop"]["kind"] == "fixed" and ga["steps"] == lab.steps("tofu", QUICK.epochs, QUICK.batch_size, "forget10")
    npo = lab.run("tofu", "NPO", "tofu/target-xs", QUICK, forget_split="forget10", stop="violation")
    assert npo["stop"]["kind"] == "violation" and npo["probes"]


def test_quantized_copy_is_made_once_and_differs_from_the_source(lab):
    source = lab.model("tofu/target-xs")
    copy = lab.quantized(source)
    stamp = (copy / "model.safetensors").stat().st_mtime_ns
    assert lab.quantized(source) == copy and (copy / "model.safetensors").stat().st_mtime_ns == stamp
    from unlearning.models import load_model

    a, b = load_model(source), load_model(copy)
    changed = [n for (n, p), q in zip(a.named_parameters(), b.parameters()) if not torch.equal(p, q)]
    assert changed and all("proj" in n for n in changed)
    assert lab.quantized(source, "fp4").name.endswith("-fp4") and copy.parent == lab.runs / "quantized"


def test_sago_grid_runs_forget_only_and_every_rule_with_geometry(lab):
    # at one given scale (without one, each run's calibration chooses its own: test_calibration)
    scale = lab.recipe_scale(load_recipe("sago/wmdp-bio"), "base-xs", "bio-forget-corpus", "wmdp")
    rows = sago_grid(lab, "wmdp", "base-xs", ["GradDiff"], rules=["sum", "sago"], recipe="sago/wmdp-bio",
                     forget_split="bio-forget-corpus", retain_split="bio-retain-corpus", max_steps=3, scale=scale)
    assert [(r["variant"], r["rule"]) for r in rows] == [("forget-only", "-"), ("+GD", "sum"), ("+GD+sago", "sago")]
    assert {r["factor"] for r in rows} == {scale.lr_factor}
    assert rows[0]["run"]["method"] == "GA" and "mmlu_accuracy" in rows[0]
    # each rule with its own official settings: SAGO's bio run at alpha 0.5 and lr 1e-5, +GD's at 3e-6
    assert [r["recipe"] for r in rows] == ["GA", "GradDiff/sum", "GradDiff/sago"]
    assert rows[2]["alpha"] == 0.5 and rows[1]["alpha"] == 1.0
    assert rows[2]["run"]["optim"]["lr"] / rows[1]["run"]["optim"]["lr"] == pytest.approx(1e-5 / 3e-6)
    assert rows[2]["run"]["packing"] == 64 and rows[2]["run"]["optim"]["warmup_steps"] == 1
    # warm-up ceil(0.1 x 3): a step cap is the run's total, as transformers counts it
    entry = rows[2]["run"]["log"][0]
    assert {"cos_retain_sago", "cos_retain_pcgrad", "conflict_down_proj"} <= set(entry)
    # SAGO's guarantee on the gradient it hands to the optimizer
    assert all(e["cos_final_retain"] >= -1e-6 for e in rows[2]["run"]["log"])


def test_tofu_oracle_matches_the_split_and_the_target_the_size():
    assert tofu_oracle("forget01", "s") == "tofu/retain99-s" and tofu_oracle("forget10", "xs") == "tofu/retain90-xs"
    assert tofu_target("xs") == "tofu/target-xs"


def test_each_muse_corpus_names_its_retrained_model_as_its_oracle():
    from experiments.lab import oracle_of

    assert oracle_of("muse-news", None, "s") == "muse-news/retain-s"
    assert oracle_of("muse-books", "raw/forget", "xs") == "muse-books/retain-xs"


def test_evaluation_records_its_cost(lab):
    metrics = lab.evaluate("wmdp", lab.model("base-xs"))
    assert metrics["eval_seconds"] > 0


# -- chapter helpers -------------------------------------------------------------------------


def test_pareto_front_by_hand():
    from experiments.plotting import pareto_front

    points = [(0.3, 0.5), (0.2, 0.4), (0.25, 0.45), (0.4, 0.45), (0.2, 0.3), (0.5, 0.6)]
    assert pareto_front(points) == [(0.2, 0.4), (0.25, 0.45), (0.3, 0.5), (0.5, 0.6)]


# -- paper-scale fetch, against a local mirror and a local "hub" checkpoint ----------------------


def test_fetch_writes_the_chapter_layout_and_skips_what_is_there(lab, world, tmp_path, monkeypatch):
    pytest.importorskip("datasets")
    from test_benchmarks import _write_hub_copy

    from unlearning.data import load_split
    from unlearning.fetch import fetch, read_plan

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _write_hub_copy(tmp_path / "hub", "locuslab/TOFU", world / "tofu", ["forget10", "retain90"])
    plan_file = tmp_path / "fetch.yaml"
    plan_file.write_text(f"models:\n  tofu/target-7b: {lab.model('tofu/target-xs')}\n"
                         "data:\n  tofu:\n    source: locuslab/TOFU\n    splits: [forget10, retain90]\n")
    plan = read_plan(plan_file)
    written = fetch(plan, tmp_path / "out", mirror=tmp_path / "hub", log=lambda _: None)
    assert len(written) == 3
    assert load_split(tmp_path / "out" / "data" / "paper" / "tofu", "forget10") == load_split(world / "tofu", "forget10")
    assert (tmp_path / "out" / "models" / "paper" / "tofu" / "target-7b" / "model.safetensors").is_file()
    assert fetch(plan, tmp_path / "out", mirror=tmp_path / "hub", log=lambda _: None) == []
    plan_file.write_text("data:\n  tofu: {source: locuslab/TOFU}\n")
    with pytest.raises(ValueError, match="needs 'source' and a non-empty 'splits'"):
        read_plan(plan_file)


def test_the_command_line_with_a_chapters_settings_reads_that_chapters_record(lab, capsys):
    from unlearning.cli import main

    chapter = lab.run("tofu", "MASC", "tofu/target-xs", forget_split="forget10")  # the book's Protocol()
    assert chapter["stop"]["kind"] == "violation"  # MASC stops by itself by default
    code = main(["unlearn", "--benchmark", "tofu", "--data", str(lab.data / "tofu"), "--model",
                 str(lab.model("tofu/target-xs")), "--tokenizer", str(lab.tokenizer), "--method", "MASC",
                 "--split", "forget10", "--store", str(lab.runs)])
    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.startswith(f"cached: {Path(chapter['dir']).parent}") and out.strip().endswith(chapter["dir"])


def test_a_bfloat16_run_completes_records_its_dtype_and_is_stored_apart(lab):
    from safetensors import safe_open

    from experiments.lab import Lab
    from unlearning.runtime import Runtime

    options = dict(forget_split="forget10", max_steps=2, optim=OptimConfig(lr=1e-3, batch_size=4))
    half = Lab(lab.data, lab.models, lab.runs, Runtime("cpu", "bfloat16")).run("tofu", "GradDiff", "tofu/target-xs",
                                                                              **options)
    full = lab.run("tofu", "GradDiff", "tofu/target-xs", **options)
    assert half["runtime"] == {"device": "cpu", "dtype": "bfloat16", "processes": 1} and half["steps"] == 2
    assert half["dir"] != full["dir"] and full["runtime"]["dtype"] == "float32"
    with safe_open(str(Path(half["dir"]) / "model.safetensors"), "pt") as weights:
        assert weights.get_tensor(next(iter(weights.keys()))).dtype == torch.bfloat16
    assert all(torch.isfinite(torch.tensor(e["forget_loss"])) for e in half["log"])


def test_a_lora_run_through_the_lab_and_through_the_cli_is_one_record(lab, capsys):
    pytest.importorskip("peft")
    from unlearning.cli import main

    chapter = lab.run("tofu", "NPO+KLR", "tofu/target-xs", forget_split="forget10", lora={"r": 4})
    assert chapter["lora"] == {"r": 4}
    code = main(["unlearn", "--benchmark", "tofu", "--data", str(lab.data / "tofu"), "--model",
                 str(lab.model("tofu/target-xs")), "--tokenizer", str(lab.tokenizer), "--method", "NPO+KLR",
                 "--split", "forget10", "--lora-rank", "4", "--store", str(lab.runs)])
    assert code == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith(f"cached: {Path(chapter['dir']).parent}")


def test_the_protocol_describes_itself_from_its_values():
    text = Protocol(lr=2e-4, batch_size=8, epochs=1.0, cap=50, tolerance=0.3).describe()
    assert "learning rate 0.0002" in text and "8 forget and 8 retain" in text and "1 epoch(s)" in text
    assert "violation rate of 0.3 (at most 50 steps)" in text


class _GridLab:
    """A lab whose RMU runs are named by their (steering, alpha, lr) and whose metrics are a table."""

    def __init__(self, start: dict, table: dict):
        self.start, self.table, self.asked = start, table, []

    def model(self, name):
        return name

    def run(self, benchmark, method, model, protocol, forget_split=None, hparams=None):
        assert method == "RMU" and hparams["steering_scale"] == "activation_norm"
        self.asked.append((hparams["steering"], hparams["alpha"], protocol.lr))
        return {"dir": (hparams["steering"], hparams["alpha"], protocol.lr)}

    def evaluate(self, benchmark, model_dir, config=None, oracle=None):
        return self.start if model_dir == "target" else self.table[model_dir]


def test_rmu_tuning_takes_the_most_forgetting_run_that_keeps_retention():
    from experiments.lab import Protocol, tune_rmu

    grid = {"steering": (1.0, 4.0), "alpha": (100.0, 1200.0), "lr_multiple": (1.0, 10.0)}
    table = {key: {"f": 0.85, "r": 0.92} for key in
             [(c, a, lr) for lr in (1e-4, 1e-3) for c in (1.0, 4.0) for a in (100.0, 1200.0)]}
    table[(1.0, 100.0, 1e-4)] = {"f": 0.80, "r": 0.90}
    table[(4.0, 100.0, 1e-3)] = {"f": 0.10, "r": 0.50}   # forgets most but breaks retention: not eligible
    table[(4.0, 1200.0, 1e-3)] = {"f": 0.40, "r": 0.86}  # 0.90 - 0.86 = 0.04 <= 0.05: eligible, lowest f
    lab = _GridLab({"f": 0.9, "r": 0.90}, table)
    tuned = tune_rmu(lab, "tofu", "target", Protocol(lr=1e-4), forget_metric="f", retain_metric="r", grid=grid)
    assert tuned.hparams == {"steering": 4.0, "steering_scale": "activation_norm", "alpha": 1200.0}
    assert tuned.protocol == Protocol(lr=1e-3)
    assert sorted(lab.asked) == sorted(table) and [row["chosen"] for row in tuned.rows].count(True) == 1
    assert sum(not row["eligible"] for row in tuned.rows) == 1
    # nothing keeps retention within 0.01 of 0.99: the best-retaining run is taken
    table[(1.0, 1200.0, 1e-4)] = {"f": 0.85, "r": 0.95}
    tuned = tune_rmu(_GridLab({"f": 0.9, "r": 0.99}, table), "tofu", "target", Protocol(lr=1e-4), forget_metric="f",
                     retain_metric="r", grid=grid, max_retain_drop=0.01)
    assert (tuned.hparams["steering"], tuned.hparams["alpha"], tuned.protocol.lr) == (1.0, 1200.0, 1e-4)
    assert "0.01" in tuned.rule
    with pytest.raises(ValueError, match="needs non-empty"):
        tune_rmu(lab, "tofu", "target", forget_metric="f", retain_metric="r", grid={"steering": (1.0,)})


def test_released_weights_keep_their_evaluations_and_come_back_when_a_step_needs_them(lab):
    """Issue 29: a run keeps what later steps read. `release` frees the weights of the folders the
    lab touched (here every size, min_bytes=0); a cached evaluation is read without them, and an
    evaluation or a 4-bit copy that needs them recomputes the run, to the same bits."""
    from unlearning.benchmarks import EvalConfig
    from unlearning.store import file_hash, is_released, weight_files

    record = lab.run("tofu", "NPO+GD", "tofu/target-xs", forget_split="forget10", stop=StopConfig("fixed"), max_steps=3,
                     optim=OptimConfig(lr=1e-3, batch_size=4))
    folder = Path(record["dir"])
    weights = file_hash(*weight_files(folder))
    metrics = lab.evaluate("tofu", folder)
    copy = lab.quantized(folder, "nf4")
    quantized = lab.evaluate("tofu", copy)
    assert lab.release(min_bytes=0) > 0
    assert is_released(folder) and is_released(copy) and not weight_files(folder)
    assert lab.evaluate("tofu", folder) == metrics and lab.evaluate("tofu", copy) == quantized  # cached: no weights read
    assert lab.quantized(folder, "nf4") == copy and is_released(folder)
    lab.evaluate("tofu", copy, config=EvalConfig(max_new_tokens=4))  # not cached: the copy, and its run, come back
    assert not is_released(copy) and not is_released(folder)
    assert file_hash(*weight_files(folder)) == weights
    assert lab.release(min_bytes=10**12) == 0  # the default keeps small models


def test_the_evaluation_config_follows_the_benchmarks_own_forget_splits():
    """A benchmark with several forget splits (TOFU, and TOFU on the real model) keys its
    evaluation by the chosen one; a benchmark with one ignores the argument; a split the
    benchmark does not have is refused by name."""
    from unlearning.benchmarks import EvalConfig
    from experiments.lab import eval_config

    assert eval_config("tofu", "forget05").forget_split == "forget05"
    assert eval_config("tofu-real", "forget01").forget_split == "forget01"
    assert eval_config("muse-news", "forget05") == EvalConfig() == eval_config("tofu")
    assert eval_config("tofu", "forget10", max_new_tokens=8) == EvalConfig(max_new_tokens=8)
    with pytest.raises(ValueError, match="forget split of tofu must be one of forget01, forget05, forget10"):
        eval_config("tofu", "forget50")


@pytest.mark.parametrize("stop_kind", [None, "fixed", "violation"])
def test_the_commands_default_run_is_the_chapters_protocol_run(stop_kind):
    """`unlearning unlearn` without --recipe runs `recipes.protocol_run`; the chapters run
    `Protocol().recipe_run`: the same run for every method and stop (MASC stops by itself by default)."""
    from unlearning.methods import METHODS
    from unlearning.recipes import protocol_run

    for method in METHODS:
        assert protocol_run(method, stop_kind) == Protocol().recipe_run(method, stop_kind), method
    assert protocol_run("MASC").stop["kind"] == "violation" and protocol_run("GA").stop["kind"] == "fixed"
    changed = Protocol(lr=3e-4, cap=7).recipe_run("MASC")
    assert changed.optim["lr"] == 3e-4 and changed.budget == {"steps": 7} and changed != protocol_run("MASC")


def test_a_calibration_runs_its_ladder_from_the_top_and_its_chosen_rung_is_the_chapters_run(lab):
    from experiments.calibration import calibration

    cal = calibration(lab, "openunlearning/tofu", "GradDiff", "tofu/target-xs", split="forget10", max_steps=4)
    base = lab.recipe_scale(load_recipe("openunlearning/tofu"), "tofu/target-xs", "forget10", "tofu")
    assert cal.base == base and [r.factor for r in cal.rungs] == [base.lr_factor / 4 ** k for k in range(len(cal.rungs))]
    kept = [r.kept for r in cal.rungs]
    assert not any(kept[:-1]) and kept[-1] == (cal.chosen is not None)  # it stops at the first rung that keeps
    # a rung that kept its model was read at its checkpoint (step 2) and its end (4); one that failed, from its end back
    assert all(r.utility[-1][0] == 4 for r in cal.rungs)
    assert all([step for step, _ in r.utility] == [2, 4] for r in cal.rungs if r.kept)
    assert cal.start_utility == lab.evaluate("tofu", lab.model("tofu/target-xs"))["model_utility"]
    # the chapter's run at the chosen scale is that rung's run, read back from the store
    chosen = lab.recipe_run("openunlearning/tofu", "GradDiff", "tofu/target-xs", forget_split="forget10", max_steps=4,
                            scale=cal.scale)
    assert chosen["optim"]["lr"] == pytest.approx(cal.rung.lr) and chosen["steps"] == cal.rung.steps == 4
