"""The chapters' tables (`experiments.tables`): a recipe run in words, as its YAML file says it (the
values below are read off `recipes/sago/wmdp-bio.yaml` and `recipes/masc/tofu.yaml` by hand), and
Proposition 1's summary counted on a table made here."""

import pandas as pd
import pytest

from experiments.tables import describe_run, proposition1_summary, recipe_table
from unlearning.recipes import Scale, load


def test_a_sago_run_in_words_is_its_recipe_file():
    words = describe_run(load("sago/wmdp-bio").run("GradDiff/sago"))
    assert words == {
        "method": "GradDiff", "rule": "sago", "lr": "1e-05", "global batch": 32, "budget": "500 steps",
        "warm-up": "10% of the steps", "schedule": "linear", "decay": "0 (no norms/biases)", "clip": "1",
        "LoRA": "full", "stop": "fixed budget", "packing": "512-token blocks", "settings": "gamma 1, alpha 0.5",
        "beyond the paper": ""}


def test_a_masc_run_in_words_names_its_adapters_and_its_stop():
    words = describe_run(load("masc/tofu").run("MASC"))
    assert words["LoRA"] == "r 16, alpha 32" and words["clip"] == "none" and words["warm-up"] == "none"
    assert words["stop"] == "self-stop at V <= 0.475 (confirmed on 32)"
    assert words["budget"] == "3 epochs (longer loader)"
    assert words["settings"].startswith("gamma 0.05, alpha 0, competitors self, k 10")


def test_the_recipe_table_shows_the_papers_numbers_beside_the_scaled_ones():
    recipe = load("sago/wmdp-bio")
    paper = recipe_table(recipe, ["GA", "GradDiff/sago"])
    assert list(paper.index) == ["GA", "GradDiff/sago"]
    assert paper.loc["GA", "paper lr"] == paper.loc["GA", "lr"] == "5e-07"  # the paper's own scale
    assert paper.loc["GradDiff/sago", "budget"] == "500 steps"
    assert paper.loc["GA", "source"].startswith("configs/experiment/unlearn/wmdp/GradAscent_bio")
    scaled = recipe_table(recipe, ["GA"], Scale(lr_factor=200.0, why="test"))
    assert scaled.loc["GA", "paper lr"] == "5e-07" and scaled.loc["GA", "lr"] == "0.0001"  # 5e-7 x 200


def test_proposition1_summary_counts_where_the_bound_holds():
    table = pd.DataFrame({"model": ["a", "a", "a", "b"], "log10_measured": [-3.0, -2.0, -1.0, -5.0],
                          "log10_bound": [-2.5, -2.0, -1.5, -4.0], "violation_fraction": [0.1, 0.2, 0.3, 0.5]})
    summary = proposition1_summary(table)
    assert list(summary.index) == ["a", "b"]
    assert summary.loc["a", "sequences"] == 3 and summary.loc["a", "bound_holds"] == 2  # -1.0 > -1.5 fails
    assert summary.loc["b", "bound_holds"] == 1
    assert summary.loc["a", "mean_v"] == pytest.approx(0.2) and summary.loc["a", "mean_log10_bound"] == pytest.approx(-2.0)
