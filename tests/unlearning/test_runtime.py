"""Where a run runs (`unlearning.runtime`): the checked device and dtype, what enters keys, random
state borrowed without a trace, and a single process that is its own group."""

import pytest
import torch

from unlearning.runtime import TORCH_DTYPES, Runtime, launched_as_group, own_random_state


def test_a_runtime_resolves_auto_and_describes_what_enters_keys():
    runtime = Runtime()
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert runtime.device_type == expected
    assert runtime.describe() == {"device": expected, "dtype": "float32", "processes": 1}
    assert Runtime(dtype="bfloat16").torch_dtype is torch.bfloat16 and TORCH_DTYPES["float32"] is torch.float32


@pytest.mark.parametrize("options, message", [
    ({"device": "tpu"}, "device must be one of"),
    ({"dtype": "float16"}, "dtype must be one of"),
])
def test_a_wrong_device_or_dtype_is_one_line(options, message):
    with pytest.raises(ValueError, match=message):
        Runtime(**options)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine with a GPU accepts cuda")
def test_cuda_without_a_gpu_is_refused():
    with pytest.raises(ValueError, match="torch sees no GPU here"):
        Runtime(device="cuda")


def test_one_process_is_its_own_group(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    runtime = Runtime(device="cpu")
    assert not launched_as_group() and runtime.accelerator() is None
    assert runtime.is_main and runtime.processes == 1 and runtime.torch_device() == torch.device("cpu")
    runtime.wait()  # no group: returns at once
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert launched_as_group()


def test_borrowed_random_state_is_seeded_and_leaves_the_callers_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    with own_random_state(7):
        inside = torch.rand(2)
    assert torch.equal(torch.random.get_rng_state(), before)
    torch.manual_seed(7)
    assert torch.equal(inside, torch.rand(2))
