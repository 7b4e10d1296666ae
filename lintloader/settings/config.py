"""``[tool.lintloader]`` in the nearest ``pyproject.toml``, merged with command-line options.

Keys: ``select``, ``extend-select``, ``ignore``, ``extend-ignore``, ``exclude``,
``extend-exclude``, ``min-severity``, ``per-file-ignores`` (``{"glob" = ["LL101"]}``),
``max-file-size`` (MB; larger files are LL000, 0: no limit), ``baseline`` (a file of accepted
findings, relative to the configuration's directory), ``output-format`` (``FORMAT`` or
``FORMAT:PATH`` strings) and ``extend`` (another ``pyproject.toml`` whose table this one
overrides, as ruff's ``extend``). Codes match by prefix (``LL1``
selects LL101-LL105); a selector that matches no rule is an error, as in ruff.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lintloader.finding.findings import Severity
from lintloader.summary.limits import DEFAULT_MAX_FILE_MB
from lintloader.trust.safe_file import Refused, TooLarge, owned_by_another_user, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on old interpreters
    import tomli as tomllib


MAX_CONFIG_BYTES = 4 * 1024 * 1024  # a configuration file larger is an error, never read


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
    # a team's own vocabulary (analysis/vocabulary.py): dotted paths of functions or methods
    extend_resets: tuple[str, ...] = ()
    extend_roots: tuple[str, ...] = ()
    extend_loaders: tuple[str, ...] = ()
    source: str | None = None  # the pyproject.toml it came from
    root: str | None = None  # its directory: per-file-ignores globs are relative to it
    # what a run reports to, not what it finds: left out of the repr that keys stored runs
    baseline: str | None = field(default=None, repr=False)  # absolute path, if configured
    output_format: tuple[str, ...] = field(default=(), repr=False)  # ``FORMAT[:PATH]``
    # (selector, key, file) for each selector a configuration file set (the file ``extend``
    # names, for a key taken from it): what a message about a selector names as its source
    origins: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)

    def hides(self, code: str, severity: Severity) -> bool:
        """Below the threshold, and not a rule selected by its exact code (``--select LL204``
        shows LL204's info findings without ``--min-severity info``)."""
        return severity < self.min_severity and code not in self.select

    def enabled(self, code: str) -> bool:
        return _matches(code, self.select) and not _matches(code, self.ignore)

    def ignored_in(self, code: str, path: str) -> bool:
        """Whether ``per-file-ignores`` ignore ``code`` in ``path``: a glob matches the path
        relative to the configuration's directory (the working directory without one), the
        path as given, or, for a glob without a ``/``, the file name."""
        relative = _relative(path, self.root or os.getcwd())
        name = os.path.basename(path)
        for pattern, codes in self.per_file_ignores:
            candidates = (relative, path) if "/" in pattern else (relative, path, name)
            if _matches(code, codes) and any(fnmatch.fnmatch(c, pattern) for c in candidates):
                return True
        return False

    def with_options(self, **options: Any) -> Config:
        chosen = {k: v for k, v in options.items() if v not in (None, ())}
        return replace(self, **chosen)

    def extended(
        self,
        select: tuple[str, ...] = (),
        ignore: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
        per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ) -> Config:
        """The ``extend-*`` options: added to what is configured instead of replacing it."""
        return replace(
            self,
            select=(*self.select, *select),
            ignore=(*self.ignore, *ignore),
            exclude=(*self.exclude, *exclude),
            per_file_ignores=(*self.per_file_ignores, *per_file_ignores),
        )

    def selection_problems(self, known: Collection[str]) -> tuple[list[str], list[str]]:
        """Selectors that match no rule in ``known``: errors for ``select`` (a typo must not
        turn CI green), warnings for ignore lists (ignoring nothing harms nothing)."""
        unknown = [s for s in self.select if not _selects(s, known)]
        errors = [unknown_selector("select", s, known) for s in unknown]
        warnings = [unknown_selector("ignore", s, known) for s in self.unknown_ignores(known)]
        return errors, warnings

    def unknown_ignores(self, known: Collection[str]) -> tuple[str, ...]:
        """The ignored selectors (``ignore``, ``per-file-ignores``) that match no rule."""
        ignored = (*self.ignore, *(code for _, codes in self.per_file_ignores for code in codes))
        return tuple(dict.fromkeys(s for s in ignored if not _selects(s, known)))

    def origin(self, selector: str) -> tuple[str, str] | None:
        """(key, file) of the configuration that set ``selector``, if one did."""
        return next(((k, f) for s, k, f in self.origins if s == selector), None)


def selects(selector: str, known: Collection[str]) -> bool:
    """Whether ``selector`` (a code, a prefix or ``ALL``) matches a code in ``known``."""
    return _selects(selector, known)


def _selects(selector: str, known: Collection[str]) -> bool:
    return selector.upper() == "ALL" or any(code.startswith(selector) for code in known)


def unknown_selector(where: str, selector: str, known: Collection[str]) -> str:
    """``where: 'LLX' matches no rule; did you mean ...?``: a selector error or warning. The
    codes suggested are the ones a typo away (:func:`one_typo_apart`), so that a new rule
    changes the hint only for a selector one typo from its own code."""
    close = [code for code in sorted(known) if one_typo_apart(selector, code)]
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"{where}: {selector!r} matches no rule{hint} (`lintloader rule --all` lists them)"


def one_typo_apart(typed: str, code: str) -> bool:
    """Whether ``typed`` is ``code`` with one character added, dropped or replaced, or two
    neighbours swapped."""
    if len(typed) == len(code):
        wrong = [i for i, (a, b) in enumerate(zip(typed, code, strict=True)) if a != b]
        if len(wrong) != 2:
            return len(wrong) <= 1
        first, second = wrong
        return second == first + 1 and (typed[first], typed[second]) == (code[second], code[first])
    short, long = sorted((typed, code), key=len)
    return len(long) - len(short) == 1 and any(
        long[:i] + long[i + 1 :] == short for i in range(len(long))
    )


def _matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(p) or p.upper() == "ALL" for p in prefixes)


