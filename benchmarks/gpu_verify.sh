#!/usr/bin/env bash
# GPU run of `lintloader verify` and `lintloader trace` (not CI), under 5 minutes end to end.
# Run it from a checkout on a machine with a CUDA GPU and the runtime extra already installed:
# it installs nothing and needs no network. With real worker processes and the model and
# batches on the GPU (pin_memory=True), it checks:
#   verify  lightning  the installed Lightning reuses train and val workers     PASS
#   verify  torch      the plain PyTorch loop (baseline) reuses them            PASS
#   verify  buggy      the Lightning-1.5.0-shaped fetcher respawns every epoch  FAIL
#   verify  fixed      the 1.5.1-shaped fetcher keeps its workers               PASS
#   trace   loop       a plain loop, persistent workers                         OK
#   trace   rebuild    a loader rebuilt every epoch                             FAIL
#   trace   buggy      a loop over the 1.5.0-shaped fetcher                      FAIL
#   trace   fixed      a loop over the 1.5.1-shaped fetcher                      OK
# and writes ONE JSON summary ($OUT/summary.json, also printed): GPU name, torch and CUDA
# versions, per check the expected and actual verdict, worker pools started and the stall per
# epoch (first batch minus the steady first batch). Exit 0 when every check is as expected,
# 1 when one is not, 2 when this torch has no CUDA (said in one line).
#
# Usage: benchmarks/gpu_verify.sh        PYTHON=...  (default .venv/bin/python, else python3)
#        DEVICE=cpu benchmarks/gpu_verify.sh   (the same checks on the CPU: tries the script)
#        ONLY="verify-torch trace-rebuild" benchmarks/gpu_verify.sh   (those checks alone)
set -uo pipefail

