"""tofu-mini: determinism, TOFU split relationships, schema, and the loader's errors."""

import filecmp
import json
import re

import pytest
import torch

from laboratory.world import generate
from unlearning.data import DataError, collate, encode_qa, load_split

PERTURBED = ("question", "answer", "paraphrased_answer", "paraphrased_question", "perturbed_answer")


def _relative_files(root):
    """The world's files under `root`, without the data a real model built (`MODEL_BUILT`)."""
    from laboratory.world import MODEL_BUILT

    paths = (p.relative_to(root) for p in root.rglob("*.json"))
    return sorted(str(p) for p in paths if p.parts[0] not in MODEL_BUILT)


def test_regeneration_is_byte_identical(world, tmp_path):
    generate("smoke", tmp_path)
    fresh = tmp_path / "smoke"
    assert _relative_files(world) == _relative_files(fresh)
    _, mismatch, errors = filecmp.cmpfiles(world, fresh, _relative_files(world), shallow=False)
    assert mismatch == [] and errors == []


def test_committed_data_matches_the_generator(tmp_path):
    from pathlib import Path

    committed = Path(__file__).resolve().parents[2] / "data"
    for profile in ("smoke", "mini"):
        if not (committed / profile).is_dir():
            pytest.skip(f"data/{profile} not generated")
        generate(profile, tmp_path)
        assert _relative_files(committed / profile) == _relative_files(tmp_path / profile), "stale or missing files"
        for relative in _relative_files(committed / profile):
            path, fresh = committed / profile / relative, tmp_path / profile / relative
            assert fresh.read_bytes() == path.read_bytes(), f"{path} differs from a fresh `laboratory world` run"


def test_tofu_split_relationships(world):
    tofu = world / "tofu"
    full = load_split(tofu, "full", ("question", "answer"))
    key = lambda r: (r["question"], r["answer"])  # noqa: E731
    for pct, keep in ((1, 99), (5, 95), (10, 90)):
        forget = load_split(tofu, f"forget{pct:02d}")
        retain = load_split(tofu, f"retain{keep}")
        assert sorted(map(key, forget + retain)) == sorted(map(key, full))
        assert not set(map(key, forget)) & set(map(key, retain))
        holdout = load_split(tofu, f"holdout{pct:02d}")
        assert len(holdout) == len(forget) and not set(map(key, holdout)) & set(map(key, full))
        perturbed = load_split(tofu, f"forget{pct:02d}_perturbed", PERTURBED)
        assert [key(r) for r in perturbed] == [key(r) for r in forget]
    assert load_split(tofu, "forget10")[-len(load_split(tofu, "forget01")):] == load_split(tofu, "forget01")


def test_perturbed_answers_are_wrong_and_distinct(world):
    perturbed = [*load_split(world / "tofu", "forget10_perturbed", PERTURBED),
                 *load_split(world / "tofu", "retain_perturbed", PERTURBED)]
    for record in perturbed:
        assert len(record["perturbed_answer"]) == 5
        assert len(set(record["perturbed_answer"])) == 5
        assert record["paraphrased_answer"] not in record["perturbed_answer"]


def test_retain_perturbed_is_disjoint_from_forget(world):
    forget = {r["question"] for r in load_split(world / "tofu", "forget10")}
    assert not forget & {r["question"] for r in load_split(world / "tofu", "retain_perturbed")}


def test_loader_errors_name_file_and_field(tmp_path):
    with pytest.raises(DataError, match="missing data file: .*forget10.json"):
        load_split(tmp_path, "forget10")
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(DataError, match="empty data file"):
        load_split(tmp_path, "empty")
    (tmp_path / "bad.json").write_text(json.dumps({"question": "q"}) + "\n")
    with pytest.raises(DataError, match="bad.json: record 0 lacks field 'answer'"):
        load_split(tmp_path, "bad", ("question", "answer"))
    with pytest.raises(DataError, match="data folder not found"):
        load_split(tmp_path / "nope", "forget10")


def test_encode_masks_the_prompt(tokenizer):
    encoded = encode_qa(tokenizer, "Where was Ann born?", "Ann was born in Fenrow.")
    n_prompt = len(tokenizer("Question: Where was Ann born?\nAnswer:", add_special_tokens=False)["input_ids"])
    assert encoded.labels[:n_prompt] == [-100] * n_prompt
    assert encoded.labels[n_prompt:] == encoded.input_ids[n_prompt:]
    assert encoded.input_ids[-1] == tokenizer.eos_token_id
    assert tokenizer.decode(encoded.input_ids[n_prompt:-1]).strip() == "Ann was born in Fenrow."
    batch = collate([encoded, encode_qa(tokenizer, "Q?", "A.")], tokenizer.pad_token_id)
    assert batch["input_ids"].shape == batch["labels"].shape == batch["attention_mask"].shape
    assert int(batch["attention_mask"][1].sum()) < batch["input_ids"].shape[1]


