"""One process of the two-process Trainer test (tests/system/test_distributed.py launches two with
`accelerate launch`): GradDiff with SAGO's update, stopped by MASC's violation rule; not collected by pytest."""

import json
import sys
from pathlib import Path

from safetensors.torch import save_file

from hf_trainers import GradDiff, arguments, collators, engine_pairs
from unlearning.data import encode_qa_split, load_split
from unlearning.hf import MascStopCallback
from unlearning.models import load_model, load_tokenizer

PROBE = {"rho": 0.3, "min_prefix": 2, "min_suffix": 2}  # a probe whose rate falls within a few steps
LR, TOLERANCE = 3e-3, 0.25  # GradDiff stops at step 10 (tests/system/test_distributed.py)


def main(model_dir: str, tokenizer_dir: str, data_dir: str, out: str, steps: str) -> None:
    tokenizer = load_tokenizer(tokenizer_dir)
    forget = encode_qa_split(tokenizer, load_split(data_dir, "forget10"))
    retain = encode_qa_split(tokenizer, load_split(data_dir, "retain90"))
    pairs, _ = collators(tokenizer.pad_token_id)
    stop = MascStopCallback(forget[:8], pad_token_id=tokenizer.pad_token_id, tolerance=TOLERANCE, every=2, trigger_size=4,
                            confirm_size=8, settings=PROBE, seed=0)
    args = arguments(out, update_rule="sago", max_steps=int(steps), learning_rate=LR)
    trainer = GradDiff(model=load_model(model_dir), args=args,
                       train_dataset=engine_pairs(forget, retain, 2, 2 * int(steps)), data_collator=pairs, callbacks=[stop])
    trainer.train()
    if trainer.is_world_process_zero():
        model = trainer.model
        save_file({k: v.detach().clone() for k, v in model.state_dict().items()}, str(Path(out) / "weights.safetensors"))
        (Path(out) / "info.json").write_text(json.dumps({
            "processes": trainer.accelerator.num_processes, "steps": trainer.state.global_step, "stop_step": stop.stop_step,
            "probes": [list(p) for p in stop.rule.history],
            "losses": [[h["forget_loss"], h["retain_loss"]] for h in trainer.state.log_history if "forget_loss" in h]}))


if __name__ == "__main__":
    main(*sys.argv[1:])
