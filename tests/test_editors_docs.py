"""docs/editors.md as a user follows it: the configuration blocks marked
``<!-- editor-config: NAME -->`` are taken from the page as they are and run in real editors
from Debian 12 (Neovim 0.7.2, Emacs 28.2 with elpa-eglot 1.9), headless, on a buggy project.
A user puts the block in their init file: here it is the editor's only configuration. The
editors that do not run headless here (VS Code, Helix, Sublime Text) get their block parsed
and the server it names started and asked to ``initialize``."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from harness import run_cli
from lsp_support import FETCHING, SUPPORTERS, buggy_project

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytest.importorskip("pygls", reason="the [lsp] extra is not installed")
EDITORS_DOC = REPO / "docs" / "editors.md"
DRIVERS = REPO / "tests" / "editors"
TIMEOUT = 400


def config_block(name: str) -> str:
    """The fenced block right after ``<!-- editor-config: NAME -->`` in docs/editors.md."""
    text = EDITORS_DOC.read_text(encoding="utf-8")
    found = re.search(
        rf"<!-- editor-config: {re.escape(name)} -->\n```\w+\n(.*?)\n```", text, re.DOTALL
    )
    assert found, f"docs/editors.md has no block marked editor-config: {name}"
    return found.group(1) + "\n"


def user_environment(tmp_path: Path) -> dict[str, str]:
    """A user's environment: lintloader on PATH (the docs' blocks start it by name), the
    editor's own state and the analysis cache in the test's folder."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "LINTLOADER_CACHE_DIR": str(tmp_path / "cache"),
    }


@pytest.fixture(scope="module")
def fixed_by_cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `lintloader fix` makes of the buggy project (one run, which both editors' tests
    read): the editor's quick fix must write the same."""
    base = tmp_path_factory.mktemp("fixed_by_cli")
    expected = buggy_project(base)
    done = run_cli("fix", ".", cwd=expected, env={"LINTLOADER_CACHE_DIR": str(base / "c2")})
    assert done.returncode == 0, done.stdout + done.stderr
    return expected


@pytest.mark.skipif(
    shutil.which("nvim") is None,
    reason="Neovim is not installed (apt-get install neovim; .ci/run does)",
)
def test_neovim_07_block_from_the_docs(tmp_path: Path, fixed_by_cli: Path) -> None:
    root = buggy_project(tmp_path)
    expected = fixed_by_cli
    init = tmp_path / "init.lua"
    init.write_text(config_block("neovim-0.7"), encoding="utf-8")
    out = tmp_path / "neovim.json"
    env = {
        **user_environment(tmp_path),
        "LL_OUT": str(out),
        "LL_SUPPORTERS": str(root / SUPPORTERS),
    }
    done = subprocess.run(
        ["nvim", "--headless", "-n", "-i", "NONE", "-u", str(init), str(root / FETCHING),
         "-c", f"luafile {DRIVERS / 'neovim_user.lua'}"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert out.exists(), done.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["attached"] is True
    assert results["published"] is True
    [diagnostic] = results["diagnostics"]
    assert (diagnostic["code"], diagnostic["lnum"], diagnostic["col"]) == ("LL101", 15, 8)
    assert [(Path(r["path"]), r["line"]) for r in diagnostic["related"]] == [
        (root / FETCHING, 15),
        (root / FETCHING, 30),
        (root / SUPPORTERS, 21),
        (root / SUPPORTERS, 20),
    ]
    assert results["same_client"] is True  # one server for the project's buffers
    assert results["cleared_by_other"] is True  # an unsaved edit in another file counts
    assert results["restored"] is True
    assert results["titles"][0].startswith("Fix LL101 (safe, relocate)")
    assert results["cleared"] is True
    for relative in (FETCHING, SUPPORTERS):
        assert (root / relative).read_text("utf-8") == (expected / relative).read_text("utf-8")


@pytest.mark.skipif(
    shutil.which("emacs") is None,
    reason="Emacs is not installed (apt-get install emacs-nox elpa-eglot; .ci/run does)",
)
def test_emacs_block_from_the_docs(tmp_path: Path, fixed_by_cli: Path) -> None:
    root = buggy_project(tmp_path)
    expected = fixed_by_cli
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)  # a clone, as users have
    init = tmp_path / "init.el"
    init.write_text(config_block("emacs"), encoding="utf-8")
    out = tmp_path / "emacs.json"
    env = {**user_environment(tmp_path), "LL_OUT": str(out), "LL_FILE": str(root / FETCHING)}
    done = subprocess.run(
        ["emacs", "--batch", "-q", "-l", str(init),
         "-l", str(DRIVERS / "emacs_user.el")],
        cwd=tmp_path, env=env, input="\n\n\n", capture_output=True, text=True,
        timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert out.exists(), done.stderr[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["managed"] is True
    assert results["diagnostics"], done.stderr[-3000:]
    [(line, column, message)] = results["diagnostics"]
    assert (line, column) == (16, 8)
    assert message.startswith("lintloader [LL101]: `DataFetcher.__iter__` resets")
    assert results["cleared"] is True, done.stderr[-3000:]
    for relative in (FETCHING, SUPPORTERS):
        assert (root / relative).read_text("utf-8") == (expected / relative).read_text("utf-8")


def server_command(editor: str) -> tuple[list[str], set[str]]:
    """The command line an editor's block starts, and the code-action kinds it asks for."""
    block = config_block(editor)
    if editor == "helix":
        table = tomllib.loads(block)
        (python,) = [entry for entry in table["language"] if entry["name"] == "python"]
        assert "lintloader" in python["language-servers"]
        server = table["language-server"]["lintloader"]
        return [server["command"], *server["args"]], set()
    settings = json.loads(block)
    if editor == "vscode":
        assert settings["glspc.server.languageId"] == ["python"]
        command = [settings["glspc.server.command"], *settings["glspc.server.commandArguments"]]
        return command, set(settings["editor.codeActionsOnSave"])
    client = settings["clients"]["lintloader"]
    assert client["enabled"] is True and client["selector"] == "source.python"
    return client["command"], set()


def test_the_server_the_other_blocks_name_answers_initialize(tmp_path: Path) -> None:
    """Each block parses, and the command it names (found on the user's PATH, as the editor
    finds it) is a language server that answers ``initialize`` as lintloader, with the
    code-action kinds the block asks for on save. One start for each distinct command."""
    wanted: dict[tuple[str, ...], set[str]] = {}
    for editor in ("vscode", "helix", "sublime"):
        command, kinds = server_command(editor)
        wanted.setdefault(tuple(command), set()).update(kinds)
    for command, kinds in wanted.items():
        answer = initialize_answer(list(command), tmp_path)
        assert answer["result"]["serverInfo"]["name"] == "lintloader"
        offered = answer["result"]["capabilities"]["codeActionProvider"]["codeActionKinds"]
        assert kinds <= set(offered), (kinds, offered)


def initialize_answer(command: list[str], tmp_path: Path) -> dict[str, Any]:
    """The answer to ``initialize`` of the server ``command`` starts; it then shuts down."""
    from test_lsp_handshake import frame, read_message

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]  # fmt: skip
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd=tmp_path, env=user_environment(tmp_path), start_new_session=True,
    )  # fmt: skip
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b"".join(frame(m) for m in messages))
        server.stdin.flush()
        answer = read_message(server.stdout)
        assert read_message(server.stdout)["id"] == 2
        assert server.wait(60) == 0
        return answer
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
