"""The command line's own logic (`unlearning.cli`), without starting a process: parsing `--set`, a
benchmark name with its profile suffix, where the data and the tokenizer are found, which recipe run
the flags name, the flags as the spec builder's changes (a wrong value names its flag), and the
one-line usage errors. The commands end to end are tested in tests/system."""

from pathlib import Path

import pytest

from unlearning import cli
from unlearning.recipes import Changes, load as load_recipe


def _unlearn_args(*argv: str):
    return cli.parser().parse_args(["unlearn", "--model", "m", *argv])


def test_set_values_are_yaml_scalars():
    assert cli._parse_sets(["rho=0.7", "k=10", "competitors=self", "delta=null", "flag=true"]) == \
        {"rho": 0.7, "k": 10, "competitors": "self", "delta": None, "flag": True}
    assert cli._parse_sets(["expr=a=b"]) == {"expr": "a=b"}  # the first '=' splits
    with pytest.raises(ValueError, match="--set: expected NAME=VALUE, got 'rho'"):
        cli._parse_sets(["rho"])


@pytest.mark.parametrize("name, expected", [
    ("tofu", ("tofu", None)),
    ("tofu-mini", ("tofu", "mini")),
    ("tofu-real", ("tofu-real", None)),  # a registered name wins over 'tofu' with a profile 'real'
    ("tofu-real-smoke", ("tofu-real", "smoke")),
    ("muse-news-mini", ("muse-news", "mini")),
])
def test_a_benchmark_name_may_carry_the_profile_of_its_folders(name, expected):
    assert cli._benchmark_and_profile(name) == expected


def test_an_unknown_benchmark_lists_the_known_ones():
    with pytest.raises(ValueError, match="tofu") as error:
        cli._benchmark_and_profile("nonesuch")
    assert "nonesuch" in str(error.value)


def test_the_data_folder_comes_from_the_profile_suffix_or_from_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "mini" / "tofu").mkdir(parents=True)
    assert cli._benchmark_and_data("tofu-mini", None) == ("tofu", Path("data/mini/tofu"), "mini")
    assert cli._benchmark_and_data("tofu", tmp_path / "data") == ("tofu", tmp_path / "data", None)
    with pytest.raises(ValueError, match="--data is required for --benchmark tofu"):
        cli._benchmark_and_data("tofu", None)
    with pytest.raises(ValueError, match="--data: folder not found"):
        cli._benchmark_and_data("tofu-smoke", None)


def test_the_tokenizer_is_the_models_own_else_the_folder_beside_or_above_it(tmp_path):
    model = tmp_path / "tofu" / "target-xs"
    model.mkdir(parents=True)
    with pytest.raises(ValueError, match="--tokenizer: none given and no tokenizer folder beside"):
        cli._tokenizer_for(model)
    (tmp_path / "tokenizer").mkdir()
    assert cli._tokenizer_for(model) == tmp_path / "tokenizer"
    (tmp_path / "tofu" / "tokenizer").mkdir()
    assert cli._tokenizer_for(model) == tmp_path / "tofu" / "tokenizer"
    (model / "tokenizer_config.json").write_text("{}")
    assert cli._tokenizer_for(model) == model


def test_the_flags_name_a_run_of_the_recipe():
    sago = load_recipe("sago/wmdp-bio")
    assert cli._recipe_run_name(sago, "GradDiff", "sago") == "GradDiff/sago"
    assert cli._recipe_run_name(sago, "GradDiff", None) == "GradDiff/sum"
    assert cli._recipe_run_name(sago, "GA", "sago") == "GA"  # one run, the rule a change of it
    with pytest.raises(ValueError, match="has several runs; choose one of"):
        cli._recipe_run_name(sago, None, None)
    with pytest.raises(ValueError, match="has no run MASC"):
        cli._recipe_run_name(sago, "MASC", None)
    masc = load_recipe("masc/tofu")
    assert cli._recipe_run_name(masc, None, None) == next(iter(masc.runs))


def test_the_flags_become_changes_and_a_wrong_count_names_its_flag():
    args = _unlearn_args("--lr", "1e-4", "--batch-size", "8", "--grad-accum", "2", "--set", "beta=0.2", "--seed", "3",
                         "--split", "forget05", "--lora-rank", "4")
    assert cli._changes(args, processes=2) == Changes(lr=1e-4, batch_size=8, grad_accum=2, processes=2,
                                                      hparams={"beta": 0.2}, seed=3, forget_split="forget05",
                                                      lora_rank=4)
    for flag, value, message in (("--batch-size", "0", "--batch-size must be an integer >= 1 and at most 4096, got 0"),
                                 ("--grad-accum", "5000", "--grad-accum must be an integer >= 1 and at most 4096"),
                                 ("--max-steps", "-3", "--max-steps must be an integer >= 1 and at most 1000000"),
                                 ("--lora-rank", "0", "--lora-rank must be an integer >= 1, got 0"),
                                 ("--lr", "-1", "--lr must be a finite number > 0, got -1.0"),
                                 ("--epochs", "nan", "--epochs must be a finite number > 0, got nan")):
        with pytest.raises(ValueError, match=message.replace("+", r"\+")):
            cli._changes(_unlearn_args(f"{flag}={value}"), processes=1)


def test_an_output_folder_may_be_new_but_not_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    assert cli.output_folder("--out", tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    for path in (tmp_path / "file", tmp_path / "file" / "below"):
        with pytest.raises(ValueError, match=f"--out: not a folder: {tmp_path / 'file'}"):
            cli.output_folder("--out", path)


def test_a_usage_error_is_one_line_and_status_2(capsys):
    with pytest.raises(SystemExit) as done:
        cli.parser().parse_args(["unlearn", "--lr", "fast"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and err.endswith("(see unlearning unlearn -h)\n")