def _relative(path: str, root: str | None) -> str:
    if root and os.path.isabs(path) and path.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(path, root).replace(os.sep, "/")
    return path.replace(os.sep, "/")


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it is inside it, else as it is: how a
    message names a configuration file (docs/guarantees.md, Output)."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith(os.pardir) else relative


def find_pyproject(start: str) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.lintloader]`` table, walking upwards.
    A file whose TOML cannot be read but that names lintloader counts (its error is reported
    by :func:`load_config`, never skipped in silence)."""
    directory = Path(os.path.abspath(start))
    if directory.is_file() or not directory.exists():
        directory = directory.parent
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _has_table(candidate):
            return candidate
    return None


def requires_python(start: str) -> str | None:
    """``[project] requires-python`` of the nearest ``pyproject.toml`` above ``start`` (any
    ``pyproject.toml``, with a ``[tool.lintloader]`` table or not), else None: the Python a
    project targets, whose default start method its workers get (lintloader/domain/cost.py)."""
    directory = Path(os.path.abspath(start))
    if directory.is_file() or not directory.exists():
        directory = directory.parent
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                project = tomllib.loads(
                    read_regular(candidate, MAX_CONFIG_BYTES, follow=True).decode("utf-8")
                ).get("project")
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
                return None
            value = project.get("requires-python") if isinstance(project, dict) else None
            return value if isinstance(value, str) else None
    return None


def _has_table(path: Path) -> bool:
    """Whether ``path`` holds ``tool.lintloader``, in any way TOML can write it (``[tool]``
    with ``lintloader.x = ...``, dotted keys, quoted keys, inline tables)."""
    try:
        data = read_regular(path, MAX_CONFIG_BYTES, follow=True)
    except TooLarge:
        return True  # load_config says what is wrong with it
    except OSError:
        return False
    if b"lintloader" not in data and b"\\u" not in data and b"\\U" not in data:
        return False  # no way to spell the key (an escape in a quoted key could)
    try:
        tool = tomllib.loads(data.decode("utf-8")).get("tool")
    except (UnicodeDecodeError, ValueError, RecursionError):  # TOMLDecodeError is one
        return b"lintloader" in data  # load_config says what is wrong with it
    return isinstance(tool, dict) and "lintloader" in tool


class ForeignConfig(ConfigError):
    """A configuration file found for the paths (not named on the command line) that another
    user owns: not used, as git's ``safe.directory`` (a one-line warning; the run goes on)."""


