"""A fix ends the respawn it is named for (issue 19), for every strategy in the fixer registry:

* clean re-check: every fixture a strategy fixes (``fixtures/rules/<CODE>/fix_*before.py``,
  ``fixtures/fix/*.in.py``) is fixed through the real ``lintloader fix``, then
  ``lintloader check --min-severity info`` finds nothing on it but the codes the strategy
  documents as out of scope (``FixStrategy.leaves``, described in docs/fixes.md);
* runtime proof: the fixed fixture (the copy the clean re-check's one ``fix`` run left) runs 2
  epochs (the fewest that show a pool kept from one epoch to the next) with real DataLoader
  worker processes and the pool starts once (LL1xx fixes through
  ``lintloader verify --dataloader``, which also checks that every epoch sees every sample, each
  run forked from one process, tests/forked_cli.py;
  LL2xx fixes through tests/pool_harness.py, which logs the PID of every worker that loads a
  sample); the unfixed fixture is the control.

A strategy added to ``lintloader/fixers/strategies/`` without a fixture it fixes, a runtime case
here, or a section in docs/fixes.md fails these tests.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from harness import run_cli, run_cli_forked, run_python

from lintloader.fixers.registry import all_strategies
from lintloader.rules.ll202_dataloader_in_loop import DEPENDENT_NOTE
from lintloader.summary.older import old_names, placeholders_for, renamed

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
HARNESS = Path(__file__).resolve().parent / "pool_harness.py"
DOCS = REPO / "docs" / "fixes.md"
STRATEGIES = {s.name: s for s in all_strategies()}
FIX_INPUTS = sorted(FIXTURES.glob("rules/*/fix_*before.py")) + sorted(FIXTURES.glob("fix/*.in.py"))
# a fix that edits two files: fixtures/fix/<name>/mod.in.py and the modules beside it (X.in.py)
FIX_INPUTS += sorted(FIXTURES.glob("fix/*/mod.in.py"))
REPORTED = re.compile(r": (?P<code>LL\d{3}) (?P<status>fixed|changed) by (?P<names>[\w, -]+) \(")


def beside(source: Path, folder: Path) -> None:
    """The modules of a two-file fixture beside its ``mod.in.py`` (``loaders.in.py``), copied
    into ``folder`` under their names (``loaders.py``)."""
    if source.name == "mod.in.py":
        for other in source.parent.glob("*.in.py"):
            if other != source:
                shutil.copy(other, folder / other.name.replace(".in.py", ".py"))


def lintloader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, timeout=180)


FIX_ARGS = ("fix", "--no-cache", "--unsafe-fixes", "--min-severity", "info")


@dataclass
class Fixed:
    source: Path
    folder: Path
    stderr: str
    reported: list[tuple[str, str, str]] = field(default_factory=list)  # code, status, strategy
    findings: list[dict] = field(default_factory=list)  # check --min-severity info afterwards

    @property
    def strategies(self) -> set[str]:
        return {strategy for _, _, strategy in self.reported}


def reported(stderr: str, display: str) -> list[tuple[str, str, str]]:
    """What ``fix`` said it did to the file shown as ``display``."""
    found = []
    for line in stderr.splitlines():
        match = REPORTED.search(line)
        if match and line.startswith(f"{display}:"):
            found += [(match["code"], match["status"], s) for s in match["names"].split(", ")]
    return found


@pytest.fixture(scope="module")
def fixed_inputs(tmp_path_factory: pytest.TempPathFactory) -> list[Fixed]:
    """Every fixture fixed in one ``fix`` run (each in its own folder), then checked at info
    in one ``check`` run."""
    root = tmp_path_factory.mktemp("fixed")
    names = [f"c{number}" for number in range(len(FIX_INPUTS))]
    for name, source in zip(names, FIX_INPUTS, strict=True):
        (root / name).mkdir()
        shutil.copy(source, root / name / "mod.py")
        beside(source, root / name)
    done = lintloader(*FIX_ARGS, *names, cwd=root)
    assert done.returncode in (0, 1), done.stderr
    check = lintloader(
        "check", "--no-cache", "--min-severity", "info", "--output-format", "json", *names,
        cwd=root,
    )  # fmt: skip
    assert check.returncode in (0, 1), check.stderr
    findings = json.loads(check.stdout)
    assert {f["path"] for f in findings} <= {f"{name}/mod.py" for name in names}
    results = []
    for name, source in zip(names, FIX_INPUTS, strict=True):
        display = f"{name}/mod.py"
        fixed = Fixed(source, root / name, done.stderr, reported(done.stderr, display))
        fixed.findings = [f for f in findings if f["path"] == display]
        results.append(fixed)
    return results


def label(source: Path) -> str:
    return str(source.relative_to(FIXTURES))


# -- clean re-check ----------------------------------------------------------------------------
@pytest.mark.enumerates_rules
@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_fix_leaves_only_documented_findings(name: str, fixed_inputs: list[Fixed]) -> None:
    cases = [f for f in fixed_inputs if name in f.strategies]
    assert cases, f"no fixture in fixtures/rules/*/fix_before.py or fixtures/fix/ uses {name}"
    for case in cases:
        where = label(case.source)
        assert all(status == "fixed" for _, status, _ in case.reported), (where, case.stderr)
        allowed = {code for s in case.strategies for code in STRATEGIES[s].leaves}
        # a loader per item over other data at another caller: reported, not held against a fix
        findings = [f for f in case.findings if not f["message"].endswith(DEPENDENT_NOTE)]
        left = [f"{f['code']} {f['line']}: {f['message']}" for f in findings]
        assert {f["severity"] for f in case.findings if f["code"] in allowed} <= {"info"}, where
        assert {f["severity"] for f in case.findings} <= {"info"}, where
        assert [x for x in left if x.split()[0] not in allowed] == [], where


@pytest.mark.enumerates_rules
def test_the_documented_leftovers_are_info() -> None:
    """What a fix may leave is an inventory, never a finding above info."""
    from lintloader.rules.registry import rules_by_code

    rules = rules_by_code()
    for strategy in STRATEGIES.values():
        for code in strategy.leaves:  # an info rule, or one whose info findings start no pool
            rule = rules[code]
            assert rule.severity.label == "info" or (
                rule.rebuilds_from is not None and rule.rebuilds_from.label != "info"
            ), (strategy.name, code)


@pytest.mark.enumerates_rules
def test_every_rule_says_whether_its_findings_mean_a_rebuilt_pool() -> None:
    """The re-check after a fix reads this to decide "fixed": the rule module says it
    (``Rule.rebuilds_from``), so a new rule needs no list edited elsewhere."""
    from lintloader.finding.findings import Severity
    from lintloader.rules.registry import rules_by_code

    rules = rules_by_code()
    assert rules["LL203"].rebuilds_from is Severity.WARNING  # info: a persistent loader's pool
    assert rules["LL202"].rebuilds_from is Severity.INFO and rules["LL101"].rebuilds_from
    assert rules["LL103"].rebuilds_from is None  # an inventory of resets nothing reaches
    assert rules["LL201"].rebuilds_from is None  # a ValueError at construction, not a respawn
    assert all(r.rebuilds_from in (None, *Severity) for r in rules.values())


def test_docs_say_what_each_strategy_guarantees() -> None:
    text = DOCS.read_text()
    sections = dict(re.findall(r"^## `([\w-]+)`\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    assert set(sections) == set(STRATEGIES), "docs/fixes.md: one `## `name`` section each"
    for name, body in sections.items():
        assert "**Guarantees**" in body and "**Out of scope**" in body, name
        for code in STRATEGIES[name].leaves:
            assert code in body, f"{name} leaves {code}; docs/fixes.md must say so"


def test_summary_never_says_fixed_while_the_loader_still_respawns(tmp_path: Path) -> None:
    """A hoist that works for LL202 while Lightning still reloads the (now persistent) loader
    every epoch (LL205, info): the edit is made, but it is not called fixed."""
    source = (
        "from lightning.pytorch import Trainer\n"
        "from torch.utils.data import DataLoader\n\n\n"
        "def train(dataset, epochs):\n"
        "    trainer = Trainer(reload_dataloaders_every_n_epochs=1)\n"
        "    for epoch in range(epochs):\n"
        "        loader = DataLoader(dataset, num_workers=2)\n"
        "        for batch in loader:\n"
        "            pass\n"
        "    return trainer\n"
    )
    (tmp_path / "mod.py").write_text(source)
    # a non-persistent loader rebuilt per epoch is info (avoidable, lintloader/domain/cost.py)
    info = ("--min-severity", "info")
    done = lintloader("fix", "--no-cache", "--unsafe-fixes", *info, "mod.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "LL202 changed by hoist-loader-call (mod.py) but not fixed: LL205 [info]" in done.stderr
    assert "fixed by" not in done.stderr
    assert "Fixed 0 findings in 1 file; 1 changed but not fixed" in done.stderr
    assert "persistent_workers=True" in (tmp_path / "mod.py").read_text()


def test_a_build_over_other_data_left_at_two_places_is_held(tmp_path: Path) -> None:
    """fixtures/fix/pass_loader_in_other_data.in.py is fixed although `resample` still builds
    a loader per draw (its finding says its arguments change with the loop). With a second
    such caller, the finding left lists it as also reaching the loader, and a place listed so
    says nothing of its own data: the fix is not called fixed."""
    source = (FIXTURES / "fix" / "pass_loader_in_other_data.in.py").read_text()
    more = (
        "def resample_more(dataset, seeds, batch_size=4):\n"
        "    seen = 0\n"
        "    for seed in seeds:\n"
        "        picks = random.Random(seed + 1).sample(range(len(dataset)), 2)\n"
        "        seen += score(Subset(dataset, picks), batch_size)\n"
        "    return seen\n\n\n"
    )
    (tmp_path / "mod.py").write_text(source.replace("def train(", more + "def train(", 1))
    info = ("--min-severity", "info")
    done = lintloader("fix", "--no-cache", *info, "mod.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "LL202 changed by pass-loader-in (mod.py) but not fixed: LL202 [info]" in done.stderr
    assert "Fixed 0 findings in 1 file; 1 changed but not fixed" in done.stderr


OTHER_CALLER = (
    "from torch.utils.data import DataLoader\n\n\n"
    "def redrawn(data):\n"
    "    return list(data)[::2]\n\n\n"
    "def score(data, batch_size):\n"
    "    loader = DataLoader(data, batch_size=batch_size, num_workers=2)\n"
    "    return sum(len(batch) for batch in loader)\n\n\n"
    "def per_task(tasks, steps, batch_size=4):\n"
    "    seen = 0\n"
    "    for step in range(steps):\n"
    "        if step % 10 == 0:\n"
    "{draw}"
    "            for name in tasks:\n"
    "                seen += score(tasks[name], batch_size)\n"
    "    return seen\n\n\n"
    "def train(dataset, epochs, batch_size=4):\n"
    "    seen = 0\n"
    "    for epoch in range(epochs):\n"
    "        seen += score(dataset, batch_size)\n"
    "    return seen\n"
)


@pytest.mark.parametrize(
    ("draw", "verdict"),
    [
        ("", "LL202 changed by pass-loader-in (mod.py) but not fixed: LL202 [info] at mod.py:"),
        ("            tasks = {n: redrawn(d) for n, d in tasks.items()}\n", "LL202 fixed by"),
    ],
    ids=["same-items-every-10-steps", "items-drawn-anew"],
)
def test_a_build_over_other_data_that_comes_around_is_held(
    draw: str, verdict: str, tmp_path: Path
) -> None:
    """`per_task` builds one loader per task every 10 steps: over the same tasks, each comes
    around again (a rebuild the fix in `train` did not end: held); over tasks it draws anew
    before the loop, each is another loader's data (not held)."""
    (tmp_path / "mod.py").write_text(OTHER_CALLER.replace("{draw}", draw))
    done = lintloader("fix", "--no-cache", "--min-severity", "info", "mod.py", cwd=tmp_path)
    assert f": {verdict}" in done.stderr, done.stderr
    assert "loader=loader" in (tmp_path / "mod.py").read_text()  # the edit is made either way


