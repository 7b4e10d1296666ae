"""``[tool.lintloader]`` in the nearest ``pyproject.toml``, merged with command-line options.

Keys: ``select``, ``ignore``, ``exclude``, ``min-severity``, ``per-file-ignores``
(``{"glob" = ["LL101"]}``), ``max-file-size`` (MB; larger files are LL000, 0: no limit).
Codes match by prefix (``LL1`` selects LL101-LL104).
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lintloader.findings import Severity
from lintloader.limits import DEFAULT_MAX_FILE_MB

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on old interpreters
    import tomli as tomllib


class ConfigError(Exception):
    """A malformed configuration file or value (exit code 2)."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("LL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    min_severity: Severity = Severity.WARNING
    max_file_size: float = DEFAULT_MAX_FILE_MB  # MB; larger files are LL000, 0 = no limit
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: str | None = None  # the pyproject.toml it came from
    root: str | None = None  # its directory: per-file-ignores globs are relative to it

    def enabled(self, code: str) -> bool:
        return _matches(code, self.select) and not _matches(code, self.ignore)

    def ignored_in(self, code: str, path: str) -> bool:
        relative = _relative(path, self.root)
        for pattern, codes in self.per_file_ignores:
            if (fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(path, pattern)) and (
                _matches(code, codes)
            ):
                return True
        return False

    def with_options(self, **options: Any) -> Config:
        chosen = {k: v for k, v in options.items() if v not in (None, ())}
        return replace(self, **chosen)


def _matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(p) or p.upper() == "ALL" for p in prefixes)


def _relative(path: str, root: str | None) -> str:
    if root and os.path.isabs(path) and path.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(path, root).replace(os.sep, "/")
    return path.replace(os.sep, "/")


def find_pyproject(start: str) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.lintloader]`` table, walking upwards."""
    directory = Path(os.path.abspath(start))
    if directory.is_file() or not directory.exists():
        directory = directory.parent
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _has_table(candidate):
            return candidate
    return None


def _has_table(path: Path) -> bool:
    try:
        return b"[tool.lintloader" in path.read_bytes()
    except OSError:
        return False


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration ({exc})") from None
    table = data.get("tool", {}).get("lintloader", {})
    return parse_table(table, str(path))


def parse_table(table: dict[str, Any], source: str) -> Config:
    known = {"select", "ignore", "exclude", "min-severity", "per-file-ignores", "max-file-size"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) in [tool.lintloader]: {', '.join(unknown)}")
    try:
        per_file = tuple(
            (str(glob), tuple(_codes(codes, f"per-file-ignores.{glob}")))
            for glob, codes in (table.get("per-file-ignores") or {}).items()
        )
        config = Config(
            select=tuple(_codes(table.get("select", ["LL"]), "select")),
            ignore=tuple(_codes(table.get("ignore", []), "ignore")),
            exclude=tuple(str(p) for p in table.get("exclude", [])),
            min_severity=Severity.parse(str(table.get("min-severity", "warning"))),
            max_file_size=_megabytes(table.get("max-file-size", DEFAULT_MAX_FILE_MB)),
            per_file_ignores=per_file,
            source=source,
            root=os.path.dirname(os.path.abspath(source)),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{source}: [tool.lintloader]: {exc}") from None
    return config


def _megabytes(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("max-file-size must be a number of megabytes (0: no limit)")
    return float(value)


def _codes(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of rule codes")
    return [v.strip().upper() for v in value]


def split_codes(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


__all__ = ["Config", "ConfigError", "find_pyproject", "load_config", "split_codes"]
