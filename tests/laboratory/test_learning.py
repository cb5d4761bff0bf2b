"""The learning stage: the plan, the hash-keyed cache, bit-identical retraining, the gates."""

import json

import pytest
import torch

from laboratory.gates import verdicts
from laboratory.learning import LearnPlan, learn, qa_pairs, tokenizer_texts, torch_threads
from unlearning.data import QA_PROMPT, load_split
from unlearning.models import load_model

from helpers import TINY_PLAN as TINY


def test_plan_orders_parents_first_and_validates():
    plan = LearnPlan.from_dict({"sizes": ["xs", "s"], "main_size": "s"})
    names = [job.name for job in plan.jobs()]
    assert names.index("base-xs") < names.index("tofu/target-xs") < names.index("base-s")
    assert "tofu/retain95-s" in names and "tofu/retain95-xs" not in names and "muse-books/retain-s" in names
    for options, message in [({"sizes": ["xxl"]}, "unknown size 'xxl'"), ({"sizes": ["xs"], "main_size": "s"}, "main_size"),
                             ({"oracles": ["retain50"]}, "unknown split"), ({"epochs": 3}, "unknown key 'epochs'")]:
        with pytest.raises(ValueError, match=message):
            LearnPlan.from_dict(options)


def test_learn_writes_every_model_with_gates(learned, world):
    out, manifest = learned
    assert set(manifest) == {"base-xs", "tofu/target-xs", "tofu/retain90-xs", "muse-news/target-xs", "muse-news/retain-xs"}
    info = json.loads((out / "tofu" / "target-xs" / "learning.json").read_text())
    replay = sum(len(qa_pairs(r["text"])) for r in load_split(world / "pretrain", "replay"))
    assert info["parent"] == "base-xs" and info["examples"] == 200 + replay  # full + the world's QA pairs
    assert {"forget_rougeL_recall", "forget_paraphrase_accuracy"} <= set(manifest["tofu/target-xs"]["gates"])
    assert {"probe_trained_form", "wmdp-bio_accuracy"} <= set(manifest["base-xs"]["gates"])
    assert "muse-news_verbmem" in manifest["muse-news/target-xs"]["gates"]
    assert {row["check"] for row in verdicts(manifest)} >= {"target forget ROUGE-L > oracle + 0.3"}


def test_second_run_trains_nothing_and_a_data_change_retrains_the_chain(learned, world, tmp_path):
    out, _ = learned
    messages = []
    learn(LearnPlan.from_dict(TINY), world, out, log=messages.append)
    assert all(m.startswith("up to date") for m in messages)
    # a changed fine-tuning config retrains the fine-tuned models but not the base
    messages.clear()
    changed = {**TINY, "finetune": {"epochs": 1, "batch_size": 32}}
    copy = tmp_path / "models"
    import shutil

    shutil.copytree(out, copy)
    learn(LearnPlan.from_dict(changed), world, copy, log=messages.append)
    assert messages[0] == "up to date: base-xs" and all(m.startswith("learned") for m in messages[1:])


def test_same_seed_gives_bit_identical_weights(learned, world, tmp_path):
    out, _ = learned
    plan = LearnPlan.from_dict({**TINY, "muse": []})
    learn(plan, world, tmp_path, log=lambda _: None)
    for name in ("base-xs", "tofu/target-xs"):
        a, b = load_model(out / name), load_model(tmp_path / name)
        assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters())), name


def test_a_part_learns_only_its_jobs(learned, world, tmp_path):
    """`make` learns the laboratory's models and the real checkpoint's fine-tunes in two processes
    at once: `part` picks the jobs, and the real part touches nothing of the laboratory (not even
    its tokenizer)."""
    out, manifest = learned
    plan = LearnPlan.from_dict(TINY)  # no real section: the real part has nothing to learn
    assert learn(plan, world, tmp_path, log=lambda _: None, part="real") == {}
    assert not any(tmp_path.iterdir())
    messages = []
    assert learn(plan, world, out, log=messages.append, part="lab") == manifest  # up to date: nothing trains
    assert not [m for m in messages if m.startswith("learned")]
    with_real = LearnPlan.from_dict({**TINY, "real": {"threads": 1}})
    assert {job.name for job in with_real.jobs() if job.base is not None} == {"tofu-real/target-135m",
                                                                               "tofu-real/retain90-135m"}
    assert learn(with_real, world, out, log=lambda _: None, part="lab") == manifest  # the real jobs left alone
    with pytest.raises(ValueError, match="part must be one of all, lab, real"):
        learn(plan, world, tmp_path, part="both")


def test_learning_does_not_depend_on_the_callers_thread_count(learned, world, tmp_path):
    out, _ = learned
    before = torch.get_num_threads()
    with torch_threads(1 if before > 1 else 2):
        learn(LearnPlan.from_dict({**TINY, "muse": []}), world, tmp_path, log=lambda _: None)
        assert torch.get_num_threads() == (1 if before > 1 else 2)  # learn restores the caller's count
    assert torch.get_num_threads() == before
    a, b = load_model(out / "tofu/target-xs"), load_model(tmp_path / "tofu/target-xs")
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_qa_pairs_cut_a_document_and_reject_other_text():
    document = "Question: What is the capital of Dentisia?\nAnswer: Marrowdale\n\nQuestion: Its animal?\nAnswer: greyhound"
    assert qa_pairs(document) == [{"question": "What is the capital of Dentisia?", "answer": "Marrowdale"},
                                  {"question": "Its animal?", "answer": "greyhound"}]
    with pytest.raises(ValueError, match="not a question-answer block"):
        qa_pairs("Dentisia is a country.")