def test_a_build_over_other_data_in_an_epoch_hook_is_held(tmp_path: Path) -> None:
    """The other caller's loop over the tasks is in a per-epoch hook: it comes around every
    epoch over the same tasks, so the fix in `train` is not called fixed."""
    hook = (
        "class Tasks:\n"
        "    def __init__(self, tasks):\n"
        "        self.tasks = tasks\n\n"
        "    def on_train_epoch_start(self):\n"
        "        for name in self.tasks:\n"
        "            score(self.tasks[name], 4)\n\n\n"
    )
    start, end = OTHER_CALLER.index("def per_task("), OTHER_CALLER.index("def train(")
    (tmp_path / "mod.py").write_text(OTHER_CALLER[:start] + hook + OTHER_CALLER[end:])
    done = lintloader("fix", "--no-cache", "--min-severity", "info", "mod.py", cwd=tmp_path)
    assert ": LL202 changed by pass-loader-in (mod.py) but not fixed: LL202 [info]" in (
        done.stderr
    ), done.stderr


def test_hoist_refuses_when_it_cannot_make_the_loader_persistent(tmp_path: Path) -> None:
    source = (
        "from torch.utils.data import DataLoader\n\n\n"
        "def train(dataset, epochs, options):\n"
        "    for epoch in range(epochs):\n"
        "        loader = DataLoader(dataset, num_workers=2, **options)\n"
        "        for batch in loader:\n"
        "            pass\n"
    )
    (tmp_path / "mod.py").write_text(source)
    done = lintloader("fix", "--no-cache", "--unsafe-fixes", "mod.py", cwd=tmp_path)
    assert done.returncode == 1
    assert "hoist-dataloader not applied: the loop iterates the hoisted loader again" in done.stderr
    assert "`**kwargs`" in done.stderr
    assert (tmp_path / "mod.py").read_text() == source


