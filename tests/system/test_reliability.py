"""Reliability: numerical faults stop a run cleanly and show as "diverged" (issue 19)."""

from dataclasses import replace

import pandas as pd
import pytest
import torch

from helpers import without_cost
from unlearning.cli import main
from unlearning.engine import OptimConfig, unlearn
from unlearning.evaluate import DivergedMetrics, evaluate
from unlearning.methods import get_method
from unlearning.models import save_model
from experiments.plotting import DIVERGED, show_nan_as_diverged


def _finite(model) -> bool:
    return all(bool(torch.isfinite(p).all()) for p in model.parameters())


def test_a_huge_learning_rate_stops_the_run_at_the_first_non_finite_step(target, tokenizer, splits):
    method = get_method("GradDiff")
    result = unlearn(target, method, method.hparams(), splits["forget10"], splits["retain90"],
                     pad_token_id=tokenizer.pad_token_id, max_steps=30, optim=OptimConfig(lr=1e12, optimizer="sgd"))
    fault = result.diverged
    assert fault is not None and result.steps == fault["step"] < 30 and len(result.log) == fault["step"]
    assert "GradDiff" in fault["objective"] and fault["value"] in ("nan", "inf", "-inf", "nan or inf")
    assert _finite(target)  # the faulty step was not taken


def _nan_from(step: int, objective):
    """`objective`, but NaN from the `step`-th call on (an injected fault)."""
    calls = {"n": 0}

    def faulty(model, batch, ctx):
        calls["n"] += 1
        loss = objective(model, batch, ctx)
        return loss * float("nan") if calls["n"] >= step else loss

    return faulty


@pytest.mark.parametrize("rule", ["sum", "sago"])
def test_an_injected_nan_names_the_step_and_the_objective(target, tokenizer, splits, rule):
    method = replace(get_method("GradDiff"), forget=_nan_from(3, get_method("GradDiff").forget))
    before = {k: v.clone() for k, v in target.state_dict().items()}
    result = unlearn(target, method, method.hparams(), splits["forget10"], splits["retain90"],
                     pad_token_id=tokenizer.pad_token_id, rule=rule, max_steps=10)
    assert result.diverged == {"step": 3, "objective": "forget objective of GradDiff", "value": "nan"}
    assert result.steps == 3 and _finite(target)
    assert any(not torch.equal(v, target.state_dict()[k]) for k, v in before.items())  # steps 1-2 were taken


def test_an_injected_inf_gradient_is_caught(target, tokenizer, splits):
    """A finite loss whose gradient is infinite (the fault the loss check alone would miss)."""
    def inf_gradient(model, batch, ctx):
        weight = next(model.parameters())
        return torch.sqrt(weight - weight.detach()).sum()  # value 0, gradient 1 / (2 sqrt(0)) = inf

    method = replace(get_method("GA"), forget=inf_gradient)
    result = unlearn(target, method, method.hparams(), splits["forget10"], splits["retain90"],
                     pad_token_id=tokenizer.pad_token_id, max_steps=5)
    assert result.diverged["step"] == 1 and result.diverged["objective"] == "gradient of GA (rule sum)"
    assert _finite(target)


def test_the_cli_records_a_diverged_run_saves_no_model_and_exits_3(world, target, tokenizer, tmp_path, capsys):
    save_model(target, tmp_path / "target")
    tokenizer.save_pretrained(tmp_path / "tok")
    store = tmp_path / "runs"
    args = ["unlearn", "--data", str(world / "tofu"), "--model", str(tmp_path / "target"), "--tokenizer",
            str(tmp_path / "tok"), "--method", "GradDiff", "--max-steps", "30", "--lr", "1e12",
            "--optimizer", "sgd", "--store", str(store)]
    assert main(args) == 3
    out = capsys.readouterr().out
    assert "GradDiff on tofu diverged at step" in out and "no model was saved" in out
    (record_path,) = store.glob("*/record.json")
    assert not (record_path.parent / "model").exists()
    assert main(args) == 3  # the diverged record is served again, not retrained
    assert "cached:" in capsys.readouterr().out


def test_a_diverged_run_shows_as_diverged_in_tables_and_is_left_out_of_plots(world, tokenizer):
    metrics = evaluate("tofu", None, world / "tofu", tokenizer.name_or_path)
    assert isinstance(metrics, DivergedMetrics) and metrics["diverged"] is True
    assert pd.isna(metrics["forget_Q_A_ROUGE"])  # any metric reads as NaN
    rows = pd.DataFrame([{"method": "GA", "rouge": 0.25}, {"method": "NPO", **metrics}])
    assert pd.isna(rows.loc[1, "rouge"])
    show_nan_as_diverged()
    assert DIVERGED in rows.style.to_html()
    assert DIVERGED in rows.style.format(precision=3, na_rep=DIVERGED).to_html()


