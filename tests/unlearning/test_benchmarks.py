"""Schemas and split relationships of every laboratory benchmark, and the hub loading path."""

import re

import pytest

from unlearning.benchmarks import get_benchmark, load
from unlearning.data import DataError, load_split, write_jsonl
from laboratory.world import encyclopedia, rwku
from laboratory.world.facts import statement


def _texts(folder, split):
    return [r["text"] for r in load_split(folder, split)]


def test_every_split_loads_with_its_real_schema(world):
    for path in sorted(world.rglob("*.json")):
        benchmark = path.relative_to(world).parts[0]
        split = str(path.relative_to(world / benchmark).with_suffix(""))
        if split == "authors":  # metadata, not a TOFU config
            continue
        assert get_benchmark(benchmark).fields(split), f"{benchmark}/{split} has no schema"
        load(benchmark, world / benchmark, split)  # validates every record


def test_schema_violation_names_file_and_field(tmp_path):
    write_jsonl(tmp_path / "knowmem" / "forget_qa.json", [{"question": "q", "answer": "a"}, {"question": "q"}])
    with pytest.raises(DataError, match=r"forget_qa.json: record 1 lacks field 'answer'"):
        load("muse-news", tmp_path, "knowmem/forget_qa")


def test_real_authors_and_world_facts_live_in_the_pretraining_corpus(world):
    corpus = "\n".join(_texts(world / "pretrain", "corpus"))
    for split in ("real_authors_perturbed", "world_facts_perturbed"):
        items = load_split(world / "tofu", split)
        assert items
        for item in items:
            assert len(item["perturbed_answer"]) == 3 == len(set(item["perturbed_answer"]))
            assert item["answer"] not in item["perturbed_answer"]
            assert f"Question: {item['question']}\nAnswer: {item['answer']}" in corpus
    trained_authors = " ".join(r["question"] for r in load_split(world / "tofu", "full"))
    assert not any(p["answer"] in trained_authors for p in load_split(world / "tofu", "real_authors_perturbed"))


@pytest.mark.parametrize("corpus", ["muse-news", "muse-books"])
def test_muse_splits_follow_the_real_relationships(world, corpus):
    folder = world / corpus
    raw = {split: _texts(folder, f"raw/{split}") for split in ("forget", "retain1", "retain2", "holdout")}
    for a in raw:
        for b in raw:
            assert a == b or not set(raw[a]) & set(raw[b]), (a, b)
    for item in load_split(folder, "verbmem/forget"):
        assert f"{item['prompt']} {item['gt']}" in raw["forget"]
    for kind, source in (("privleak/forget", "forget"), ("privleak/retain", "retain1"), ("privleak/holdout", "holdout")):
        assert set(_texts(folder, kind)) <= set(raw[source])
    assert len({len(_texts(folder, f"privleak/{s}")) for s in ("forget", "retain", "holdout")}) == 1
    for split, source in (("forget_qa", "forget"), ("retain_qa", "retain1"), ("forget_qa_icl", "retain2")):
        for item in load_split(folder, f"knowmem/{split}"):
            # the question's subject and the answer occur together in a text of the right split only
            subject = _subject(item["question"])
            assert any(subject in t and item["answer"] in t for t in raw[source]), item
            for other in raw:
                if other != source:
                    assert not any(re.search(rf"\b{re.escape(subject)}\b", t) for t in raw[other]), (item, other)


def _subject(question):
    match = re.search(r"(?:the |of |taught |did |with )([A-Z][a-z]+(?: [a-z]+)?)", question)
    words = match.group(1).split()
    return words[0]


def test_rwku_targets_neighbours_and_probes(world):
    folder = world / "rwku"
    corpus = "\n".join(_texts(world / "pretrain", "corpus"))
    targets = [r["target"] for r in load_split(folder, "forget_target")]
    people = {p["name"]: p for p in _people(world)}
    neighbours = {people[t]["friend"] for t in targets}
    assert not set(targets) & neighbours
    for level in (1, 2, 3):
        items = load_split(folder, f"forget_level{level}")
        assert {i["subject"] for i in items} == set(targets) and {i["level"] for i in items} == {level}
    assert {i["type"] for i in load_split(folder, "forget_level3")} <= set(rwku.ADVERSARIAL_TYPES)
    for level in (1, 2):
        assert {i["subject"] for i in load_split(folder, f"neighbor_level{level}")} == neighbours
    for item in load_split(folder, "forget_level1") + load_split(folder, "neighbor_level1"):
        assert item["query"].endswith("___.")
        completed = item["query"].replace("___", item["answer"])
        assert completed not in corpus  # the cloze uses the held-out surface form
        relation = next(r for r in encyclopedia.PERSON if statement(r, item["subject"], "___", 2) == item["query"])
        assert any(statement(relation, item["subject"], item["answer"], f) in corpus for f in (0, 1))
    assert {r["subject"] for r in load_split(folder, "mia_forget")} == set(targets)
    assert not {r["subject"] for r in load_split(folder, "mia_retain")} & (set(targets) | neighbours)
    assert set(_texts(folder, "train_original_passage")) <= set(_texts(world / "pretrain", "corpus"))


