"""The shape of the package: imports run one way, every cache key covers the code behind it, and
a benchmark, a method or a metric is added in one module plus one registry line."""

import ast
import importlib
import json
import os
import subprocess
import shutil
import sys
from pathlib import Path

import pytest

from unlearning.benchmarks import REGISTRY, get_benchmark
from unlearning.cli import main
from unlearning.models import save_model
from unlearning.store import code_closure, code_key

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGES = ("unlearning", "laboratory", "experiments")  # in the one direction they may import


def _imports() -> dict[str, set[str]]:
    """Module -> the project modules it imports, at top level or inside functions."""
    graph = {}
    for package in PACKAGES:
        for path in (SRC / package).rglob("*.py"):
            name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
            deps = set()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
                    for alias in node.names:  # `from unlearning.metrics import mia` imports the module mia
                        sub = f"{node.module}.{alias.name}"
                        deps.add(sub if (SRC / Path(*sub.split("."))).with_suffix(".py").is_file() else node.module)
                elif isinstance(node, ast.Import):
                    deps |= {a.name for a in node.names if a.name.split(".")[0] in PACKAGES}
            graph[name] = deps - {name}
    return graph


def test_no_import_cycle_inside_the_packages():
    graph = _imports()
    # a package's __init__ importing its own submodules is how a registry is built, not a cycle
    graph = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}

    def visit(module, path):
        state[module] = 1
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == 1:
                pytest.fail("import cycle: " + " -> ".join(path[path.index(dep):] + [dep]) if dep in path
                            else f"import cycle through {dep}")
            if dep in graph and state.get(dep) is None:
                visit(dep, path + [dep])
        state[module] = 2

    for module in sorted(graph):
        if state.get(module) is None:
            visit(module, [module])


