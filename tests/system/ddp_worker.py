"""One process of the two-process DDP equivalence test (launched by tests/test_distributed.py
with `torch.distributed.run --nproc_per_node 2`); not collected by pytest itself."""

import json
import sys
from pathlib import Path

from accelerate import Accelerator
from safetensors.torch import save_file

from unlearning.data import encode_qa_split, load_split
from unlearning.engine import OptimConfig, unlearn
from unlearning.methods import get_method
from unlearning.models import load_model, load_tokenizer


def main(model_dir: str, tokenizer_dir: str, data_dir: str, method: str, rule: str, out: str) -> None:
    accelerator = Accelerator(cpu=True)
    tokenizer = load_tokenizer(tokenizer_dir)
    forget = encode_qa_split(tokenizer, load_split(data_dir, "forget10"))
    retain = encode_qa_split(tokenizer, load_split(data_dir, "retain90"))
    model = load_model(model_dir)
    spec = get_method(method)
    result = unlearn(model, spec, spec.hparams(), forget, retain, pad_token_id=tokenizer.pad_token_id, rule=rule,
                     max_steps=3, optim=OptimConfig(lr=1e-2, batch_size=2, optimizer="sgd"), seed=0,
                     accelerator=accelerator)
    if accelerator.is_main_process:
        save_file({k: v.detach().clone() for k, v in model.state_dict().items()}, str(Path(out) / "weights.safetensors"))
        (Path(out) / "info.json").write_text(json.dumps({"processes": accelerator.num_processes, "steps": result.steps}))
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main(*sys.argv[1:])
