"""An evaluation's key and cache (`unlearning.evaluate`): what the key follows and what it leaves
out, a cached evaluation read back without loading the model, and the inputs refused before work."""

import json
import math
from dataclasses import asdict

import pytest

from unlearning.evaluate import (DivergedMetrics, EvalConfig, cache_key, evaluate, is_evaluated, metrics_path,
                                 suite_version)


def _inputs(tmp_path):
    model, data = tmp_path / "model", tmp_path / "data"
    (data / "nested").mkdir(parents=True)
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"not really weights")
    (data / "forget10.json").write_text('{"question": "q", "answer": "a"}\n')
    (data / "nested" / "extra.json").write_text("{}\n")
    return model, data


def test_the_key_follows_the_weights_every_data_file_the_config_and_the_oracles_metrics(tmp_path):
    model, data = _inputs(tmp_path)
    key = cache_key("tofu", model, data, EvalConfig(), oracle=None)
    assert cache_key("tofu", model, data, EvalConfig(), oracle=None) == key
    assert cache_key("tofu", model, data, EvalConfig(max_new_tokens=8), oracle=None) != key
    assert cache_key("tofu", model, data, EvalConfig(), oracle={"forget_prob": 0.1}) != key
    assert cache_key("tofu-real", model, data, EvalConfig(), oracle=None) != key  # the benchmark's name
    (data / "nested" / "extra.json").write_text('{"changed": 1}\n')  # a data file in a sub-folder
    changed_data = cache_key("tofu", model, data, EvalConfig(), oracle=None)
    (model / "model.safetensors").write_bytes(b"other weights")
    assert len({key, changed_data, cache_key("tofu", model, data, EvalConfig(), oracle=None)}) == 3


def test_the_oracles_cost_is_not_part_of_the_key(tmp_path):
    model, data = _inputs(tmp_path)
    oracle = {"forget_prob": 0.1, "eval_seconds": 3.0}
    assert cache_key("tofu", model, data, EvalConfig(), {**oracle, "eval_seconds": 9.5}) == \
        cache_key("tofu", model, data, EvalConfig(), oracle)


def test_suites_that_share_code_share_a_version_and_others_do_not():
    assert suite_version("tofu") == suite_version("tofu-real")  # one suite, two worlds
    assert len({suite_version("tofu"), suite_version("wmdp"), suite_version("muse-news")}) == 3


def test_a_cached_evaluation_is_read_back_without_loading_the_model(tmp_path):
    model, data = _inputs(tmp_path)  # the "weights" would not load: only the cache can answer
    assert not is_evaluated("tofu", model, data)
    key = cache_key("tofu", model, data, EvalConfig(), None)
    path = metrics_path(model, "tofu", key)
    assert path == model / "metrics" / f"tofu-{key[:16]}.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"key": key, "config": asdict(EvalConfig()), "metrics": {"model_utility": 0.5}}))
    assert is_evaluated("tofu", model, data)
    assert evaluate("tofu", model, data, tmp_path / "no-tokenizer") == {"model_utility": 0.5}
    assert not is_evaluated("tofu", model, data, config=EvalConfig(batch_size=4))


def test_a_diverged_run_has_nan_metrics_and_says_so():
    metrics = evaluate("tofu", None, "anywhere", "anything")
    assert isinstance(metrics, DivergedMetrics) and metrics["diverged"] is True
    assert math.isnan(metrics["model_utility"]) and "model_utility" not in metrics


@pytest.mark.parametrize("benchmark, config, message", [
    ("tofu-smoke", EvalConfig(), "benchmark must be one of"),
    ("wmdp", EvalConfig(forget_only=True), "forget_only: only TOFU-schema benchmarks"),
    ("tofu", EvalConfig(), "data: folder not found"),
])
def test_wrong_inputs_are_refused_before_any_work(tmp_path, benchmark, config, message):
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        evaluate(benchmark, tmp_path, tmp_path / "absent", tmp_path, config=config)
    assert not (tmp_path / "metrics").exists()
