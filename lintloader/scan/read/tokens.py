"""Byte tokens that decide which files are worth parsing (see ``select/policy.py``).

A plain token matches anywhere in a file's bytes (``._iterator``, ``oader``). A token made by
:func:`whole_word` matches only as a whole identifier: the name of a function or class that the
analysis wants callers of (``dataloader`` must not match ``train_dataloader``). A token made by
:func:`package_scope` matches a file inside a top-level package, or one that names the package
as a whole word: code that calls into a package imports it, unless it is part of it. A token
made by :func:`shape` is a named check of the bytes (``scan/read/shapes.py``), searched after
the plain tokens of its group. Every group of a query ends in one more shape, :func:`in_code`:
its plain and whole-word tokens are in the file's code, not only in comments and docstrings
(``code_view.py``; a change to what that view leaves out needs a new shape name, as the stat
index keeps the old answers).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from lintloader.scan.read.byte_search import holds
from lintloader.scan.read.code_view import code_view
from lintloader.scan.read.shapes import shape_in

WORD_MARK = b"\b"  # never part of Python source text we search for
SCOPE_MARK = b"\x01"  # neither
SHAPE_MARK = b"\x02"  # nor this
_MARKS = (WORD_MARK, SCOPE_MARK, SHAPE_MARK)
# the name of the shape that asks tokens of a file's code (``in_code``), and what parts them
IN_CODE = b"in-code:"
IN_CODE_SEPARATOR = b"\x00"
_IDENTIFIER_RUN = re.compile(rb"\w+")
# the parts of an identifier, split at underscores and before capitals (``Fill``, ``Mask``,
# ``Pipeline`` of ``FillMaskPipeline``; ``train``, ``dataloader`` of ``train_dataloader``)
_NAME_PART = re.compile(rb"[A-Z]+[a-z0-9]*|[a-z0-9]+")
# a part becomes a prerequisite of the whole-word tokens holding it when this many share it
SHARED_PART_TOKENS = 3
SHARED_PART_MIN_SIZE = 5
_WORD_BYTES = frozenset(b"_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")  # \w


def whole_word(name: str | bytes) -> bytes:
    raw = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else name
    return WORD_MARK + raw


def shape(name: str) -> bytes:
    """The token of a shape of ``scan/read/shapes.py``."""
    return SHAPE_MARK + name.encode()


def is_shape(token: bytes) -> bool:
    return token.startswith(SHAPE_MARK)


def in_code(group: Iterable[bytes]) -> bytes | None:
    """The shape token that asks a group's plain and whole-word tokens of the file's code, its
    comments and docstrings left out (``code_view.py``); None for a group of none."""
    asked = sorted({t for t in group if not t.startswith((SCOPE_MARK, SHAPE_MARK))})
    return SHAPE_MARK + IN_CODE + IN_CODE_SEPARATOR.join(asked) if asked else None


def found_in(data: bytes, token: bytes) -> bool:
    if token.startswith(SHAPE_MARK):
        name = token[len(SHAPE_MARK) :]
        if name.startswith(IN_CODE):
            view = code_view(data)
            asked = name[len(IN_CODE) :].split(IN_CODE_SEPARATOR)
            return all(found_in(view, inner) for inner in asked)
        return shape_in(data, name)
    if not token.startswith(WORD_MARK):
        return holds(data, token)
    return whole_word_in(data, token[len(WORD_MARK) :])


def whole_word_in(data: bytes, word: bytes) -> bool:
    r"""Whether ``word`` occurs in ``data`` with no identifier byte right before or after it
    (``re.search(rb"(?<!\w)word(?!\w)")``, but by ``bytes.find`` from one occurrence to the
    next: a pattern that starts with a look-behind has no literal prefix for ``re`` to skip
    ahead with, so it crawled through every file that merely contained the word). Most files
    hold no occurrence at all, which :func:`byte_search.holds` answers sooner."""
    if not holds(data, word):
        return False
    start, size, end_of_data = data.find(word), len(word), len(data)
    while start != -1:
        end = start + size
        if (start == 0 or data[start - 1] not in _WORD_BYTES) and (
            end == end_of_data or data[end] not in _WORD_BYTES
        ):
            return True
        start = data.find(word, start + 1)
    return False


def top_package(module: str) -> str:
    """``pytorch_lightning`` for ``pytorch_lightning.utilities.fetching``."""
    return module.partition(".")[0]


def package_scope(module: str) -> bytes:
    """The scope token of ``module``'s top-level package."""
    return SCOPE_MARK + top_package(module).encode("utf-8", "surrogateescape")


def scope_package(token: bytes) -> str | None:
    """The package a scope token stands for; None for any other token."""
    return (
        token[len(SCOPE_MARK) :].decode("utf-8", "surrogateescape")
        if token.startswith(SCOPE_MARK)
        else None
    )


def index_token(token: bytes) -> bytes:
    """The token whose answer the stat index keeps for ``token``: the token itself, or for a
    scope token its package's name as a whole word (being inside the package is read off the
    module name, never searched)."""
    package = scope_package(token)
    return token if package is None else whole_word(package)