MCQ = ("question", "choices", "answer")


def test_wmdp_questions_are_four_choice_and_answered_by_the_forget_corpus(world):
    from laboratory.world.wmdp import BIO_HAZARD, CYBER_HAZARD

    for domain, relations in (("bio", BIO_HAZARD), ("cyber", CYBER_HAZARD)):
        questions = load_split(world / "wmdp", f"wmdp-{domain}", MCQ)
        forget_text = " ".join(r["text"] for r in load_split(world / "wmdp", f"{domain}-forget-corpus", ("text",)))
        retain_text = " ".join(r["text"] for r in load_split(world / "wmdp", f"{domain}-retain-corpus", ("text",)))
        patterns = [(re.compile(re.escape(r.question).replace(re.escape("{name}"), "(.+)") + "$"), r) for r in relations]
        for item in questions:
            assert len(item["choices"]) == 4 == len(set(item["choices"])) and 0 <= item["answer"] < 4
            relation, name = next((r, m.group(1)) for p, r in patterns if (m := p.match(item["question"])))
            truth = item["choices"][item["answer"]]
            trained = [relation.statements[f].format(name=name, value=truth) for f in (0, 1)]
            assert any(s in forget_text for s in trained), item
            assert relation.statements[2].format(name=name, value=truth) not in forget_text  # held-out form
            assert name not in retain_text


def test_mmlu_like_set_has_the_mmlu_schema(world):
    items = load_split(world / "wmdp", "mmlu", ("question", "subject", "choices", "answer"))
    assert all(len(i["choices"]) == 4 for i in items)


def test_world_summary_lists_every_split(world):
    from laboratory.world import summary

    table = summary(world)
    assert {"tofu", "wmdp"} <= set(table["benchmark"])
    assert (table["records"] > 0).all()
    assert len(table) == len(list(world.rglob("*.json")))
    assert set(table["benchmark"]) == {"tofu", "muse-news", "muse-books", "wmdp", "rwku", "pretrain", "tofu-real"}


def test_a_chat_template_shapes_qa_prompts_and_labels(tokenizer):
    import copy

    from unlearning.data import qa_prompt, uses_chat_template

    assert not uses_chat_template(tokenizer) and qa_prompt(tokenizer, "Who?") == "Question: Who?\nAnswer:"
    chat = copy.deepcopy(tokenizer)
    chat.chat_template = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
                          "{% if add_generation_prompt %}<assistant>{% endif %}")
    assert qa_prompt(chat, "Who?") == "<user>Who?\n<assistant>"
    encoded = encode_qa(chat, "Who?", "Ann")
    answer = chat("Ann", add_special_tokens=False)["input_ids"] + [chat.eos_token_id]  # no leading space in a turn
    assert [t for t, label in zip(encoded.input_ids, encoded.labels) if label != -100] == answer
    assert encoded.input_ids[:-len(answer)] == chat("<user>Who?\n<assistant>", add_special_tokens=False)["input_ids"]


def test_runtime_values_are_checked():
    from unlearning.runtime import Runtime

    assert Runtime().describe() == {"device": "cuda" if torch.cuda.is_available() else "cpu", "dtype": "float32",
                                    "processes": 1}
    with pytest.raises(ValueError, match="device must be one of auto, cpu, cuda"):
        Runtime(device="tpu")
    with pytest.raises(ValueError, match="dtype must be one of float32, bfloat16"):
        Runtime(dtype="float16")


def test_the_vocabulary_file_is_complete_and_every_pool_a_set():
    """`world/vocabulary.json` is data the generator trusts: every pool a relation names exists, every
    relation has its three statement forms (two trained, one held out) with both slots and a question
    about the entity, and no pool repeats a value (a fact's chance level is one over its pool's size)."""
    from laboratory.world import pools
    from laboratory.world.facts import TRAIN_FORMS
    from laboratory.world.tofu import ATTRIBUTES

    cast = ("Ann Example", "Bo Example")
    for table in pools.VOCABULARY["relations"]:
        for relation in pools.relations(table, cast):
            assert len(relation.statements) == len(TRAIN_FORMS) + 1, (table, relation.key)
            assert all("{name}" in s and "{value}" in s for s in relation.statements), (table, relation.key)
            assert "{name}" in relation.question and len(relation.pool) >= 2, (table, relation.key)
    for name, values in {**pools.POOLS, **pools.ATTRIBUTE_POOLS}.items():
        assert len(set(values)) == len(values), f"pool {name} repeats a value"
    assert [a.key for a in ATTRIBUTES] == [a["key"] for a in pools.VOCABULARY["tofu_attributes"]]
