#!/usr/bin/env bash
# GPU run of `lintloader verify` (not CI): run it on a machine with a CUDA GPU and the runtime
# extra installed (pip install -e ".[runtime]"). It checks, with real worker processes and the
# model and batches on the GPU (pin_memory=True for the probe's loaders), that
#   * the installed Lightning reuses train and val workers      -> PASS, exit 0
#   * the plain PyTorch loop (baseline) reuses them             -> PASS, exit 0
#   * the Lightning-1.5.0-shaped fetcher respawns every epoch   -> FAIL, exit 1
#   * the 1.5.1-shaped fetcher keeps its workers                -> PASS, exit 0
# and prints the GPU name and the first-batch latency ratio (buggy vs fixed) that it measured.
# Then `lintloader trace` watches real training scripts with the model and batches on the GPU:
#   * a plain loop, persistent workers, pin_memory=True          -> exit 0, device cuda:0 (...)
#   * the same loop with persistent_workers=False                -> exit 0, 3 respawns reported
#   * the Lightning-1.5.0-shaped fetcher                         -> exit 1, culprit and LL101 named
# Results (JSON per run) go to $OUT (default: $TMPDIR/lintloader-gpu-verify). Usage: benchmarks/gpu_verify.sh
# DEVICE=cpu runs the same checks on the CPU (to try the script itself on a machine without GPU).
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
OUT=${OUT:-${TMPDIR:-/tmp}/lintloader-gpu-verify}
DELAY=${DELAY:-1.0}
DEVICE=${DEVICE:-cuda}
mkdir -p "$OUT"

"$PYTHON" - "$DEVICE" <<'PY'
import sys
import torch
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}")
if sys.argv[1] != "cpu":
    assert torch.cuda.is_available(), "no CUDA device visible: this script is for a GPU machine"
    print(torch.cuda.get_device_name(0))
PY

failures=0
probe() {  # probe NAME EXPECTED_EXIT ARGS...
    local name=$1 expected=$2 code=0
    shift 2
    timeout 300 "$PYTHON" -m lintloader verify --device "$DEVICE" --json "$@" \
        >"$OUT/$name.json" 2>"$OUT/$name.stderr" || code=$?
    if [[ $code -eq $expected ]]; then
        echo "ok    $name: exit $code"
    else
        echo "WRONG $name: exit $code, expected $expected (see $OUT/$name.stderr)"
        failures=$((failures + 1))
    fi
}

probe lightning 0 --val --worker-init-delay "$DELAY"
probe torch 0 --engine torch --val --worker-init-delay "$DELAY"
probe buggy 1 --dataloader fixtures/runtime/buggy_fetcher.py:make_loader --worker-init-delay "$DELAY"
probe fixed 0 --dataloader fixtures/runtime/fixed_fetcher.py:make_loader --worker-init-delay "$DELAY"

traced() {  # traced NAME EXPECTED_EXIT COMMAND...
    local name=$1 expected=$2 code=0
    shift 2
    timeout 300 "$PYTHON" -m lintloader trace --json "$OUT/trace-$name.json" -- "$@" \
        >"$OUT/trace-$name.stdout" 2>"$OUT/trace-$name.stderr" || code=$?
    if [[ $code -eq $expected ]]; then
        echo "ok    trace-$name: exit $code"
    else
        echo "WRONG trace-$name: exit $code, expected $expected (see $OUT/trace-$name.stderr)"
        failures=$((failures + 1))
    fi
}

traced torch 0 "$PYTHON" fixtures/runtime/trace/torch_loop.py --device "$DEVICE"
traced respawn 0 "$PYTHON" fixtures/runtime/trace/torch_loop.py --device "$DEVICE" --no-persistent
traced buggy 1 "$PYTHON" fixtures/runtime/trace/fetcher_loop.py fixtures/runtime/buggy_fetcher.py

"$PYTHON" - "$OUT" "$DEVICE" <<'PY' || failures=$((failures + 1))
import json, sys
from pathlib import Path

wrong = 0
for name in ("torch", "respawn", "buggy"):
    path = Path(sys.argv[1]) / f"trace-{name}.json"
    if not path.exists() or not path.stat().st_size:
        print(f"trace-{name}: no report")
        continue
    report = json.loads(path.read_text())
    for process in report["processes"]:
        for loader in process["loaders"]:
            passes = loader["passes"]
            firsts = " ".join(f"{p['first_batch_s']:.3f}" for p in passes if p["first_batch_s"])
            print(
                f"trace-{name:8} device {loader['device']}, pin_memory {loader['pin_memory']}, "
                f"passes {len(passes)}, pool starts {len(loader['pool_starts'])}, respawns "
                f"{loader['respawn_count']}, cost {loader['cost_s']:.3f} s, first batches {firsts}"
            )
            on_gpu = sys.argv[2] != "cpu" and name != "buggy"  # the fetcher stays on the CPU
            if on_gpu and not loader["device"].startswith("cuda"):
                print(f"WRONG trace-{name}: the report shows no CUDA device")
                wrong += 1
sys.exit(1 if wrong else 0)
PY

"$PYTHON" - "$OUT" <<'PY'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])

def later_first_batch(name):
    epochs = json.loads((out / f"{name}.json").read_text())["loaders"][0]["epochs"][1:]
    values = [e["first_batch_s"] for e in epochs if e["first_batch_s"] is not None]
    return sum(values) / len(values)

for name in ("lightning", "torch", "buggy", "fixed"):
    path = out / f"{name}.json"
    data = json.loads(path.read_text()) if path.stat().st_size else {}
    print(f"{name:9} {data.get('verdict', '?'):5} device {data.get('device', {}).get('label', '?')}")
bug, fixed = later_first_batch("buggy"), later_first_batch("fixed")
print(f"first batch after epoch 1: buggy {bug:.3f} s, fixed {fixed:.3f} s, ratio {bug / fixed:.0f}x")
PY

exit $((failures > 0))
