"""Shared fixtures: a small rendered world, a tokenizer trained on it, a tiny target model."""

import signal

import pytest

from laboratory.family import TrainConfig, build_model, train_causal_lm, train_tokenizer
from laboratory.learning import LearnPlan, learn, tokenizer_texts
from laboratory.world import generate
from unlearning.data import encode_qa_split, load_split

from helpers import TINY_PLAN

# The slowest files first (seconds on two workers, December 2026): pytest-xdist's `--dist loadfile`
# hands out files in collection order, and with these last one worker ran alone for about 50 s while
# the other had finished; first, the many short files fill the end evenly.
SLOW_FILES = ("system/test_interruption_learning.py",   # 102 s
              "system/test_interruption_runs.py",       # 96 s
              "system/test_staleness.py",               # 78 s
              "system/test_real_model.py",              # 73 s
              "system/test_interruption_chapter.py",    # 43 s
              "system/test_distributed.py")             # 40 s


def pytest_collection_modifyitems(items):
    """Run `SLOW_FILES` first, in that order; every other test keeps its place after them."""
    def rank(item) -> int:
        path = item.nodeid.split("::")[0].removeprefix("tests/")
        return SLOW_FILES.index(path) if path in SLOW_FILES else len(SLOW_FILES)
    items.sort(key=rank)


# A shell that starts a job in the background (`make test &`, a CI runner's wrapper) sets SIGINT to
# "ignore", and an ignored signal stays ignored across exec: the Ctrl-C tests' children would then
# never see their SIGINT. Ctrl-C's default disposition is restored for this process and, through
# exec, for every child the tests start (a handler is reset to the default there).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("world")
    generate("smoke", root)
    return root / "smoke"


@pytest.fixture(scope="session")
def tokenizer(world, tmp_path_factory):
    return train_tokenizer(tokenizer_texts(world), 512, tmp_path_factory.mktemp("tok") / "tokenizer")


@pytest.fixture(scope="session")
def splits(world, tokenizer):
    data = world / "tofu"
    return {name: encode_qa_split(tokenizer, load_split(data, name)) for name in ("forget10", "retain90", "full")}


@pytest.fixture(scope="session")
def target_state(tokenizer, splits):
    """State dict of an xs model briefly fine-tuned on `full` (a few seconds)."""
    model = build_model("xs", tokenizer, seed=0)
    train_causal_lm(model, splits["full"], TrainConfig(epochs=8, lr=3e-3, batch_size=16), tokenizer.pad_token_id)
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.fixture
def target(tokenizer, target_state):
    model = build_model("xs", tokenizer, seed=0)
    model.load_state_dict(target_state)
    return model.eval()


@pytest.fixture(scope="module")
def learned(world, tmp_path_factory):
    """The models of TINY_PLAN learned once per test module, and their manifest."""
    out = tmp_path_factory.mktemp("models")
    manifest = learn(LearnPlan.from_dict(TINY_PLAN), world, out, log=lambda _: None)
    return out, manifest