def load_config(path: Path | None, found: bool = False) -> Config:
    """The configuration in ``path`` (None: the defaults) over the chain of files its
    ``extend`` names. A file ``found`` walking up from the paths, and each file its chain
    names, must be the user's or root's (else :class:`ForeignConfig`); one the command line
    names is the user's word."""
    if path is None:
        return Config()
    accept = owned_by_another_user if found else None
    table, sources = _extended_table(path, accept)
    config = parse_table(table, str(path))
    return replace(config, origins=tuple(_origins(table, sources)))


SELECTOR_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "per-file-ignores")
Sources = dict[str, str]  # key -> the file it was taken from (the one ``extend`` names, or own)
Accept = Callable[[os.stat_result], str | None] | None


def _origins(table: dict[str, Any], sources: Sources) -> Iterator[tuple[str, str, str]]:
    """(selector, key, file) for each selector of ``table`` (already checked by parse_table)."""
    for key in SELECTOR_KEYS:
        value = table.get(key, [])
        lists = value.values() if isinstance(value, dict) else [value]
        for codes in lists:
            for code in _codes(codes, key):
                yield code, key, sources[key]


def _extended_table(path: Path, accept: Accept) -> tuple[dict[str, Any], Sources]:
    """The table of ``path`` over the tables its ``extend`` chain names, and the file each key
    was taken from; a path-valued key of an extended file (``baseline``) stays relative to
    that file. The chain is followed in a loop, however long (a cycle is an error)."""
    chain = _extend_chain(path, accept)
    base_path, merged = chain[-1]
    sources: Sources = {key: str(base_path) for key in merged}
    for own_path, table in reversed(chain[:-1]):
        if isinstance(merged.get("baseline"), str):
            folder = os.path.dirname(str(base_path))
            merged = {**merged, "baseline": os.path.join(folder, merged["baseline"])}
        own = {key: value for key, value in table.items() if key != "extend"}
        merged = {**merged, **own}
        sources = {**sources, **{key: str(own_path) for key in own}}
        base_path = own_path
    return merged, sources


def _extend_chain(path: Path, accept: Accept) -> list[tuple[Path, dict[str, Any]]]:
    """``path``'s table, then the table its ``extend`` names, and so on: each file once."""
    chain = [(path, _read_table(path, accept))]
    seen = {os.path.abspath(path)}
    while "extend" in chain[-1][1]:
        current, table = chain[-1]
        extend = table["extend"]
        where = f"{shown_path(current)}: [tool.lintloader]: extend"
        if not isinstance(extend, str):
            raise ConfigError(f"{where} must be a path, not {_kind(extend)}")
        target = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(current)), extend))
        if target in seen:
            raise ConfigError(f"{where} {extend!r} makes a cycle")
        if not os.path.isfile(target):
            raise ConfigError(f"{where} {extend!r}: no such file")
        seen.add(target)
        chain.append((Path(target), _read_table(Path(target), accept)))
    return chain