def _against_the_direction(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a package later in PACKAGES: the library imports neither the laboratory nor the
    book's layer, the laboratory not the book's."""
    rank = {package: index for index, package in enumerate(PACKAGES)}
    return sorted(f"{module} imports {dep}" for module, deps in graph.items() for dep in deps
                  if rank[dep.split(".")[0]] > rank[module.split(".")[0]])


def test_the_packages_import_one_way_only():
    assert _against_the_direction({"unlearning.engine": {"unlearning.margin"}, "experiments.lab": {"laboratory.world"}}) == []
    planted = {"unlearning.engine": {"experiments.plotting"}, "laboratory.gates": {"experiments.lab"},
               "laboratory.learning": {"unlearning.models"}}
    assert _against_the_direction(planted) == ["laboratory.gates imports experiments.lab",
                                               "unlearning.engine imports experiments.plotting"]
    assert _against_the_direction(_imports()) == []


# The import order the README states, every module placed: a module imports from its own layer or
# the layers before it, never after (the cycle test above covers imports inside one layer). The
# packages' layers follow each other in the packages' order.
LAYERS = (
    ("foundation", {"unlearning", "choices", "records", "failpoints", "progress", "runtime", "store", "quantize"}),
    ("margin", {"margin"}),
    ("data", {"data"}),
    ("math", {"losses", "synthesis", "stopping"}),
    ("metrics", {"metrics"}),
    ("benchmarks", {"benchmarks"}),
    ("models and methods", {"models", "methods"}),
    ("engine and evaluation", {"engine", "evaluate", "fetch", "hf"}),
    ("runs", {"runs"}),
    ("recipes", {"recipes"}),
    ("cli", {"cli"}),
    ("laboratory: world and model family", {"laboratory", "laboratory.world", "laboratory.family"}),
    ("laboratory: gates and learning", {"laboratory.gates", "laboratory.learning"}),
    ("laboratory: cli", {"laboratory.cli"}),
    ("experiments: statistics", {"experiments", "experiments.intervals", "experiments.floors", "experiments.presentation",
                                 "experiments.makelock", "experiments.memorization"}),
    ("experiments: verdicts and plots", {"experiments.claims", "experiments.verdicts", "experiments.trajectory",
                                         "experiments.plotting", "experiments.alignment", "experiments.tables"}),
    ("experiments: the bench", {"experiments.protocol", "experiments.lab"}),
    ("experiments: the scaling rule", {"experiments.calibration"}),
    ("experiments: comparisons", {"experiments.comparison", "experiments.real_comparison", "experiments.retention",
                                  "experiments.beyond", "experiments.own_trainer"}),
    ("experiments: entry points", {"experiments.parameters", "experiments.execution"}),
    ("experiments: cli", {"experiments.cli"}),
)


def _layer_of(module: str) -> int:
    parts = module.split(".")
    top = (parts[1] if len(parts) > 1 else parts[0]) if parts[0] == "unlearning" else ".".join(parts[:2])
    for index, (_, members) in enumerate(LAYERS):
        if top in members:
            return index
    raise AssertionError(f"{module} is in no layer of LAYERS: place it (and in the README's layout)")


def test_layers_import_downwards_only():
    """unlearning: foundation (store, records, ...) -> margin -> data -> math (losses, synthesis,
    stopping) -> metrics -> benchmarks -> models, methods -> engine, evaluate -> runs -> recipes,
    protocol -> cli; then the laboratory's layers, then the book's: every module in one layer,
    imports only from its own layer or below."""
    upward = sorted(f"{module} (layer {LAYERS[_layer_of(module)][0]}) imports {dep} (layer {LAYERS[_layer_of(dep)][0]})"
                    for module, deps in _imports().items() for dep in deps if _layer_of(dep) > _layer_of(module))
    assert not upward, "\n".join(upward)


def test_a_suite_key_covers_its_code_but_not_its_gates():
    tofu = get_benchmark("tofu")
    suite, gates = code_closure(tofu.suite), code_closure(tofu.gates)
    assert ("unlearning/benchmarks/tofu.py", "suite") in suite and ("unlearning/benchmarks/tofu.py", "_tofu_part") in suite
    assert ("unlearning/metrics/tofu.py", "*") in suite and ("unlearning/metrics/generation.py", "greedy_generate") in suite
    assert ("unlearning/benchmarks/tofu.py", "gates") not in suite and ("unlearning/benchmarks/tofu.py", "suite") not in gates
    muse_gates = code_closure(get_benchmark("muse-news").gates)
    assert ("unlearning/benchmarks/muse.py", "suite") in muse_gates  # the MUSE gates are computed by the suite


def test_the_run_key_covers_the_training_stack_and_nothing_of_the_suites():
    from unlearning.runs import execute

    files = {f for f, _ in code_closure(execute)}
    assert {f"unlearning/{name}.py" for name in ("engine", "losses", "margin", "synthesis", "stopping", "methods",
                                                  "runs")} <= files
    assert not any(f.startswith("unlearning/benchmarks/") for f in files)


def _spec_builders(sources: dict[str, str]) -> list[str]:
    """'module.function' of every function whose body calls RunSpec(...) (module level: '<module>')."""
    found = []
    for module, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls = [c for c in ast.walk(node) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == "RunSpec"]
                found += [f"{module}.{node.name}"] * bool(calls)
    return sorted(found)


def _replace_calls(text: str) -> int:
    """Calls of `replace(...)` or `dataclasses.replace(...)`: a spec patched after it was built."""
    return sum(isinstance(c, ast.Call) and (getattr(c.func, "id", None) == "replace" or getattr(c.func, "attr", "") ==
               "replace" and getattr(c.func.value, "id", "") == "dataclasses") for c in ast.walk(ast.parse(text)))


def test_a_run_spec_is_built_in_one_function_and_the_cli_patches_none():
    """One specification path (issue 46): `RunSpec(` is constructed in `recipes.build_spec` and,
    reading a stored record, `runs.spec_from_record`, nowhere else in the three packages; the
    command line changes a run only through `recipes.Changes`."""
    sources = {str(p.relative_to(SRC).with_suffix("")).replace("/", "."): p.read_text()
               for package in PACKAGES for p in (SRC / package).rglob("*.py")}
    assert _spec_builders(sources) == ["unlearning.recipes.__init__.build_spec", "unlearning.runs.spec_from_record"]
    planted = {**sources, "experiments.lab": sources["experiments.lab"] + "\n\ndef f():\n    return RunSpec('tofu', 'GA', 'm')\n"}
    assert "experiments.lab.f" in _spec_builders(planted)
    assert _replace_calls(sources["unlearning.cli"]) == 0
    assert _replace_calls("from dataclasses import replace\nreplace(spec, seed=1)\n") == 1


@pytest.fixture
def toy_module(tmp_path, monkeypatch):
    """The toy benchmark copied into a fresh folder (so a test can edit its source) and
    registered with one line."""
    shutil.copy(Path(__file__).parents[1] / "toy" / "toy_benchmark.py", tmp_path / "toy_benchmark_copy.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_benchmark_copy")
    monkeypatch.setitem(REGISTRY, "toy", module.TOY)  # the one registry line
    yield module, tmp_path / "toy_benchmark_copy.py"
    sys.modules.pop("toy_benchmark_copy", None)


@pytest.fixture
def toy_world(tmp_path, world):
    folder = tmp_path / "data" / "toy"
    folder.mkdir(parents=True)
    lines = (world / "tofu" / "forget10.json").read_text().splitlines()
    (folder / "facts.json").write_text("\n".join(lines[:8]) + "\n")
    (folder / "others.json").write_text("\n".join(lines[8:16]) + "\n")
    return folder


def test_a_toy_benchmark_goes_through_evaluate_and_the_cli(toy_module, toy_world, target, tokenizer, tmp_path, capsys):
    module, source = toy_module
    save_model(target, tmp_path / "models" / "target")
    tokenizer.save_pretrained(tmp_path / "models" / "tokenizer")
    args = ["evaluate", "--benchmark", "toy", "--data", str(toy_world), "--model", str(tmp_path / "models" / "target")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("wrote") and "facts_probability" in out
    # editing the toy's gates leaves its evaluation in the store; editing its suite recomputes it
    text = source.read_text()
    source.write_text(text.replace('{"knows_facts": ', '{"knows_facts_renamed": '))
    assert main(args) == 0 and capsys.readouterr().out.startswith("cached")
    source.write_text(text.replace('{"facts_probability": ', '{"facts_probability_v2": '))
    assert main(args) == 0 and capsys.readouterr().out.startswith("wrote")
    # and it unlearns through the same command, under the book's protocol
    store = tmp_path / "runs"
    assert main(["unlearn", "--benchmark", "toy", "--data", str(toy_world), "--model", str(tmp_path / "models" / "target"),
                 "--method", "GA", "--store", str(store)]) == 0, capsys.readouterr().err
    (record,) = [json.loads(p.read_text()) for p in store.glob("*/record.json")]
    assert record["benchmark"] == "toy" and record["forget_split"] == "facts" and record["retain_split"] == "others"
    assert record["steps"] == 5 * 2  # 5 epochs over 8 facts in batches of 4


def test_a_method_is_one_registry_entry(target, tokenizer, world, tmp_path, monkeypatch):
    import torch

    from unlearning import losses
    from unlearning.methods import METHODS, Method, retain_nll
    from unlearning.runs import RunSpec, run

    def forget_flat(model, batch, ctx):  # a new objective: push every answer token's log-prob down, mean over tokens
        logprobs, mask = losses.token_logprobs(model(input_ids=batch["input_ids"]).logits, batch["labels"])
        return logprobs.sum() / mask.sum()

    monkeypatch.setitem(METHODS, "Flat", Method("Flat", forget_flat, retain_nll, {"alpha": 1.0, "gamma": 1.0}))  # the one line
    save_model(target, tmp_path / "target")
    tokenizer.save_pretrained(tmp_path / "tok")
    record = run(RunSpec("tofu", "Flat", str(tmp_path / "target"), forget_split="forget10", max_steps=2),
                 world / "tofu", tmp_path / "tok", tmp_path / "runs")
    assert record["method"] == "Flat" and record["steps"] == 2 and torch.isfinite(torch.tensor(record["log"][-1]["forget_loss"]))


def test_gate_code_changes_remeasure_only_the_models_they_judge(world, tmp_path, monkeypatch):
    import laboratory.learning as learning
    from laboratory.learning import LearnPlan, learn

    plan = LearnPlan.from_dict({"sizes": ["xs"], "main_size": "xs", "pretrain": {"epochs": 1, "batch_size": 64},
                                "finetune": {"epochs": 1, "batch_size": 64}, "main_oracles": [], "muse": [],
                                "vocab_size": 512})
    learn(plan, world, tmp_path, log=lambda _: None)
    original = learning.gates_version
    monkeypatch.setattr(learning, "gates_version", lambda b: original(b) + ("changed" if b == "tofu" else ""))
    messages = []
    learn(plan, world, tmp_path, log=messages.append)
    assert sorted(m for m in messages if not m.startswith("up to date")) == [
        "re-measured the gates of tofu/retain90-xs", "re-measured the gates of tofu/target-xs"]
    assert all(not m.startswith("learned") for m in messages)


def test_a_quantizer_change_makes_a_new_4bit_copy(tmp_path, target, monkeypatch):
    import experiments.lab as lab_module
    from experiments.lab import Lab

    lab = Lab(tmp_path / "data", tmp_path / "models", tmp_path / "runs")
    save_model(target, tmp_path / "model")
    first = lab.quantized(tmp_path / "model")
    assert lab.quantized(tmp_path / "model") == first
    monkeypatch.setattr(lab_module, "code_key", lambda *functions: "another quantizer")
    second = lab.quantized(tmp_path / "model")
    assert second != first and (second / "model.safetensors").is_file()


def test_code_key_follows_edits_of_a_module(tmp_path, monkeypatch):
    source = tmp_path / "keyed_module.py"
    source.write_text("LIMIT = 3\n\n\ndef helper(x):\n    return x + LIMIT\n\n\ndef f(x):\n    return helper(x)\n\n\n"
                      "def g(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("keyed_module")
    before_f, before_g = code_key(module.f), code_key(module.g)
    import os
    source.write_text(source.read_text().replace("LIMIT = 3", "LIMIT = 4"))
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 1_000_000))
    assert code_key(module.f) != before_f and code_key(module.g) == before_g
    sys.modules.pop("keyed_module", None)


def _make_variable(text: str, name: str) -> list[str]:
    """The words of a `NAME := ...` assignment in make's database (`make -pn`: expanded, one line)."""
    joined = text.replace("\\\n", " ")
    line = next(line for line in joined.splitlines() if line.startswith(f"{name} :="))
    return line.split(":=", 1)[1].split()


@pytest.mark.parametrize("profile", ["smoke", "mini"])
def test_the_chapter_chains_cover_every_chapter_once_and_order_each_chain(profile):
    """`make book` executes two chapters at a time; chapters that share runs are one chain, one
    after another. At each profile every chapter is in exactly one chain, and make's own database
    (what it would do for `make notebooks`) orders each chain's chapters one after the next."""
    root = SRC.parent

    def database(goal: str) -> str:
        return subprocess.run(["make", "-pn", goal, f"PROFILE={profile}"], cwd=root, capture_output=True, text=True,
                              env={**os.environ, "UNLEARNING_MAKE_LOCK": "1"}).stdout

    def order_only(text: str) -> dict[str, list[str]]:
        return {line.split(":", 1)[0]: line.split("|", 1)[1].split() for line in text.splitlines()
                if line.startswith("book/generated/") and "|" in line}

    full = database("notebooks")
    chains = [_make_variable(full, name) for name in ("CHAIN_A", "CHAIN_B")]
    chapters = sorted(path.stem for path in (root / "notebooks").glob("*.py"))
    assert sorted(sum(chains, [])) == chapters
    for chain in chains:
        for before, after in zip(chain, chain[1:]):
            assert f"book/generated/{before}.ipynb" in order_only(full)[f"book/generated/{after}.ipynb"], (before, after)
    # one chapter alone (`make nb-NAME`) waits for no other chapter
    alone = order_only(database("nb-14-tofu-real"))["book/generated/14-tofu-real.ipynb"]
    assert not [p for p in alone if p.startswith("book/generated/") and p.endswith(".ipynb")]


def chapter_lines(text: str) -> tuple[int, int]:
    """(code lines, Markdown lines) of a py:percent chapter: the non-blank lines of its code cells
    that are not comments, the non-blank lines of its Markdown cells."""
    import jupytext

    cells = jupytext.reads(text, fmt="py:percent").cells
    code = sum(1 for c in cells if c.cell_type == "code" for line in c.source.splitlines()
               if line.strip() and not line.strip().startswith("#"))
    markdown = sum(1 for c in cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.strip())
    return code, markdown


def test_chapter_lines_counts_code_without_comments_and_markdown_without_blanks():
    text = "# %% [markdown]\n# # Title\n#\n# One line.\n\n# %%\nimport os  # kept\n# a comment\n\nx = 1\n"
    assert chapter_lines(text) == (2, 2)


@pytest.mark.parametrize("chapter", sorted(p.name for p in (SRC.parent / "notebooks").glob("*.py")))
def test_no_chapter_holds_more_code_than_markdown(chapter):
    """A chapter is Markdown with short code cells (issue 32): what it computes lives in the library."""
    code, markdown = chapter_lines((SRC.parent / "notebooks" / chapter).read_text())
    assert code <= markdown, f"{chapter}: {code} code lines against {markdown} of Markdown"