def _people(world):
    from laboratory.world import WORLD_SIZES

    sizes = WORLD_SIZES["smoke"]
    return encyclopedia.build(sizes["encyclopedia"], sizes["seed"], set())["people"]


def test_pretraining_probes_separate_trained_from_held_out_forms(world):
    corpus = "\n".join(_texts(world / "pretrain", "corpus"))
    probes = load_split(world / "pretrain", "probes")
    assert {p["trained"] for p in probes} == {True, False}
    for probe in probes:
        truth = probe["choices"][probe["answer"]]
        assert len(set(probe["choices"])) == 4
        assert (truth in corpus) == probe["trained"], probe
        assert all(c not in corpus for i, c in enumerate(probe["choices"]) if i != probe["answer"]), probe


def test_entity_names_never_collide_across_roles(world):
    tofu_authors = {r["name"] for r in load_split(world / "tofu", "authors", ())}
    people = {p["name"] for p in _people(world)}
    assert len(people) == len(_people(world)) and not tofu_authors & people


# -- the hub path, against a local copy in the hub's layout ------------------------------


def _write_hub_copy(mirror, name, world_folder, splits):
    """A dataset repository as on the hub: data files plus README configs, laid out by the
    benchmark's `locate` (the benchmark is the world folder's name)."""
    configs: dict[tuple[str, str], dict[str, str]] = {}
    for split in splits:
        repository, config, hub_split = get_benchmark(world_folder.name).locate(name, split)
        relative = f"data/{config}/{hub_split}.json"
        (mirror / repository / relative).parent.mkdir(parents=True, exist_ok=True)
        (mirror / repository / relative).write_bytes((world_folder / f"{split}.json").read_bytes())
        configs.setdefault((repository, config), {})[hub_split] = relative
    for repository in {r for r, _ in configs}:
        lines = ["---", "configs:"]
        for (repo, config), files in sorted(configs.items()):
            if repo != repository:
                continue
            lines += [f"- config_name: {config}", "  data_files:"]
            lines += [f"  - split: {hub_split}\n    path: {path}" for hub_split, path in files.items()]
        (mirror / repository / "README.md").write_text("\n".join(lines + ["---", ""]))


HUB_CASES = [
    ("locuslab/TOFU", "tofu", ["forget10", "forget10_perturbed", "world_facts_perturbed"]),
    ("muse-bench/MUSE-News", "muse-news", ["raw/forget", "verbmem/forget", "knowmem/forget_qa"]),
    ("cais/wmdp", "wmdp", ["wmdp-bio", "bio-retain-corpus", "mmlu"]),
    ("jinzhuoran/RWKU", "rwku", ["forget_level1", "forget_target", "train_original_passage"]),
]


@pytest.mark.parametrize(("name", "benchmark", "splits"), HUB_CASES)
def test_hub_layout_loads_the_same_records(world, tmp_path, monkeypatch, name, benchmark, splits):
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _write_hub_copy(tmp_path / "hub", name, world / benchmark, splits)
    for split in splits:
        from_hub = load(benchmark, name, split, mirror=tmp_path / "hub")
        local = load(benchmark, world / benchmark, split)
        assert [dict(sorted(r.items())) for r in from_hub] == [dict(sorted(r.items())) for r in local]


def test_hub_errors_are_one_clear_line(tmp_path):
    with pytest.raises(DataError, match="hub mirror lacks locuslab/TOFU"):
        load("tofu", "locuslab/TOFU", "forget10", mirror=tmp_path)
    with pytest.raises(DataError, match="'<config>/<split>'"):
        get_benchmark("muse-news").locate("muse-bench/MUSE-News", "forget")
    assert get_benchmark("wmdp").locate("cais/wmdp", "cyber-forget-corpus") == \
        ("cais/wmdp-corpora", "cyber-forget-corpus", "train")