def test_the_rmu_table_shows_a_diverged_grid_point():
    from experiments.lab import Protocol, Tuned

    rows = [{"steering x norm": 1.0, "alpha": 100.0, "lr": 1e-4, "forget": float("nan"), "retain": float("nan")}]
    tuned = Tuned({"steering": 1.0, "alpha": 100.0}, Protocol(), rows, "a rule")
    assert DIVERGED in tuned.table().to_html()


def test_a_diverged_run_has_no_4bit_copy(tmp_path):
    from experiments.lab import Lab

    assert Lab(tmp_path, tmp_path, tmp_path).quantized(None) is None



# --- determinism and isolation ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["MASC", "NPO+KLR"])
def test_same_seed_same_machine_same_threads_give_identical_records_and_metrics(world, target, tokenizer, tmp_path,
                                                                                method):
    """Two runs of one spec into two stores (smoke world, this process's thread count): the
    records, the weights and the TOFU metrics agree exactly, timings aside."""
    from experiments.lab import Protocol
    from unlearning.runs import run
    from unlearning.store import weights_hash

    save_model(target, tmp_path / "target")
    tokenizer.save_pretrained(tmp_path / "tok")
    spec = Protocol(cap=40).spec("tofu", method, tmp_path / "target", 8, forget_split="forget10")
    results = []
    for store in ("first", "second"):
        record = run(spec, world / "tofu", tmp_path / "tok", tmp_path / store)
        metrics = evaluate("tofu", record["dir"], world / "tofu", tmp_path / "tok")
        results.append((without_cost({k: v for k, v in record.items() if k != "dir"}), weights_hash(record["dir"]),
                        without_cost(metrics)))
    assert results[0] == results[1]
    assert results[0][0]["steps"] >= 2 and results[0][2]["forget_Q_A_ROUGE"] == results[1][2]["forget_Q_A_ROUGE"]


def test_a_pickled_checkpoint_is_never_loaded(target, tmp_path):
    """A folder with only `pytorch_model.bin` (a pickle whose loading would create a file) is refused."""
    import json
    import pickle

    from unlearning.models import check_model, load_model

    marker = tmp_path / "pickle-ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    folder = tmp_path / "pickled"
    save_model(target, folder)
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(Payload()))
    with pytest.raises((OSError, ValueError)):
        load_model(folder)
    with pytest.raises(ValueError, match="no safetensors weights"):
        check_model(folder)
    assert not marker.exists()
    assert json.loads((folder / "config.json").read_text())["model_type"] == "qwen2"


def test_remote_code_in_a_model_or_tokenizer_folder_never_runs(target, tokenizer, tmp_path):
    """A config and a tokenizer config that point at Python files of their folder (`auto_map`):
    loading refuses them (trust_remote_code stays off) and the files are never imported."""
    import json

    from unlearning.models import load_model, load_tokenizer

    marker = tmp_path / "remote-code-ran"
    folder = tmp_path / "remote"
    save_model(target, folder)
    tokenizer.save_pretrained(folder)
    for module in ("configuration_evil", "modeling_evil", "tokenization_evil"):
        (folder / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').write('{module}')\n")
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="evil", auto_map={"AutoConfig": "configuration_evil.EvilConfig",
                                               "AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"})
    (folder / "config.json").write_text(json.dumps(config))
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    tokenizer_config.update(tokenizer_class="EvilTokenizer",
                            auto_map={"AutoTokenizer": ["tokenization_evil.EvilTokenizer", None]})
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    with pytest.raises((OSError, ValueError)):
        load_model(folder)
    try:  # the tokenizer may load, from tokenizer.json alone, as the library's own class
        loaded = load_tokenizer(folder)
        assert type(loaded).__module__.startswith("transformers.")
    except (OSError, ValueError):
        pass
    assert not marker.exists()


def test_peak_memory_is_the_process_own_not_its_parents():
    """A run's `peak_rss_mb` (`runs.peak_rss_mb`) is its own process's: a child started from a
    parent that holds 1.5 GB reports less (getrusage's ru_maxrss would carry the parent's peak
    across exec on Linux); the child's own peak, the library imported, is about 0.5-0.6 GB."""
    import subprocess
    import sys

    from unlearning.runs import peak_rss_mb

    held = bytearray(1536 * 2**20)
    held[::4096] = b"x" * len(held[::4096])  # touch every page
    assert peak_rss_mb() >= 1536
    child = subprocess.run([sys.executable, "-c", "from unlearning.runs import peak_rss_mb; print(peak_rss_mb())"],
                           capture_output=True, text=True, check=True)
    assert 0 < float(child.stdout) < 1536, child.stdout
    del held