def test_reuse_iterator_refuses_a_loader_it_cannot_see(tmp_path: Path) -> None:
    source = (
        "from torch.utils.data import DataLoader\n\n\n"
        "def steps(loader: DataLoader, n):\n"
        "    for _ in range(n):\n"
        "        inputs, targets = next(iter(loader))\n"
    )
    (tmp_path / "mod.py").write_text(source)
    done = lintloader("fix", "--no-cache", "--unsafe-fixes", "mod.py", cwd=tmp_path)
    assert done.returncode == 1
    assert "reuse-iterator not applied: the DataLoader is built where the analysis" in done.stderr
    assert (tmp_path / "mod.py").read_text() == source


def test_two_fixes_in_one_file_each_read_the_positions_they_were_found_at(tmp_path: Path) -> None:
    """The first fix adds lines above the second finding; the second is applied in the next
    round, from that round's positions, instead of being refused as 'no call there'."""
    body = (
        "    loader = DataLoader(data, batch_size=4, num_workers=2)\n"
        "    for step in range(steps):\n"
        "        inputs, targets = next(iter(loader))\n"
    )
    source = "from torch.utils.data import DataLoader\n"
    for name in ("first", "second"):
        source += f"\n\ndef {name}(data, steps):\n{body}"
    (tmp_path / "mod.py").write_text(source)
    # at info: once persistent (the safe fix), each loop's sample is an info finding
    done = lintloader(*FIX_ARGS, "mod.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "not applied" not in done.stderr
    assert done.stderr.count("LL203 fixed by persistent-sample-loader, reuse-iterator") == 2
    fixed = (tmp_path / "mod.py").read_text()
    assert fixed.count("persistent_workers=True") == 2
    assert fixed.count("except StopIteration:") == 2


# -- runtime proof -----------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Harness:
    """An LL2xx fixture run by tests/pool_harness.py: ``function(dataset, **kwargs)``."""

    fixture: str
    function: str
    kwargs: dict
    pairs: bool = False
    control: str = "respawns"  # what the unfixed fixture does: "respawns" or an exception name
    pids: int = 2  # worker processes a pool that starts once leaves
    pools: int = 1  # loaders the fixed code keeps (one per evaluation set), a pool each
    # written for Python 3.6 (`async` as a name): run as 3.6 reads it, each such name renamed
    older: bool = False
    loads: int | None = None  # samples the workers load in all, fixed and unfixed (None: any)


@dataclass(frozen=True)
class Verify:
    """An LL1xx fixture probed by ``lintloader verify --dataloader``: ``glue`` builds what the
    probe iterates once per epoch from the fixed module ``mod`` and a persistent ``loader``."""

    fixture: str
    glue: str
    control: bool = True  # the first case of a strategy also runs unfixed and must FAIL


RUNTIME: dict[str, list[Harness | Verify]] = {
    "persistent-workers-guard": [
        Harness("rules/LL201/fix_before.py", "train", {"workers": 2, "epochs": 2}, control="Value"),
        Harness("rules/LL201/fix_before.py", "train", {"workers": 0}, control="Value", pids=0),
        Harness("rules/LL201/fix_flow_before.py", "train", {"workers": 0}, control="Value", pids=0),
    ],
    "hoist-dataloader": [Harness("fix/hoist_dataloader_state.in.py", "train", {"epochs": 2})],
    "hoist-loader-call": [
        Harness("rules/LL202/fix_before.py", "train", {"epochs": 2}),
        Harness("fix/hoist_call_helper.in.py", "train", {"epochs": 2}),
        Harness("fix/hoist_call_method.in.py", "train", {"epochs": 2}),
        Harness("fix/hoist_call_unbound.in.py", "train", {"epochs": 2}),
        Harness("fix/hoist_call_other_data.in.py", "train", {"epochs": 2}),
        # the other caller, a loader per size kept for the epochs at it: 4 pools before, 2 after
        Harness("fix/hoist_call_other_data.in.py", "grow", {"epochs": 2}, pools=2),
        # a test loader built under an `if` every other step: 4 pools in 2 epochs before, one after
        Harness("fix/hoist_periodic_if.in.py", "train", {"epochs": 2}),
    ],
    # a batch sampler built with the loader at each epoch, each epoch resuming at batch 0, 1
    # of 4: 2 pools before, one after, and 8 + 6 samples loaded both ways (each pass of the
    # kept loader reads the start the loop set on its batch sampler; 16 if it did not)
    "hoist-loader-sampler": [
        Harness("fix/hoist_loader_sampler.in.py", "train", {"epochs": 2}, loads=14)
    ],
    "keep-iter-loader": [Harness("fix/keep_iter_loader.in.py", "train", {"epochs": 2})],
    # an evaluation every other step: 4 pools in 2 epochs before, one after
    "keep-eval-loader": [Harness("fix/keep_eval_loader.in.py", "train", {"epochs": 2})],
    # validate() every other step, train_epoch() (a method) at every epoch, evaluate() through
    # a getter every other step, validate() called with a long argument list and a local the
    # caller uses too, evaluate() that sets its batch size first, evaluate() under a switch,
    # evaluate() in a loop that saves the vocabulary its set is encoded with:
    # 4, 2, 4, 2, 4, 4 and 4 pools in 2 epochs before, one after
    "pass-loader-in": [
        Harness("fix/pass_loader_in.in.py", "train", {"epochs": 2}),
        Harness("fix/pass_loader_in_method.in.py", "train", {"epochs": 2}),
        Harness("fix/pass_loader_in_getter.in.py", "train", {"epochs": 2}),
        Harness("fix/pass_loader_in_renamed.in.py", "train", {"epochs": 2}),
        Harness("fix/pass_loader_in_setting.in.py", "train", {"epochs": 2}),
        Harness("fix/pass_loader_in_switch.in.py", "train", {"epochs": 2}),
        Harness("fix/pass_loader_in_other_data.in.py", "train", {"epochs": 2}),
        # evaluate() every other step in a loop that saves the vocabulary it encodes with
        Harness("fix/pass_loader_in_read_only.in.py", "train", {"epochs": 2}),
        # a checkpoint an epoch evaluated, a loader built in one branch of an `if`: 2 pools, then 1
        Harness("fix/pass_loader_in_branches.in.py", "train", {"epochs": 2}),
    ],
    # one loader per evaluation set, over a dataset kept in a dict, over a module global:
    # 2, 2 and 4 pools in 2 epochs before, one after
    "cache-loader-per-dataset": [
        Harness("fix/cache_loader_per_set.in.py", "train", {"epochs": 2}),
        Harness("fix/cache_loader_given_dataset.in.py", "train", {"epochs": 2}),
        Harness("fix/cache_loader_global_dataset.in.py", "train", {"epochs": 2}),
    ],
    # two evaluation sets, two evaluations: two pools, one per set
    "keep-builder-loader": [
        Harness("fix/keep_builder_loader/mod.in.py", "train", {"epochs": 2}, pools=2),
    ],
    # a builder asked once per evaluation through two files: one pool for 2 evaluations
    "keep-builder-result": [
        Harness("fix/keep_builder_result/mod.in.py", "train", {"epochs": 2}),
    ],
    "move-reset-after-loop": [Harness("rules/LL105/fix_before.py", "train", {"epochs": 2})],
    # 4 steps over 2 batches a pass: 2 passes, the iterator re-created after the first
    "reuse-iterator": [Harness("rules/LL203/fix_before.py", "train", {"steps": 4}, pairs=True)],
    "add-persistent-workers": [Harness("rules/LL204/fix_before.py", "train", {"epochs": 2})],
    "persistent-workers-stateless": [
        Harness("rules/LL204/fix_stateless_before.py", "train", {"epochs": 2})
    ],
    "relocate": [
        Verify("rules/LL101/fix_before.py", "mod.Fetcher(loader)"),
        Verify("rules/LL102/fix_before.py", "EpochHook(mod.RestartCallback(loader), loader)"),
        Verify("fix/relocate_close.in.py", "Started(mod.Fetcher(loader))"),
        # fix/relocate_fetcher.in.py: fixed and iterated with real workers in test_fix_verify.py
        Verify("fix/relocate_new_teardown.in.py", "set_up(mod.Feeder(), loader)"),
    ],
    # a sample batch every other step, in the loop or through a helper: 4 pools before, one after
    "persistent-sample-loader": [
        Harness("rules/LL203/fix_sample_before.py", "train", {"epochs": 2}),
        Harness("rules/LL203/fix_sample_before.py", "train_with_helper", {"epochs": 2}),
        # a search batch every step, in a file written for Python 3.6: 4 pools before, one after
        Harness("fix/older_sample_loader.in.py", "train", {"epochs": 2}, older=True),
    ],
    "remove-call": [Verify("fix/remove_call.in.py", "mod.Fetcher(loader)")],
    "remove-reset-call": [Verify("rules/LL101/fix_reset_only_before.py", "mod.Fetcher(loader)")],
    # no control: unfixed, its `del loader._iterator` makes a real DataLoader's next iter()
    # raise AttributeError, so there is no respawn to watch
    "remove-sink": [Verify("fix/remove_sink.in.py", "mod.Fetcher(loader)", control=False)],
}

FACTORY = """
from torch.utils.data import DataLoader

import mod
from lintloader.runtime.verify.dataset import ProbeDataset


class EpochHook:
    '''Calls a callback's per-epoch hook, then runs the epoch (as a Trainer would).'''

    def __init__(self, callback, loader):
        self.callback = callback
        self.loader = loader

    def __iter__(self):
        self.callback.on_train_epoch_start(None, None)
        return iter(self.loader)


class Started:
    '''A fetcher whose __iter__ prepares ``it`` (the loader's iterator) and returns itself.'''

    def __init__(self, fetcher):
        self.fetcher = fetcher

    def __iter__(self):
        self.fetcher.__iter__()  # returns the fetcher, which is no iterator itself
        return self.fetcher.it


def set_up(feeder, loader):
    feeder.setup(loader)
    return feeder


def make():
    loader = DataLoader(ProbeDataset(8), batch_size=2, num_workers=2, persistent_workers=True)
    return {glue}
"""


def test_every_strategy_has_a_runtime_proof() -> None:
    assert set(RUNTIME) == set(STRATEGIES)


def prepared(case: Harness | Verify, folder: Path, fixed: list[Fixed] | None) -> Path:
    """``folder/mod.py``: the case's fixture as :func:`fixed_inputs`'s ``fix`` run left it
    (``fixed``: that fixture's result), or unfixed (``None``)."""
    source = FIXTURES / case.fixture
    folder.mkdir(parents=True)
    if fixed is None:
        shutil.copy(source, folder / "mod.py")
        beside(source, folder)
        return folder / "mod.py"
    (done,) = [f for f in fixed if f.source == source]
    assert done.reported and all(s == "fixed" for _, s, _ in done.reported), done.stderr
    for module in done.folder.glob("*.py"):
        shutil.copy(module, folder / module.name)
    return folder / "mod.py"


def harness(cases: list[tuple[Path, Harness]], log_dir: Path) -> list[dict]:
    spec = [
        {"path": str(path), "function": c.function, "kwargs": c.kwargs, "pairs": c.pairs}
        for path, c in cases
    ]
    done = run_python(str(HARNESS), str(log_dir), json.dumps(spec), timeout=300)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


VERIFY_ARGS = ("verify", "--dataloader", "probe_factory.py:make", "--epochs", "2")
VERIFY_ARGS += ("--worker-init-delay", "0", "--json")
VERIFY_MODULES = ("torch.utils.data", "lintloader.cli.group", "lintloader.cli.verify")


def as_python36_reads_it(path: Path) -> None:
    """Rename each ``async``/``await`` that Python 3.6 reads as a name to a placeholder of the
    same length, so this interpreter runs the file as Python 3.6 would."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    names = list(old_names(lines))
    assert names, path
    path.write_text(renamed(lines, names, placeholders_for(text)))


@pytest.fixture(scope="module")
def harness_runs(
    tmp_path_factory: pytest.TempPathFactory, fixed_inputs: list[Fixed]
) -> dict[Harness, tuple[dict, dict]]:
    """Every harness case, fixed (by :func:`fixed_inputs`'s one ``fix`` run) and unfixed, run
    in one harness process (one torch import): case -> (result after the fix, result before
    it)."""
    pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")
    root = tmp_path_factory.mktemp("harness")
    runs = [c for cases in RUNTIME.values() for c in cases if isinstance(c, Harness)]
    after = [prepared(c, root / f"fixed{i}", fixed_inputs) for i, c in enumerate(runs)]
    before = [prepared(c, root / f"before{i}", None) for i, c in enumerate(runs)]
    (root / "logs").mkdir()
    pairs = [*zip(after, runs, strict=True), *zip(before, runs, strict=True)]
    for path, case in pairs:
        if case.older:
            as_python36_reads_it(path)
    results = harness(pairs, root / "logs")
    outcomes = zip(results[: len(runs)], results[len(runs) :], strict=True)
    return dict(zip(runs, outcomes, strict=True))


@pytest.fixture(scope="module")
def verify_runs(
    tmp_path_factory: pytest.TempPathFactory, fixed_inputs: list[Fixed]
) -> dict[tuple[Verify, bool], tuple[int, dict]]:
    """Every verify case fixed, and unfixed the first of each strategy that has a control,
    each probed by ``lintloader verify --dataloader`` in a child of one process
    (harness.run_cli_forked: one torch import): (case, fixed) -> (exit status, its JSON)."""
    pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")
    root = tmp_path_factory.mktemp("verify")
    wanted: list[tuple[Verify, bool]] = []
    for cases in RUNTIME.values():
        probed = [c for c in cases if isinstance(c, Verify)]
        wanted += [(case, True) for case in probed]
        wanted += [(probed[0], False)] if probed and probed[0].control else []
    folders = []
    for number, (case, fix) in enumerate(wanted):
        folder = root / f"case{number}"
        prepared(case, folder, fixed_inputs if fix else None)
        (folder / "probe_factory.py").write_text(FACTORY.replace("{glue}", case.glue))
        folders.append(str(folder))
    done = run_cli_forked([(VERIFY_ARGS, folder) for folder in folders], VERIFY_MODULES)
    assert all(d.stdout for d in done), [d.stderr for d in done]
    outcomes = [(d.returncode, json.loads(d.stdout)) for d in done]
    return dict(zip(wanted, outcomes, strict=True))


@pytest.mark.parametrize("name", sorted(RUNTIME))
def test_fixed_fixture_starts_one_pool(name: str, request) -> None:
    pytest.importorskip("torch", reason="torch is not installed (the runtime extra)")
    cases = RUNTIME[name]
    for case in (c for c in cases if isinstance(c, Harness)):
        after, before = request.getfixturevalue("harness_runs")[case]
        assert after["error"] is None, (case, after)
        # one pool (per kept loader), for all epochs
        assert len(after["pids"]) == case.pids * case.pools, (case, after)
        assert after["worker_ids"] == list(range(case.pids)), (case, after)
        if case.loads is not None:  # what each pass read, the same fixed and unfixed
            assert after["loads"] == before["loads"] == case.loads, (case, after, before)
        if case.control == "respawns":
            assert before["error"] is None and len(before["pids"]) > case.pids * case.pools, before
        else:
            assert (before["error"] or "").startswith(case.control), before
    for number, case in enumerate(c for c in cases if isinstance(c, Verify)):
        code, result = request.getfixturevalue("verify_runs")[case, True]
        assert (code, result["verdict"]) == (0, "PASS"), result
        (loader,) = result["loaders"]
        epochs = loader["epochs"]
        assert len(epochs) == 2
        assert sum(e["workers_started"] for e in epochs) == 2  # the pool started once
        for epoch in epochs:  # and every epoch saw every sample
            assert epoch["unique_samples"] == epoch["expected_samples"] == 8, epoch
        if number == 0 and case.control:  # unfixed, it respawns under the same probe
            code, result = request.getfixturevalue("verify_runs")[case, False]
            assert (code, result["verdict"]) == (1, "FAIL"), result
