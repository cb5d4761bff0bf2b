"""Bad input: every entry point answers a user's mistake with status 2 and one line naming the
parameter or file, the value and what is allowed; no traceback, nothing written (issue 19)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run_cli as main
from unlearning.models import save_model

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench(tmp_path_factory, world, target_state, tokenizer):
    """Good inputs to spoil one at a time: data, model, tokenizer, and broken variants."""
    from laboratory.family import build_model

    root = tmp_path_factory.mktemp("bench")
    shutil.copytree(world / "tofu", root / "tofu")
    model = build_model("xs", tokenizer, seed=0)
    model.load_state_dict(target_state)
    save_model(model, root / "model")
    tokenizer.save_pretrained(root / "tok")
    # broken models
    (root / "no-weights").mkdir()
    shutil.copy(root / "model" / "config.json", root / "no-weights")
    shutil.copytree(root / "model", root / "truncated")
    weights = root / "truncated" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    shutil.copytree(root / "model", root / "bert")
    config = json.loads((root / "bert" / "config.json").read_text())
    (root / "bert" / "config.json").write_text(json.dumps({**config, "model_type": "bert", "architectures": ["BertModel"]}))
    big = type(tokenizer).from_pretrained(root / "tok")
    big.add_tokens([f"extra{i}" for i in range(2 * len(tokenizer))])
    big.save_pretrained(root / "big-tok")
    # broken splits
    for name, text in {"truncated": (root / "tofu" / "forget10.json").read_text()[:150],
                       "empty": "", "no-answer": json.dumps({"question": "Where?"}) + "\n"}.items():
        shutil.copytree(root / "tofu", root / f"tofu-{name}")
        (root / f"tofu-{name}" / "forget10.json").write_text(text)
    (root / "a-file").write_text("not a folder")
    return root


def _unlearn(bench, *extra, model="model", tok="tok", data="tofu", store="store"):
    return ["unlearn", "--benchmark", "tofu", "--data", str(bench / data), "--model", str(bench / model),
            "--tokenizer", str(bench / tok), "--store", str(bench / store), "--max-steps", "2", *extra]


def _evaluate(bench, *extra, model="model", tok="tok"):
    return ["evaluate", "--benchmark", "tofu", "--data", str(bench / "tofu"), "--model", str(bench / model),
            "--tokenizer", str(bench / tok), *extra]


# (id, argv builder, what the one line must say)
CASES = [
    # unknown names
    ("unknown method", lambda b: _unlearn(b, "--method", "NOPE"), "method must be one of"),
    ("unknown rule", lambda b: _unlearn(b, "--method", "NPO+GD", "--rule", "mean"), "rule must be one of"),
    ("unknown benchmark", lambda b: ["unlearn", "--benchmark", "tofoo", "--model", str(b / "model"), "--method", "GA"],
     "benchmark must be one of"),
    ("unknown profile suffix", lambda b: ["unlearn", "--benchmark", "tofu-huge", "--model", str(b / "model"),
                                          "--method", "GA"], "--data: folder not found: data/huge/tofu"),
    ("unknown split", lambda b: _unlearn(b, "--method", "GA", "--split", "forget99"), "forget99.json"),
    ("unknown retain split", lambda b: _unlearn(b, "--method", "GradDiff", "--retain-split", "retain1"), "retain1.json"),
    ("unknown stop", lambda b: _unlearn(b, "--method", "GA", "--stop", "never"), "stop must be 'fixed' or 'violation'"),
    ("unknown probe set", lambda b: _unlearn(b, "--method", "MASC", "--probe-set", "best"), "probe_set must be one of"),
    ("unknown optimizer", lambda b: _unlearn(b, "--method", "GA", "--optimizer", "adam"), "optimizer must be one of"),
    ("unknown device", lambda b: _unlearn(b, "--method", "GA", "--device", "tpu"), "device must be one of"),
    ("unknown dtype", lambda b: _unlearn(b, "--method", "GA", "--dtype", "float8"), "dtype must be one of"),
    ("unknown hyper-parameter", lambda b: _unlearn(b, "--method", "MASC", "--set", "rhoo=0.7"), "rhoo"),
    ("unknown world profile", lambda b: ["world", "--profile", "huge", "--out", str(b / "w")], "profile must be one of"),
    ("unknown evaluate benchmark", lambda b: ["evaluate", "--benchmark", "nope", "--data", str(b / "tofu"),
                                              "--model", str(b / "model")], "benchmark must be one of"),
    # numbers
    ("zero learning rate", lambda b: _unlearn(b, "--method", "GA", "--lr", "0"), "lr must be"),
    ("negative learning rate", lambda b: _unlearn(b, "--method", "GA", "--lr=-1e-4"), "lr must be"),
    ("NaN learning rate", lambda b: _unlearn(b, "--method", "GA", "--lr", "nan"), "lr must be"),
    ("infinite learning rate", lambda b: _unlearn(b, "--method", "GA", "--lr", "inf"), "lr must be"),
    ("zero batch size", lambda b: _unlearn(b, "--method", "GA", "--batch-size", "0"), "--batch-size must be an integer >= 1"),
    ("huge batch size", lambda b: _unlearn(b, "--method", "GA", "--batch-size", "10000000"), "--batch-size must be"),
    ("negative max steps", lambda b: _unlearn(b, "--method", "GA", "--max-steps=-3"), "--max-steps must be an integer >= 1"),
    ("huge max steps", lambda b: _unlearn(b, "--method", "GA", "--max-steps", "1000000000000"), "--max-steps must be"),
    ("zero epochs", lambda b: _unlearn(b, "--method", "GA", "--epochs", "0"), "epochs must be"),
    ("NaN epochs", lambda b: _unlearn(b, "--method", "GA", "--epochs", "nan"), "epochs must be"),
    ("NaN tolerance", lambda b: _unlearn(b, "--method", "MASC", "--tolerance", "nan"), "tolerance must lie in [0, 1]"),
    ("tolerance above 1", lambda b: _unlearn(b, "--method", "MASC", "--tolerance", "1.5"), "tolerance must lie"),
    ("rho outside (0, 1)", lambda b: _unlearn(b, "--method", "MASC", "--set", "rho=1.5"), "rho must lie strictly"),
    ("NaN rho", lambda b: _unlearn(b, "--method", "MASC", "--set", "rho=.nan"), "rho must be a finite number"),
    ("zero k", lambda b: _unlearn(b, "--method", "MASC", "--set", "k=0"), "k must be >= 1"),
    ("hyper-parameter of the wrong type", lambda b: _unlearn(b, "--method", "MASC", "--set", "rho=high"), "rho"),
    ("a number that is not one", lambda b: _unlearn(b, "--method", "GA", "--batch-size", "four"),
     "argument --batch-size: invalid int value: 'four'"),
    ("zero LoRA rank", lambda b: _unlearn(b, "--method", "GA", "--lora-rank", "0"), "--lora-rank must be an integer >= 1"),
    ("held-out probes larger than the forget set", lambda b: _unlearn(b, "--method", "MASC", "--probe-set", "holdout"),
     "leaves no forget example"),
    ("zero learn jobs", lambda b: ["learn", "--data", str(b / "tofu"), "--out", str(b / "m"), "--jobs", "0"],
     "--jobs must be >= 1"),
    # data files
    ("truncated JSON split", lambda b: _unlearn(b, "--method", "GA", data="tofu-truncated"), "not valid JSON lines"),
    ("empty split", lambda b: _unlearn(b, "--method", "GA", data="tofu-empty"), "empty data file"),
    ("record missing a field", lambda b: _unlearn(b, "--method", "GA", data="tofu-no-answer"), "lacks field 'answer'"),
    ("data folder is a file", lambda b: _unlearn(b, "--method", "GA", data="a-file"), "--data: folder not found"),
    # models and tokenizers
    ("model folder without weights", lambda b: _unlearn(b, "--method", "GA", model="no-weights"), "no safetensors"),
    ("truncated safetensors", lambda b: _unlearn(b, "--method", "GA", model="truncated"), "cannot be read"),
    ("config of another architecture", lambda b: _unlearn(b, "--method", "GA", model="bert"), "model_type 'bert'"),
    ("tokenizer larger than the embedding", lambda b: _unlearn(b, "--method", "GA", tok="big-tok"),
     "larger than the model's embedding"),
    ("evaluate: truncated weights", lambda b: _evaluate(b, model="truncated"), "cannot be read"),
    ("evaluate: tokenizer larger than the embedding", lambda b: _evaluate(b, tok="big-tok"), "embedding"),
    # output folders
    ("store is a file", lambda b: _unlearn(b, "--method", "GA", store="a-file"), "--store: not a folder"),
    ("world output is a file", lambda b: ["world", "--profile", "smoke", "--out", str(b / "a-file")], "--out: not a folder"),
]


def _snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}


@pytest.mark.parametrize("argv, message", [pytest.param(c[1], c[2], id=c[0]) for c in CASES])
def test_a_bad_input_is_one_line_status_2_and_writes_nothing(bench, argv, message, capsys, monkeypatch):
    monkeypatch.chdir(bench)
    before = _snapshot(bench)
    status = main(argv(bench))
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status == 2, captured.err + captured.out
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in captured.err, captured.err
    assert _snapshot(bench) == before  # no file written, no cache entry, no hash record beside the weights


def test_at_least_thirty_distinct_bad_inputs_are_covered():
    assert len({c[0] for c in CASES}) == len(CASES) >= 30


# ---- profile YAML files and notebook parameters --------------------------------------------------

def _profile_with(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "profile"
    shutil.copytree(ROOT / "notebooks" / "profiles" / "smoke", folder)
    (folder / name).write_text(text)
    return folder


YAML_CASES = [
    ("chapter file: unknown key", "06-tofu.yaml", "profile: smoke\nsizes: s\n", "unknown parameter 'sizes'"),
    ("chapter file: wrong type", "06-tofu.yaml", "methods: GA\n", "must be a list"),
    ("chapter file: unknown method", "06-tofu.yaml", "methods: [NOPE]\n", "'NOPE' is not one of"),
    ("chapter file: NaN tolerance", "05-stopping.yaml", "tolerances: [.nan]\n", "every item must be"),
    ("chapter file: not YAML", "06-tofu.yaml", "methods: [GA\n", "not valid YAML"),
    ("chapter file: not a mapping", "06-tofu.yaml", "- GA\n", "must hold a mapping"),
    ("learn.yaml: unknown key", "learn.yaml", "sizes: [xs]\nepochz: 3\n", "unknown key 'epochz'"),
    ("learn.yaml: wrong type", "learn.yaml", "sizes: xs\n", "sizes must be a list"),
    ("learn.yaml: unknown stage setting", "learn.yaml", "sizes: [xs]\nfinetune: {epoch: 3}\n", "unknown setting 'epoch'"),
    ("learn.yaml: NaN learning rate", "learn.yaml", "sizes: [xs]\nfinetune: {lr: .nan}\n", "finite number"),
    ("learn.yaml: missing main size", "learn.yaml", "sizes: [xs]\nmain_size: m\n", "main_size"),
    ("fetch.yaml: unknown key", "fetch.yaml", "modelz: {}\n", "unknown key 'modelz'"),
    ("fetch.yaml: missing source", "fetch.yaml", "data: {tofu: {splits: [forget10]}}\n", "needs 'source'"),
]


@pytest.mark.parametrize("name, text, message", [pytest.param(*c[1:], id=c[0]) for c in YAML_CASES])
def test_a_bad_profile_file_is_refused_before_anything_runs(tmp_path, name, text, message, capsys):
    folder = _profile_with(tmp_path, name, text)
    assert main(["check", "--profile-dir", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and name in err, err


def test_the_committed_profiles_pass_the_check(capsys):
    for profile in ("smoke", "mini", "paper"):
        assert main(["check", "--profile-dir", str(ROOT / "notebooks" / "profiles" / profile)]) == 0, capsys.readouterr()


def test_a_learn_config_with_a_bad_value_fails_the_learn_command(bench, capsys):
    config = bench / "bad-learn.yaml"
    config.write_text("sizes: [xs]\nfinetune: {epochs: ten}\n")
    assert main(["learn", "--config", str(config), "--data", str(bench / "tofu"), "--out", str(bench / "m")]) == 2
    assert "finetune.epochs must be a finite number" in capsys.readouterr().err
    config.unlink()


@pytest.mark.parametrize("values, message", [
    ({"size": "x"}, "parameter size = 'x' must be one of xs, s, m, l (the laboratory's) or a parameter count"),
    ({"methods": ["NOPE"]}, "'NOPE' is not one of"),
    ({"methods": []}, "must not be empty"),
    ({"size": 3}, "must be a string"),
    ({"forget_splits": ["forget50"]}, "'forget50' is not one of"),
    ({"rmu_grid": {"steering": [1.0]}}, "must have exactly the keys"),
    ({"rmu_grid": {"steering": [-1.0], "alpha": [1.0], "lr_multiple": [1.0]}}, "steering"),
])
def test_notebook_parameters_are_checked_by_name_and_type(values, message):
    from experiments.parameters import ParameterError, check_parameters

    namespace = {"profile": "smoke", "size": "s", "methods": ["GA"], **values}
    with pytest.raises(ParameterError) as caught:
        check_parameters("06-tofu", namespace)
    assert message in str(caught.value)
    assert caught.value._render_traceback_() == [f"ParameterError: {caught.value}"]  # one line in a notebook


def test_papermill_with_a_bad_parameter_ends_in_one_line_naming_it(tmp_path):
    """A real papermill run of a chapter with `-p size x`: it fails in the checking cell, before any
    work, and the report's last line names the parameter."""
    import jupytext

    notebook = tmp_path / "06-tofu.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / "06-tofu.py"), notebook)
    done = subprocess.run([str(Path(sys.executable).parent / "papermill"), "--cwd", str(ROOT), "--no-progress-bar",
                           "-p", "size", "x", "-p", "profile", "smoke", str(notebook), str(tmp_path / "out.ipynb")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    report = done.stderr.strip().splitlines()
    assert any("ParameterError: 06-tofu: parameter size = 'x' must be one of xs" in line for line in report[-5:]), done.stderr
    executed = json.loads((tmp_path / "out.ipynb").read_text())
    ran = [c for c in executed["cells"] if c["cell_type"] == "code" and c.get("execution_count")]
    assert len(ran) <= 3  # parameters, injected parameters, the checking cell: nothing after it ran
