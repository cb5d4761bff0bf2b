#!/usr/bin/env bash
# The paper path on a GPU, in one short script (run on a lent GPU machine; see perf/README.md).
# Needs: data/smoke (committed), models/smoke (make models PROFILE=smoke), the real model's config
# and tokenizer (models/real/smollm2-135m, without its weights), and wheels of rouge-score and
# nltk in .whl when the machine has no package index. Writes $OUT/gpu_check.json and logs.
set -uo pipefail
OUT=${OUT:-build/gpu-check}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=src:${PYTHONPATH:-} UNLEARNING_PROGRESS=0 PYTHONUNBUFFERED=1
PY=python3
STORE=/tmp/gpu-runs
REAL_CONFIG=${REAL_CONFIG:-models/real/smollm2-135m}  # config.json and tokenizer files suffice
export REAL_CONFIG
log() { echo "== $*"; }

log "environment"
$PY - <<'PY' | tee "$OUT/environment.txt"
import torch, transformers, accelerate, peft
print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
print("transformers", transformers.__version__, "accelerate", accelerate.__version__, "peft", peft.__version__)
PY

log "a random-weight model of SmolLM2-135M's architecture (the real weights do not travel)"
$PY - <<'PY'
import shutil, torch
from pathlib import Path
from transformers import AutoConfig, AutoModelForCausalLM
from unlearning.models import save_model
import os
real = Path(os.environ["REAL_CONFIG"])
config = AutoConfig.from_pretrained(real)
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
save_model(model, Path("/tmp/rand135m"))
for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
    shutil.copy(real / name, Path("/tmp/rand135m") / name)
PY

run() {  # name, then CLI arguments
  local name=$1; shift
  log "$name"
  local start=$SECONDS
  "$@" --store $STORE/$name > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall_seconds=$((SECONDS - start))" | tee -a "$OUT/summary.txt"
  tail -2 "$OUT/$name.log"
}
SMOKE=(--benchmark tofu-smoke --model models/smoke/tofu/target-xs)
REAL=(--benchmark tofu --data data/smoke/tofu --model /tmp/rand135m --split forget01 --retain-split holdout05)
run tiny-masc-auto       $PY -m unlearning.cli unlearn "${SMOKE[@]}" --method MASC --device auto
run tiny-masc-bf16-lora  $PY -m unlearning.cli unlearn "${SMOKE[@]}" --method MASC --device cuda --dtype bfloat16 --lora-rank 4
run tiny-npoklr-bf16     $PY -m unlearning.cli unlearn "${SMOKE[@]}" --method NPO+KLR --device cuda --dtype bfloat16 --max-steps 20
run tiny-sago-accelerate $PY -m accelerate.commands.launch --config_file notebooks/profiles/paper/accelerate-1gpu.yaml \
  -m unlearning.cli unlearn "${SMOKE[@]}" --method SimNPO+GD --rule sago --max-steps 20
run real135-full-fp32    $PY -m unlearning.cli unlearn "${REAL[@]}" --method NPO+KLR --max-steps 20 --batch-size 4
run real135-full-bf16    $PY -m unlearning.cli unlearn "${REAL[@]}" --method NPO+KLR --max-steps 20 --batch-size 4 --dtype bfloat16
run real135-lora-bf16    $PY -m unlearning.cli unlearn "${REAL[@]}" --method MASC --max-steps 20 --batch-size 4 --dtype bfloat16 --lora-rank 16
run real135-sago-bf16    $PY -m unlearning.cli unlearn "${REAL[@]}" --method SimNPO+GD --rule sago --max-steps 20 --batch-size 4 --dtype bfloat16

log "evaluation on the GPU (tofu-smoke, bf16)"
MODEL=$(ls -d $STORE/tiny-masc-bf16-lora/*/model | head -1)
$PY -m unlearning.cli evaluate --benchmark tofu-smoke --model "$MODEL" --tokenizer models/smoke/tokenizer --device cuda \
  --dtype bfloat16 > "$OUT/evaluate.log" 2>&1; echo "evaluate rc=$?" | tee -a "$OUT/summary.txt"; head -5 "$OUT/evaluate.log"

log "records"
$PY - "$STORE" "$OUT" <<'PY'
import json, sys
from pathlib import Path
store, out = Path(sys.argv[1]), Path(sys.argv[2])
rows = []
for record in sorted(store.glob("*/*/record.json")):
    r = json.loads(record.read_text())
    rows.append({"name": record.parent.parent.name, "method": r["method"], "rule": r["rule"], "lora": r["lora"],
                 "runtime": r["runtime"], "steps": r["steps"], "stopped": r["stopped"],
                 "seconds_per_step": (r["train_seconds"] + r["probe_seconds"]) / r["steps"],
                 "peak_gpu_mb": r.get("peak_gpu_mb"), "peak_rss_mb": r.get("peak_rss_mb"),
                 "forget_probability": r["forget_probability"], "retain_probability": r["retain_probability"]})
(out / "gpu_check.json").write_text(json.dumps(rows, indent=1))
for row in rows:
    print(row)
PY