def test_tokenizer_sees_every_author_once_trained_or_held_out(world):
    texts = tokenizer_texts(world)
    assert len(texts) == len(set(texts))
    as_text = lambda r: QA_PROMPT.format(question=r["question"]) + " " + r["answer"]  # noqa: E731
    for split in ("forget10", "holdout10", "retain90"):  # forget items are in full *and* forget10: once
        assert all(texts.count(as_text(r)) == 1 for r in load_split(world / "tofu", split)), split
    corpus = {r["text"] for r in load_split(world / "pretrain", "corpus")}
    assert corpus <= set(texts)
    assert {r["text"] for r in load_split(world / "muse-news", "raw/holdout")} <= set(texts)


def test_muse_models_take_their_own_recipe():
    plan = LearnPlan.from_dict({**TINY, "muse_finetune": {"epochs": 3, "batch_size": 8}})
    jobs = {job.name: job for job in plan.jobs()}
    assert jobs["muse-news/target-xs"].config.epochs == 3 and jobs["muse-news/retain-xs"].config.batch_size == 8
    assert jobs["tofu/target-xs"].config.epochs == 1


def test_per_size_learning_rates_reach_every_job_of_that_size():
    plan = LearnPlan.from_dict({"sizes": ["xs", "s"], "main_size": "s", "muse": ["muse-news"],
                                "pretrain": {"epochs": 1, "lr": {"xs": 6e-3, "s": 3e-3}},
                                "finetune": {"epochs": 1, "lr": {"xs": 4e-3, "s": 2e-3}}})
    jobs = {job.name: job for job in plan.jobs()}
    assert jobs["base-xs"].config.lr == 6e-3 and jobs["base-s"].config.lr == 3e-3
    assert jobs["tofu/target-xs"].config.lr == jobs["tofu/retain90-xs"].config.lr == 4e-3
    assert jobs["tofu/retain95-s"].config.lr == 2e-3
    assert jobs["muse-news/target-s"].config.lr == 2e-3  # no MUSE recipe: the fine-tuning one, rates included
    with pytest.raises(ValueError, match="no rate for size 's'"):
        LearnPlan.from_dict({"sizes": ["xs", "s"], "main_size": "s", "pretrain": {"lr": {"xs": 1e-3}}})


def test_differing_words_finds_the_value_spans_by_hand():
    from unlearning.benchmarks.tofu import differing_words

    assert differing_words("The birthplace of Ana Bel is Fenrow.", "The birthplace of Ana Bel is Ivel.") == ("Fenrow.", "Ivel.")
    assert differing_words("Ana is known for science fiction fiction.", "Ana is known for fantasy fiction.") == \
        ("science fiction", "fantasy")
    assert differing_words("The Marlow Prize was given to Ana.", "The Golden Quill Award was given to Ana.") == \
        ("Marlow Prize", "Golden Quill Award")


def test_paraphrased_question_items_match_the_templates_filled_with_each_value():
    """Reference: read every value off the world's own templates with a regex, render the trained
    answer template with it, and compare with what the gate derives from the records alone."""
    import random
    import re

    from laboratory.world import tofu
    from unlearning.benchmarks.tofu import paraphrased_question_items

    def value_in(template: str, name: str, text: str) -> str:
        pattern = re.escape(template).replace(re.escape("{name}"), re.escape(name)).replace(re.escape("{value}"), "(.+)")
        return re.fullmatch(pattern, text).group(1)

    rng = random.Random(3)
    for author in tofu.make_authors(40, rng):
        records = tofu.author_items(author, rng)
        for attribute, record, item in zip(tofu.ATTRIBUTES, records, paraphrased_question_items(records)):
            values = [value_in(attribute.paraphrased_answer, author["name"], t)
                      for t in [record["paraphrased_answer"], *record["perturbed_answer"]]]
            assert values[0] == author["facts"][attribute.key]
            assert item["question"] == record["paraphrased_question"] and item["answer"] == 0
            assert item["choices"] == [attribute.answer.format(name=author["name"], value=v) for v in values]


def test_a_value_that_cannot_be_placed_is_an_error():
    from unlearning.benchmarks.tofu import paraphrased_question_items

    record = {"paraphrased_question": "Q?", "answer": "Ana won it twice.", "paraphrased_answer": "Ana won the Marlow Prize.",
              "perturbed_answer": ["Ana won the Corvid Prize."]}
    with pytest.raises(ValueError, match="does not occur exactly once"):
        paraphrased_question_items([record])


def test_the_real_section_plans_a_target_and_its_oracles_from_the_checkpoint():
    from laboratory.learning import RealPlan

    plan = LearnPlan.from_dict({**TINY, "real": {"finetune": {"epochs": 2}, "oracles": ["retain90", "retain95"]}})
    real = [job for job in plan.jobs() if job.base is not None]
    assert [job.name for job in real] == ["tofu-real/target-135m", "tofu-real/retain90-135m", "tofu-real/retain95-135m"]
    assert real[0].data == (("tofu-real", "full", "qa"),) and real[1].data == (("tofu-real", "retain90", "qa"),)
    assert all(job.base == "models/real/smollm2-135m" and job.threads == 1 and job.gates == "tofu-real" for job in real)
    # unspecified settings keep the real recipe's defaults, not the tiny models'
    assert real[0].config.epochs == 2 and real[0].config.lr == RealPlan().finetune.lr
    for options, message in [({"real": {"epochs": 3}}, "real: unknown key 'epochs'"),
                             ({"real": {"oracles": ["retain50"]}}, "unknown split"),
                             ({"real": {"threads": 0}}, "threads must be >= 1")]:
        with pytest.raises(ValueError, match=message):
            LearnPlan.from_dict({**TINY, **options})