def searched_text(token: bytes) -> bytes:
    """The bytes a token's search looks for (a whole-word token's word)."""
    return token[len(WORD_MARK) :] if token.startswith(WORD_MARK) else token


def absence_implies(inner: bytes, token: bytes) -> bool:
    """Whether a file without ``inner`` cannot contain ``token``: ``inner`` is another plain
    token that occurs inside the text of ``token`` (:func:`implied_absences` of one token)."""
    return is_plain(inner) and implied_absences(token, ((0, inner),)) != 0


def is_plain(token: bytes) -> bool:
    """A token searched for as written (no mark): the only kind whose absence from a file
    implies another's (:func:`absence_implies`)."""
    return not token.startswith(_MARKS)


def implied_absences(token: bytes, plain: Iterable[tuple[int, bytes]]) -> int:
    """Bits of the plain tokens ``plain`` (each with its number in a token table) whose
    absence from a file implies the absence of ``token``: each occurs inside the text of
    ``token`` and is not ``token`` itself; a scope or shape token is implied by none (the
    one home of this rule: :func:`absence_implies` asks it of one token)."""
    if token.startswith((SCOPE_MARK, SHAPE_MARK)):
        return 0
    text, mask = searched_text(token), 0
    for number, inner in plain:
        if inner in text and inner != token:
            mask |= 1 << number
    return mask


def core(token: bytes) -> bytes:
    """The longest run of identifier characters in a plain token (``_iterator`` for
    ``"_iterator"``): every file that contains the token contains its core."""
    runs = _IDENTIFIER_RUN.findall(token)
    return max(runs, key=len) if runs else token


def prerequisites(tokens: Iterable[bytes]) -> dict[bytes, tuple[bytes, ...]]:
    """For each token, plain tokens that every file containing it contains too: the other
    plain tokens and the cores of plain tokens found inside its text, the longest only
    (``oader`` for ``DataLoader``, ``_iterator`` for ``._iterator``), and for a whole-word
    token the part of its name that several of them share (:func:`shared_parts`), which needs
    the plain tokens inside it in turn. One search for an absent prerequisite answers every
    token that needs it, which is most of a seed search (a whole-word token's own search
    starts with its plain word anyway)."""
    tokens = {token for token in tokens if not token.startswith((SCOPE_MARK, SHAPE_MARK))}
    plain = {token for token in tokens if not token.startswith(WORD_MARK)}
    candidates = plain | {core(token) for token in plain}
    parts = shared_parts(tokens)
    found: dict[bytes, tuple[bytes, ...]] = {}
    for token in sorted(tokens | set(parts.values())):
        text = searched_text(token)
        inner = {c for c in candidates if len(c) < len(text) and c in text}
        if token in parts:
            inner.add(parts[token])
        longest = sorted(c for c in inner if not any(c != d and c in d for d in inner))
        if longest:
            found[token] = tuple(longest)
    return found


def shared_parts(tokens: Iterable[bytes]) -> dict[bytes, bytes]:
    """For each whole-word token whose name holds a part (see ``_NAME_PART``) of at least
    ``SHARED_PART_MIN_SIZE`` bytes that at least ``SHARED_PART_TOKENS`` whole-word tokens
    hold, the most shared such part (the longest of those as shared), as a plain token: the
    22 subclasses of ``Pipeline`` a round asks of every file holding ``__call__`` are then
    answered, in a file without ``Pipeline``, by one search of it instead of one each."""
    words = sorted({searched_text(token) for token in tokens if token.startswith(WORD_MARK)})
    parts_of = {word: set(_NAME_PART.findall(word)) for word in words}
    shared = Counter(part for parts in parts_of.values() for part in parts)
    found: dict[bytes, bytes] = {}
    for word, parts in parts_of.items():
        common = [
            part
            for part in parts
            if part != word
            and len(part) >= SHARED_PART_MIN_SIZE
            and shared[part] >= SHARED_PART_TOKENS
        ]
        if common:
            best = max(common, key=lambda part: (shared[part], len(part), part))
            found[WORD_MARK + word] = best
    return found


def function_groups(name: str, module: str) -> set[tuple[bytes, ...]]:
    """Token groups of the files that can call module-level function ``name`` of ``module``:
    they import it, so they name its module (``from .helpers import f``, ``helpers.f()``) or,
    through a re-export, its package; and they are in its top-level package or name it."""
    parts = module.split(".")
    anchors = {parts[-1]} if len(parts) < 2 else {parts[-1], parts[-2]}
    scope = package_scope(module)
    return {(whole_word(name), whole_word(anchor), scope) for anchor in anchors}


def method_group(method: str, class_name: str, module: str) -> tuple[bytes, ...]:
    """The token group of the files that can call method ``method`` of class ``class_name``
    (defined in ``module``) or, for ``__init__``, construct it: they name the class (to type
    the receiver or call the constructor) and are in its package or name it."""
    klass = whole_word(class_name)
    scope = package_scope(module)
    return (klass, scope) if method == "__init__" else (whole_word(method), klass, scope)
