"""rwku-real: RWKU's recipe on a real model (candidates, curation by the model, the model's corpus)."""

import pytest

from unlearning.benchmarks.rwku import SCHEMAS, probe_prompt
from laboratory.world import real_people, rwku_real


def test_candidates_are_well_formed():
    names = {n for pair in real_people.PAIRS for n in pair}
    assert names <= set(real_people.PEOPLE)
    assert not names & set(real_people.OTHERS)  # the retain corpus is about neither targets nor neighbours
    for name, facts in real_people.PEOPLE.items():
        for question, cloze, answer in facts:
            assert name in question and name.split()[-1] in cloze
            assert cloze.count("___") == 1 and cloze.endswith("___."), cloze  # level 1 completes a trailing blank
            assert answer and answer not in question


def test_probes_follow_rwku_schema_and_levels():
    splits = rwku_real.candidates("Albert Einstein", "Isaac Newton")
    fields = dict(SCHEMAS)[r"(forget|neighbor)_level\d"]
    for split, probes in splits.items():
        level = int(split[-1])
        assert probes and all(set(p) == set(fields) and p["level"] == level for p in probes)
    assert {p["subject"] for p in splits["forget_level3"]} == {"Albert Einstein"}
    assert {p["subject"] for p in splits["neighbor_level1"]} == {"Isaac Newton"}
    # level 3 cycles through the attack types; the in-context example is the other person's fact
    assert [p["type"] for p in splits["forget_level3"]] == list(rwku_real.ADVERSARIAL_TYPES)
    in_context = splits["forget_level3"][4]["query"]
    question, _, answer = real_people.PEOPLE["Isaac Newton"][0]
    assert in_context.startswith(f"{question} {answer}. ")
    hint = splits["forget_level3"][3]["query"]  # context hint: the next fact, stated with its value
    assert hint.startswith("Albert Einstein spent his last years in the town of Princeton.")


class _Tokenizer:
    """Enough of a tokenizer for `probe_prompt`: no chat template, the laboratory's QA format."""
    chat_template = None


def _fake_generate(known: set[str]):
    """A model that answers every probe about the people in `known` and nothing else, and writes
    'About <name>.' when asked to write about someone."""
    def generate(model, tokenizer, prompts, max_new_tokens, batch_size=32, stop_strings=()):
        outputs = []
        for prompt in prompts:
            probe = next((p for pair in real_people.PAIRS for split in rwku_real.candidates(*pair).values()
                          for p in split if probe_prompt(tokenizer, p) == prompt), None)
            if probe is not None:
                outputs.append(probe["answer"] if probe["subject"] in known else "I do not know")
            else:
                name = next(n for n in (*real_people.PEOPLE, *real_people.OTHERS) if n in prompt)
                outputs.append(f"About {name}. More text.")
        return outputs
    return generate


def test_build_keeps_what_the_model_answers(monkeypatch):
    # the first pair's target is unknown, so the builder skips it; its neighbour's probes are kept
    # only if the pair is chosen
    first_target = real_people.PAIRS[0][0]
    known = {n for pair in real_people.PAIRS for n in pair} - {first_target, real_people.PAIRS[2][1]}
    monkeypatch.setattr(rwku_real, "greedy_generate", _fake_generate(known))
    sizes = {"pairs": 2, "others": 2, "passages": 2, "passage_tokens": 8}
    splits = rwku_real.build(None, _Tokenizer(), sizes)
    chosen = [real_people.PAIRS[1], real_people.PAIRS[2]]
    assert [t["target"] for t in splits["forget_target"]] == [t for t, _ in chosen]
    assert splits["forget_target"][0]["intro"] == f"About {chosen[0][0]}."
    assert {p["subject"] for p in splits["forget_level2"]} == {t for t, _ in chosen}
    # the second pair's neighbour is unknown: none of its probes is kept
    assert {p["subject"] for p in splits["neighbor_level1"]} == {chosen[0][1]}
    assert len(splits["train_original_passage"]) == 2 * 2 and splits["train_original_passage"] == splits["mia_forget"]
    assert [p["subject"] for p in splits["mia_retain"]] == [n for n in real_people.OTHERS[:2] for _ in range(2)]
    rows = {(r["subject"], r["split"]): r for r in splits["curation"]}
    assert rows[(first_target, "forget_level2")]["kept"] == 0 and not rows[(first_target, "forget_level2")]["chosen"]
    assert rows[(chosen[0][0], "forget_level1")]["kept"] == rows[(chosen[0][0], "forget_level1")]["candidates"]


def test_build_refuses_a_model_that_knows_too_few_targets(monkeypatch):
    monkeypatch.setattr(rwku_real, "greedy_generate", _fake_generate(set()))
    with pytest.raises(ValueError, match="knows only 0 targets"):
        rwku_real.build(None, _Tokenizer(), {"pairs": 1, "others": 1, "passages": 1, "passage_tokens": 8})


class _ChatTokenizer:
    chat_template = "a template"

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        assert not tokenize and add_generation_prompt and [m["role"] for m in messages] == ["user"]
        return f"<user>{messages[0]['content']}<assistant>"


def test_chat_checkpoints_get_rwku_official_prompts():
    chat, probes = _ChatTokenizer(), rwku_real.candidates("Albert Einstein", "Isaac Newton")
    fb = probes["forget_level1"][1]
    assert probe_prompt(chat, fb) == ("<user>Please complete the blank in the following question.\n"
                                      "Question: Albert Einstein was born in the country of ___.\nAnswer:<assistant>")
    qa = probes["forget_level2"][1]
    assert probe_prompt(chat, qa) == ("<user>Please briefly answer the following question.\n"
                                      "Question: In which country was Albert Einstein born?\nAnswer:<assistant>")
    by_type = {p["type"]: p for p in probes["forget_level3"]}
    assert probe_prompt(chat, by_type["affirmative suffix"]).endswith("Sure, here is the answer:<assistant>")
    assert "Question:" not in probe_prompt(chat, by_type["in-context learning"])
    # the laboratory's models (no template): the cloze is completed from its trailing blank
    assert probe_prompt(_Tokenizer(), fb) == "Albert Einstein was born in the country of"


@pytest.mark.parametrize("profile", ["smoke", "mini"])
def test_committed_rwku_real_data_agree_with_their_curation(profile):
    from pathlib import Path

    from unlearning.benchmarks import get_benchmark
    from unlearning.data import read_jsonl

    folder = Path(__file__).resolve().parents[2] / "data" / profile / "rwku-real"
    if not folder.is_dir():
        pytest.skip(f"{folder} not built")
    bench = get_benchmark("rwku-real")
    curation = read_jsonl(folder / "curation.json")
    targets = [t["target"] for t in bench.load(folder, "forget_target")]
    assert len(targets) == rwku_real.SIZES[profile]["pairs"]
    assert {r["subject"] for r in curation if r["chosen"] and r["role"] == "target"} == set(targets)
    for split in ("forget_level1", "forget_level2", "forget_level3", "neighbor_level1", "neighbor_level2"):
        probes = bench.load(folder, split)
        assert len(probes) == sum(r["kept"] for r in curation if r["chosen"] and r["split"] == split)
        assert all(p in rwku_real.candidates(*pair)[split] for p in probes
                   for pair in real_people.PAIRS if p["subject"] in pair)
    passages = bench.load(folder, "train_original_passage")
    assert {p["subject"] for p in passages} == set(targets)
    assert len(passages) == len(targets) * rwku_real.SIZES[profile]["passages"]
