"""Run functions of fixture scripts with real DataLoader workers; report which worker processes
loaded samples. Used by tests/test_fix_proof.py as a subprocess (not a test module itself).

    python tests/pool_harness.py LOG_DIR CASES_JSON

CASES_JSON is a list of ``{"path", "function", "kwargs", "pairs"}`` (the modules beside
``path`` are importable while its case runs): the function is called as
``function(dataset, **kwargs)`` with a dataset of 8 items (``(i, i)`` pairs when ``pairs``)
whose ``__getitem__`` appends ``<pid> <worker id> <index>`` to a log file when it runs in a
worker process (``torch.utils.data.get_worker_info()``). One JSON line per case comes out:
``{"pids": [...], "worker_ids": [...], "loads": n, "error": "..." | null}``. A pool of two
workers that starts once leaves exactly two PIDs, however many epochs run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from torch.utils.data import Dataset, get_worker_info

SIZE = 8


class PidDataset(Dataset):
    def __init__(self, log: str, pairs: bool) -> None:
        self.log = log
        self.pairs = pairs

    def __len__(self) -> int:
        return SIZE

    def __getitem__(self, index: int):
        info = get_worker_info()
        if info is not None:
            with open(self.log, "a") as handle:
                handle.write(f"{os.getpid()} {info.id} {index}\n")
        return (index, index) if self.pairs else index


def run_case(number: int, case: dict, log_dir: Path) -> dict:
    log = log_dir / f"case{number}.log"
    log.write_text("")
    spec = importlib.util.spec_from_file_location(f"fixture_{number}", case["path"])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    error = None
    folder = str(Path(case["path"]).parent)
    sys.path.insert(0, folder)  # a fixture of two files imports the other (`from loaders import`)
    try:
        spec.loader.exec_module(module)
        getattr(module, case["function"])(PidDataset(str(log), case["pairs"]), **case["kwargs"])
    except Exception as exc:  # reported: a control case expects the unfixed code to raise
        error = f"{type(exc).__name__}: {exc}"
    finally:
        sys.path.remove(folder)
        _forget_modules_of(folder)
    rows = [line.split() for line in log.read_text().splitlines()]
    return {
        "pids": sorted({int(pid) for pid, _, _ in rows}),
        "worker_ids": sorted({int(worker) for _, worker, _ in rows}),
        "loads": len(rows),
        "error": error,
    }


def _forget_modules_of(folder: str) -> None:
    """Drop the modules imported from ``folder``: the next case's folder has its own of the
    same name (the fixed and the unfixed copy of a fixture)."""
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) or ""
        if os.path.dirname(os.path.abspath(where)) == os.path.abspath(folder):
            del sys.modules[name]


def main() -> None:
    log_dir = Path(sys.argv[1])
    for number, case in enumerate(json.loads(sys.argv[2])):
        print(json.dumps(run_case(number, case, log_dir)), flush=True)


if __name__ == "__main__":
    main()