cd "$(dirname "$0")/.."
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
OUT=${OUT:-${TMPDIR:-/tmp}/lintloader-gpu-verify}
DELAY=${DELAY:-0.5}
DEVICE=${DEVICE:-cuda}
BUDGET_S=${BUDGET_S:-280}  # the whole script stays under 5 minutes
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.stderr "$OUT"/*.stdout "$OUT"/checks.tsv
started=$SECONDS

if ! "$PYTHON" - "$DEVICE" >"$OUT/env.json" <<'PY'; then
import json, sys
try:
    import torch
except ImportError:
    print(f"gpu_verify: {sys.executable} has no torch (install the runtime extra first)",
          file=sys.stderr)
    sys.exit(2)
cuda = torch.cuda.is_available()
if sys.argv[1] != "cpu" and not cuda:
    print(f"gpu_verify: the torch {torch.__version__} of {sys.executable} has no CUDA "
          f"(CUDA build: {torch.version.cuda or 'none'}): nothing to check on a GPU",
          file=sys.stderr)
    sys.exit(2)
print(json.dumps({
    "gpu": torch.cuda.get_device_name(0) if cuda else None,
    "torch": torch.__version__,
    "cuda": torch.version.cuda,
    "python": sys.version.split()[0],
}))
PY
    exit 2
fi

check() {  # check KIND NAME EXPECTED COMMAND...: run it within what is left of the budget
    local kind=$1 name=$2 expected=$3 left code=0 begin=$SECONDS
    shift 3
    known+=("$kind-$name")
    if [[ -n "${ONLY:-}" && " $ONLY " != *" $kind-$name "* ]]; then return; fi
    left=$((BUDGET_S - (SECONDS - started)))
    if ((left < 10)); then
        printf '%s\t%s\t%s\t%s\t%s\n' "$kind" "$name" "$expected" "skipped" 0 >>"$OUT/checks.tsv"
        return
    fi
    timeout --kill-after=5 "$((left < 120 ? left : 120))" "$@" \
        >"$OUT/$kind-$name.stdout" 2>"$OUT/$kind-$name.stderr" || code=$?
    printf '%s\t%s\t%s\t%s\t%s\n' "$kind" "$name" "$expected" "$code" "$((SECONDS - begin))" \
        >>"$OUT/checks.tsv"
}

verify() {  # verify NAME EXPECTED ARGS...
    local name=$1 expected=$2
    shift 2
    check verify "$name" "$expected" "$PYTHON" -m lintloader verify --device "$DEVICE" --json \
        --worker-init-delay "$DELAY" "$@"
}

trace() {  # trace NAME EXPECTED SCRIPT ARGS...
    local name=$1 expected=$2
    shift 2
    check trace "$name" "$expected" "$PYTHON" -m lintloader trace --json "$OUT/trace-$name.json" \
        -- "$PYTHON" "$@"
}

FETCH=fixtures/runtime/trace/fetcher_loop.py
known=()
verify lightning PASS --val
verify torch PASS --engine torch --val
verify buggy FAIL --dataloader fixtures/runtime/buggy_fetcher.py:make_loader
verify fixed PASS --dataloader fixtures/runtime/fixed_fetcher.py:make_loader
trace loop OK fixtures/runtime/trace/rebuild_loop.py --fixed --device "$DEVICE"
trace rebuild FAIL fixtures/runtime/trace/rebuild_loop.py --device "$DEVICE" --init-sleep "$DELAY"
trace buggy FAIL "$FETCH" fixtures/runtime/buggy_fetcher.py
trace fixed OK "$FETCH" fixtures/runtime/fixed_fetcher.py
for wanted in ${ONLY:-}; do
    if [[ " ${known[*]} " != *" $wanted "* ]]; then
        echo "gpu_verify: ONLY names no check: $wanted (the checks: ${known[*]})" >&2
        exit 2
    fi
done

"$PYTHON" - "$OUT" "$DEVICE" "$((SECONDS - started))" <<'PY'
import json, sys
from pathlib import Path

out, device, wall = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])


def verify_result(name):
    try:
        data = json.loads((out / f"verify-{name}.stdout").read_text())
    except (OSError, ValueError):
        return {}
    loaders = data.get("loaders") or []
    return {
        "actual": data.get("verdict"),
        "device": (data.get("device") or {}).get("label"),
        "pools": sum(loader.get("pools_started", 0) for loader in loaders),
        "stall_s": {l["name"]: [e.get("stall_s") for e in l["epochs"]] for l in loaders},
        "median_stall_s": {l["name"]: l.get("median_stall_s") for l in loaders},
    }


def trace_result(name):
    try:
        data = json.loads((out / f"trace-{name}.json").read_text())
    except (OSError, ValueError):
        return {}
    sites, stalls = data.get("sites") or [], {}
    for site in sites:
        where = site.get("created_at") or {}
        key = f"{Path(str(where.get('path'))).name}:{where.get('line')}"
        steady = site.get("steady_first_batch_s") or 0.0
        stalls[key] = [
            None if p["first_batch_s"] is None else round(max(0.0, p["first_batch_s"] - steady), 6)
            for p in site.get("pass_latencies") or ()
        ]
    devices = {l["device"] for p in data.get("processes") or () for l in p["loaders"]}
    return {
        "actual": data.get("verdict"),
        "device": sorted(devices),
        "pools": sum(site.get("worker_pools", 0) for site in sites),
        "needed_pools": sum(site.get("needed_pools", 0) for site in sites),
        "lost_s": data.get("lost_s"),
        "stall_s": stalls,
    }


checks, ok = [], True
for line in (out / "checks.tsv").read_text().splitlines():
    kind, name, expected, code, seconds = line.split("\t")
    found = (verify_result if kind == "verify" else trace_result)(name)
    entry = {"kind": kind, "name": name, "expected": expected, "exit": code,
             "seconds": int(seconds), **found}
    entry.setdefault("actual", "skipped" if code == "skipped" else f"no result (exit {code})")
    ok &= entry["actual"] == expected
    checks.append(entry)
summary = {**json.loads((out / "env.json").read_text()), "device": device, "wall_s": wall,
           "all_as_expected": ok, "checks": checks}
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
print(json.dumps(summary, indent=2))
sys.exit(0 if ok else 1)
PY
