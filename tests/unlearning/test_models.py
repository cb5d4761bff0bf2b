"""Tiny Qwen2 family: save/load identity, determinism, parameter span; the CLI's errors."""

import torch
from helpers import run_cli as main

from laboratory.family import build_model
from unlearning.models import load_model, load_tokenizer, save_model


def test_save_load_gives_identical_logits(target, tokenizer, tmp_path):
    save_model(target, tmp_path / "m", {"note": "test"})
    assert (tmp_path / "m" / "model.safetensors").is_file() and (tmp_path / "m" / "learning.json").is_file()
    loaded = load_model(tmp_path / "m")
    ids = torch.tensor([tokenizer("Question: Where was Ann born?")["input_ids"]])
    with torch.no_grad():
        assert torch.equal(target(input_ids=ids).logits, loaded(input_ids=ids).logits)


def test_tokenizer_round_trip_from_its_own_folder(tokenizer, tmp_path):
    tokenizer.save_pretrained(tmp_path / "tok")
    again = load_tokenizer(tmp_path / "tok")
    text = "Brenal Thouvik was born in Valmora in 1957."
    assert again(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert again.decode(again(text)["input_ids"]) == text


def test_cli_rejects_bad_values_and_writes_nothing(world, tmp_path, capsys):
    out = tmp_path / "run"
    common = ["unlearn", "--data", str(world / "tofu"), "--model", str(tmp_path / "missing"),
              "--tokenizer", str(tmp_path), "--store", str(out)]
    cases = [
        (["--method", "Nope"], "method must be one of GA, GradDiff"),
        (["--method", "MASC", "--rule", "bad"], "rule must be one of sum, pcgrad"),
        (["--method", "MASC", "--set", "rho=1.5"], "rho must lie strictly between 0 and 1"),
        (["--method", "MASC", "--set", "k=0"], "k must be >= 1"),
        (["--method", "MASC", "--lr", "-1"], "lr must be a finite number > 0"),
        (["--method", "MASC"], "--model: folder not found"),
    ]
    for extra, message in cases:
        assert main(common + extra) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1
    assert not out.exists()
    assert main(["world", "--profile", "huge", "--out", str(tmp_path)]) == 2
    assert "profile must be one of smoke, mini" in capsys.readouterr().err


def _only_record(store):
    from unlearning.records import read_json

    (folder,) = [p.parent for p in store.glob("*/record.json")]
    return folder, read_json(folder / "record.json")


def test_cli_unlearn_writes_model_and_record(world, target, tokenizer, tmp_path, capsys):
    save_model(target, tmp_path / "target")
    tokenizer.save_pretrained(tmp_path / "tok")
    store = tmp_path / "runs"
    args = ["unlearn", "--data", str(world / "tofu"), "--model", str(tmp_path / "target"), "--tokenizer",
            str(tmp_path / "tok"), "--method", "NPO+GD", "--rule", "sago", "--max-steps", "3", "--store", str(store)]
    assert main(args) == 0, capsys.readouterr().err
    folder, record = _only_record(store)
    assert record["method"] == "NPO+GD" and record["rule"] == "sago" and record["steps"] == 3
    assert record["model_hash"] and record["data_hash"] and len(record["log"]) == 3
    assert (folder / "model" / "model.safetensors").is_file()
    assert capsys.readouterr().out.strip().endswith(str(folder / "model"))
    assert main(args) == 0 and capsys.readouterr().out.startswith(f"cached: {folder}")  # the store serves it again


def test_lora_trains_only_adapters_and_disabling_them_gives_the_base(target, tokenizer):
    import pytest

    pytest.importorskip("peft")
    from unlearning.models import add_lora

    model = add_lora(target, r=4)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    ids = torch.tensor([tokenizer("Question: Where was Ann born?")["input_ids"]])
    with torch.no_grad():  # LoRA B starts at zero: the wrapped model equals the base
        before = model(input_ids=ids).logits
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()
    with torch.no_grad():
        after = model(input_ids=ids).logits
        with model.disable_adapter():  # the reference model, without a second copy
            reference = model(input_ids=ids).logits
    assert not torch.allclose(before, after) and torch.allclose(before, reference)
    with pytest.raises(ValueError, match="rank"):
        add_lora(build_model("xs", tokenizer), r=0)


def test_cli_unlearn_on_a_corpus_benchmark_with_profile_suffix(target, tokenizer, tmp_path, capsys, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # data/smoke/wmdp is committed
    save_model(target, tmp_path / "target")
    tokenizer.save_pretrained(tmp_path / "tok")
    out = tmp_path / "rmu"
    code = main(["unlearn", "--benchmark", "wmdp-smoke", "--model", str(tmp_path / "target"), "--tokenizer",
                 str(tmp_path / "tok"), "--method", "RMU", "--rule", "pcgrad", "--grad-accum", "2",
                 "--max-steps", "2", "--store", str(out)])
    assert code == 0, capsys.readouterr().err
    _, record = _only_record(out)
    assert record["benchmark"] == "wmdp" and record["forget_split"] == "bio-forget-corpus+cyber-forget-corpus"
    assert record["optim"]["grad_accum"] == 2
    for extra, message in ((["--benchmark", "nope-mini"], "benchmark must be one of"),
                           (["--benchmark", "tofu"], "--data is required"),
                           (["--benchmark", "tofu-smoke", "--probe-set", "random"], "probe_set must be one of")):
        args = ["unlearn", "--model", str(tmp_path / "target"), "--method", "GA", "--store", str(tmp_path / "x")]
        assert main(args + extra) == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_cli_evaluate_prints_and_caches(world, target, tokenizer, tmp_path, capsys):
    save_model(target, tmp_path / "models" / "tofu" / "target-xs")
    tokenizer.save_pretrained(tmp_path / "models" / "tokenizer")
    args = ["evaluate", "--benchmark", "wmdp", "--data", str(world / "wmdp"),
            "--model", str(tmp_path / "models" / "tofu" / "target-xs")]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "wmdp-bio_accuracy" in first and first.startswith("wrote")
    assert main(args) == 0 and capsys.readouterr().out.startswith("cached")
    assert main(["evaluate", "--benchmark", "tofu", "--model", str(tmp_path)]) == 2
    assert "--data is required" in capsys.readouterr().err