def _read_table(path: Path, accept: Accept = None) -> dict[str, Any]:
    try:
        data = tomllib.loads(read_regular(path, MAX_CONFIG_BYTES, True, accept).decode("utf-8"))
    except Refused as exc:
        raise ForeignConfig(f"{shown_path(path)}: {exc.strerror}; not used") from None
    except OSError as exc:
        raise ConfigError(
            f"{shown_path(path)}: cannot read configuration ({exc.strerror or exc})"
        ) from None
    except (UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError, a number too long
        raise ConfigError(f"{shown_path(path)}: cannot read configuration ({exc})") from None
    except RecursionError:
        raise ConfigError(
            f"{shown_path(path)}: cannot read configuration (nested too deeply)"
        ) from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{shown_path(path)}: 'tool' must be a table, not {_kind(tool)}")
    table = tool.get("lintloader", {})
    if not isinstance(table, dict):
        raise ConfigError(
            f"{shown_path(path)}: [tool.lintloader] must be a table, not {_kind(table)}"
        )
    return table


def _kind(value: Any) -> str:
    """The TOML name of ``value``'s type, for an error message."""
    kinds = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    kinds.update({list: "an array", dict: "a table"})
    return kinds.get(type(value), type(value).__name__)


def parse_table(table: dict[str, Any], source: str) -> Config:
    known = {
        "select",
        "extend-select",
        "ignore",
        "extend-ignore",
        "exclude",
        "extend-exclude",
        "min-severity",
        "per-file-ignores",
        "max-file-size",
        "baseline",
        "output-format",
        *VOCABULARY_KEYS,
    }
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(
            f"{shown_path(source)}: unknown key(s) in [tool.lintloader]: {', '.join(unknown)}"
        )
    try:
        per_file_table = table.get("per-file-ignores", {})
        if not isinstance(per_file_table, dict):
            raise ValueError(
                f'per-file-ignores must be a table of glob = ["codes"], not {_kind(per_file_table)}'
            )
        per_file = tuple(
            (str(glob), tuple(_codes(codes, f"per-file-ignores.{glob}")))
            for glob, codes in per_file_table.items()
        )
        config = Config(
            select=(
                *_codes(table.get("select", ["LL"]), "select"),
                *_codes(table.get("extend-select", []), "extend-select"),
            ),
            ignore=(
                *_codes(table.get("ignore", []), "ignore"),
                *_codes(table.get("extend-ignore", []), "extend-ignore"),
            ),
            exclude=(
                *_strings(table.get("exclude", []), "exclude", "glob patterns"),
                *_strings(table.get("extend-exclude", []), "extend-exclude", "glob patterns"),
            ),
            min_severity=Severity.parse(_string(table.get("min-severity", "warning"))),
            max_file_size=_megabytes(table.get("max-file-size", DEFAULT_MAX_FILE_MB)),
            per_file_ignores=per_file,
            extend_resets=_paths(table.get("extend-resets", []), "extend-resets"),
            extend_roots=_paths(table.get("extend-roots", []), "extend-roots"),
            extend_loaders=_paths(table.get("extend-loaders", []), "extend-loaders"),
            source=source,
            root=os.path.dirname(os.path.abspath(source)),
            baseline=_baseline(table.get("baseline"), source),
            output_format=tuple(
                _strings(table.get("output-format", []), "output-format", "FORMAT[:PATH]")
            ),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{shown_path(source)}: [tool.lintloader]: {exc}") from None
    return config


def _baseline(value: Any, source: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"baseline must be a file name (a string), not {_kind(value)}")
    return os.path.join(os.path.dirname(os.path.abspath(source)), value)


VOCABULARY_KEYS = ("extend-resets", "extend-roots", "extend-loaders")


def _paths(value: Any, key: str) -> tuple[str, ...]:
    """Dotted paths of functions or methods (``mypkg.data.Loader.restart``): a module and a
    name at least, each part an identifier."""
    paths = _strings(value, key, "dotted paths")
    for path in paths:
        parts = path.split(".")
        if len(parts) < 2 or not all(part.isidentifier() for part in parts):
            raise ValueError(
                f"{key}: {path!r} is not a dotted path of a function or method "
                "(module.function, module.Class.method)"
            )
    return tuple(paths)


def _megabytes(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("max-file-size must be a number of megabytes (0: no limit)")
    return float(value)


def _codes(value: Any, key: str) -> list[str]:
    return [v.strip().upper() for v in _strings(value, key, "rule codes")]


def _strings(value: Any, key: str, what: str) -> list[str]:
    """``value`` as a list of strings (one string counts as a list of one)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(f"{key} must be a list of {what} (strings), not {_kind(value)}")
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"{key} must be a list of {what} (strings); found {_kind(item)}")
    return list(value)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"min-severity must be a string, not {_kind(value)}")
    return value


def parse_per_file_ignores(entries: Iterable[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``--per-file-ignores 'tests/*:LL201,LL202'`` (repeatable), as the config key holds them."""
    parsed = []
    for entry in entries:
        glob, colon, codes = entry.rpartition(":")
        if not colon or not glob or not split_codes(codes):
            raise ConfigError(f"--per-file-ignores {entry!r}: expected GLOB:CODE[,CODE...]")
        parsed.append((glob, split_codes(codes)))
    return tuple(parsed)


def split_codes(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


__all__ = [
    "Config",
    "ConfigError",
    "find_pyproject",
    "load_config",
    "parse_per_file_ignores",
    "selects",
    "shown_path",
    "split_codes",
    "unknown_selector",
]
