"""Cache entries as plain data: JSON checked against a type on the way back in.

A cache entry is read back by a later run, possibly after someone else rewrote it, so reading
one must never run code (a pickle does, which is why lintloader no longer stores any). An entry
is a header line naming its kind, then compact JSON. What is read back is rebuilt along a type
hint (``tuple[Stamp, ...]``, a ``NamedTuple``, a dataclass...): every value must be exactly of
the type the hint names, or the whole entry is :class:`Invalid`, a miss.

How the hints map to JSON:

* ``str``, ``int``, ``bool``, ``float`` and ``None`` are themselves (``bool`` is never an ``int``);
* ``bytes``: a string of the bytes as Latin-1 characters;
* ``tuple``, ``list`` and ``frozenset``: an array (a set's items sorted, so that the same value
  is the same bytes in every process); ``NamedTuple`` and dataclass records: an array of their
  fields, in order (every field of a dataclass must be an ``__init__`` field);
* ``dict[str, V]``: an object; a dict with other keys: an array of ``[key, value]`` pairs;
* an ``IntEnum``: its value; ``X | Y``: the first alternative that takes the value;
* ``object``: any JSON value, unchecked (the caller checks it).

Encoders and decoders are built once per hint. Reading goes by columns: every value of one
hint in an entry (every call of every function of a summary, every site of those calls...) is
checked and made at once, by C code (``set(map(type, column))``, ``map(tuple.__new__, ...)``),
so that a summary's tens of thousands of records cost few Python calls; the depth of the data
never drives a recursion. The layout on disk is the same as a value at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import itertools
import json
import operator
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from typing import Any

HEADER = b"lintloader-cache 1 "  # then the entry's kind, then a newline, then the JSON
Convert = Callable[[Any], Any]
Values = Sequence[Any]  # a column: values of one type, from every place an entry holds one
Column = Callable[[Values], Values]
_LIST = frozenset({list})
_DICT = frozenset({dict})


class Invalid(ValueError):
    """A stored value that is not what the hint says: the entry is a miss."""


def _head(kind: str) -> bytes:
    return HEADER + kind.encode("ascii") + b"\n"


# compact JSON; entries are trees of records (no value refers to itself), so the C encoder's
# check for circular references (a dict entry per array and object written) is skipped: 13 %
# of the time to write the summaries of a 4x site-packages tree
_JSON = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)


def dumps(kind: str, hint: object, value: object) -> bytes:
    """``value`` (of type ``hint``) as the bytes of an entry of ``kind``."""
    text = _JSON.encode(encoder(hint)(value))
    return _head(kind) + text.encode("ascii")


def is_kind(kind: str, data: bytes) -> bool:
    """Whether ``data`` says it is an entry of ``kind`` (its header; the rest is not read)."""
    return data.startswith(_head(kind))


def loads(kind: str, hint: object, data: bytes) -> Any:
    """The value stored in ``data`` as an entry of ``kind``; :class:`Invalid` when it is not
    one, or not of type ``hint``."""
    head = _head(kind)
    if not data.startswith(head):
        raise Invalid("not an entry of this kind")
    try:
        value = json.loads(data[len(head) :])
    except (ValueError, RecursionError) as exc:  # bad JSON, too deep, too long an int
        raise Invalid(str(exc)) from None
    return decoder(hint)(value)


def _identity(value: Any) -> Any:
    return value


_SCALARS = (str, int, bool, float, type(None))


@functools.cache
def encoder(hint: object) -> Convert:
    """What turns a value of type ``hint`` into JSON data."""
    return _identity if _native(hint) else _build_encoder(hint)


@functools.cache
def _native(hint: object) -> bool:
    """Whether ``json`` writes a value of ``hint`` as it must be stored (tuples and named
    tuples become arrays), so that the encoder has nothing to do."""
    if hint in _SCALARS or hint is object:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (tuple, list):
        return all(_native(arg) for arg in args if arg is not Ellipsis)
    if origin is dict:
        return args[0] is str and _native(args[1])
    if origin in (typing.Union, types.UnionType):
        return all(_native(arg) for arg in args)
    if _is_named_tuple(hint):
        return all(_native(field) for field in _field_hints(hint))
    return False


def _build_encoder(hint: object) -> Convert:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bytes:
        return _encode_bytes
    if isinstance(hint, type) and issubclass(hint, enum.IntEnum):
        return int
    if origin in (typing.Union, types.UnionType):
        return _union_encoder(args)
    if origin in (tuple, list, frozenset):
        return _sequence_encoder(origin, args)
    if origin is dict:
        return _dict_encoder(args)
    if _is_named_tuple(hint) or dataclasses.is_dataclass(hint):
        return _record_encoder(hint)
    raise TypeError(f"no cache encoding for {hint!r}")


def _encode_bytes(value: bytes) -> str:
    return value.decode("latin-1")


def _union_encoder(args: tuple[object, ...]) -> Convert:
    pairs = [(_accepts(arg), encoder(arg)) for arg in args]

    def encode(value: Any) -> Any:
        for accepts, convert in pairs:
            if accepts(value):
                return convert(value)
        raise TypeError(f"{type(value).__name__} is none of {args!r}")

    return encode


def _sequence_encoder(origin: type, args: tuple[object, ...]) -> Convert:
    if origin is frozenset:
        return _set_encoder(encoder(args[0]))
    if not _is_fixed(origin, args):
        item = encoder(args[0])
        return lambda value: list(map(item, value))
    items = [encoder(arg) for arg in args]
    return lambda value: [convert(element) for convert, element in zip(items, value, strict=True)]


def _set_encoder(item: Convert) -> Convert:
    """A set's items, sorted: a set of strings iterates in an order that changes with each
    process's hash seed, and an entry must be the same bytes for the same value (a cache
    shared between runs, a byte comparison of two runs' stores). Items that do not compare
    (mixed types; none of today's hints) keep the set's order."""

    def encode(value: Any) -> Any:
        items = list(map(item, value))
        with contextlib.suppress(TypeError):  # the items, whatever order a failed sort left
            items.sort()
        return items

    return encode


def _dict_encoder(args: tuple[object, ...]) -> Convert:
    key, item = encoder(args[0]), encoder(args[1])
    if args[0] is str:  # the same keys, in the same order, each with its value encoded
        return lambda value: dict(zip(value, map(item, value.values()), strict=True))
    # pairs as tuples: json writes a tuple as the array a list makes
    return lambda value: list(zip(map(key, value), map(item, value.values()), strict=True))


def _record_encoder(hint: Any) -> Convert:
    """A record's fields, read at once (``attrgetter``); only those of a hint that ``json``
    does not write as it must be stored are converted, the others are taken as they are."""
    names = [name for name, _ in _fields(hint)]
    fields = _getter(names)
    converted = [
        (index, encoder(field))
        for index, field in enumerate(_field_hints(hint))
        if not _native(field)
    ]

    def encode(value: Any) -> Any:
        row = list(fields(value))
        for index, convert in converted:
            row[index] = convert(row[index])
        return row

    return encode


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """What reads the fields ``names`` of a record as a tuple (``attrgetter`` of one name
    gives the value itself; of none, a TypeError: an empty record has no decoding either)."""
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda value: (get(value),)
    return operator.attrgetter(*names)


@functools.cache
def decoder(hint: object) -> Convert:
    """What rebuilds a value of type ``hint`` from JSON data, raising :class:`Invalid` for
    anything else."""
    column = _column(hint)
    return lambda value: column((value,))[0]


@functools.cache
def _column(hint: object) -> Column:
    """What rebuilds every value of a column of values of type ``hint`` at once (a list of
    the values, in order), raising :class:`Invalid` if one is anything else.

    Decoding goes by columns: the fields of all the records of a column are columns again,
    and so are the items of all its arrays (every call of every function of a summary is
    one column of calls, checked and made at once), so that nearly every test and every
    record is made by C code (``set(map(type, ...))``, ``map(tuple.__new__, ...)``), not by
    Python code per value: a summary holds tens of thousands of records."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is object:
        return _identity
    if hint in _SCALARS:
        return _scalar_column(typing.cast(type, hint))
    if hint is bytes:
        return lambda values: list(map(_decode_bytes, values))
    if isinstance(hint, type) and issubclass(hint, enum.IntEnum):
        return _enum_column(hint)
    if origin in (typing.Union, types.UnionType):
        return _union_column(args)
    if origin in (tuple, list, frozenset):
        if _is_fixed(origin, args):
            return _record_column(args, tuple, "tuple")
        return _sequence_column(origin, args[0])
    if origin is dict:
        return _dict_column(args)
    if _is_named_tuple(hint) or dataclasses.is_dataclass(hint):
        record = typing.cast(type, hint)
        return _record_column(_field_hints(record), record, record.__name__)
    raise TypeError(f"no cache decoding for {hint!r}")


def _scalar_column(kind: type) -> Column:
    expected = frozenset({kind})

    def decode(values: Values) -> Values:
        if not set(map(type, values)) <= expected:
            raise Invalid(f"not a {kind.__name__}")
        return values  # the very same column: nothing to convert (see _sequence_column)

    return decode


def _decode_bytes(value: Any) -> bytes:
    if type(value) is not str:
        raise Invalid("not a byte string")
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        raise Invalid("not a byte string") from None


def _enum_column(kind: type[enum.IntEnum]) -> Column:
    members = {member.value: member for member in kind}

    def decode(values: Values) -> Values:
        if not set(map(type, values)) <= {int} or not set(values) <= members.keys():
            raise Invalid(f"not a {kind.__name__}")
        return list(map(members.__getitem__, values))

    return decode


def _union_column(args: tuple[object, ...]) -> Column:
    """Values of a plain scalar alternative are taken by their type at once; the others are
    decoded as the one other alternative together (``X | None``), or tried alternative by
    alternative, in order, one value at a time."""
    scalars = frozenset(typing.cast(type, arg) for arg in args if arg in _SCALARS)
    others = [arg for arg in args if arg not in _SCALARS]
    if not others:
        return _scalar_column_of(scalars, args)
    if len(others) == 1:
        return _optional_column(scalars, _column(others[0]))
    alternatives = [decoder(arg) for arg in others]

    def decode_one(value: Any) -> Any:
        if type(value) in scalars:
            return value
        for alternative in alternatives:
            try:
                return alternative(value)
            except Invalid:
                continue
        raise Invalid(f"none of {args!r}")

    return lambda values: list(map(decode_one, values))


def _scalar_column_of(kinds: frozenset[type], args: tuple[object, ...]) -> Column:
    def decode(values: Values) -> Values:
        if not set(map(type, values)) <= kinds:
            raise Invalid(f"none of {args!r}")
        return values

    return decode


def _optional_column(scalars: frozenset[type], other: Column) -> Column:
    def decode(values: Values) -> Values:
        rest = [value for value in values if type(value) not in scalars]
        if not rest:
            return values
        decoded = iter(other(rest))
        return [value if type(value) in scalars else next(decoded) for value in values]

    return decode


def _sequence_column(origin: type, item: object) -> Column:
    """Arrays: the items of all of them are one column, decoded at once, then cut back."""
    items = _column(item)

    def decode(values: Values) -> Values:
        if not set(map(type, values)) <= _LIST:
            raise Invalid("not an array")
        flat = list(itertools.chain.from_iterable(values))
        decoded = items(flat)
        if decoded is flat:  # the items are as parsed (strings, ints): keep the arrays
            return values if origin is list else list(map(origin, values))
        return list(map(origin, _cut(decoded, values)))

    return decode


def _cut(flat: Values, like: Values) -> Iterator[Iterator[Any]]:
    """``flat`` cut back into pieces as long as the arrays of ``like`` are, in C."""
    return map(itertools.islice, itertools.repeat(iter(flat)), map(len, like))


def _dict_column(args: tuple[object, ...]) -> Column:
    """Objects (``dict[str, V]``): all their values are one column; other dicts are arrays
    of ``[key, value]`` pairs, all of them one column of pairs."""
    if args[0] is not str:
        pairs = _column(tuple[args[0], args[1]])  # type: ignore[valid-type]

        def decode_pairs(values: Values) -> Values:
            if not set(map(type, values)) <= _LIST:
                raise Invalid("not an array of pairs")
            decoded = pairs(list(itertools.chain.from_iterable(values)))
            return list(map(dict, _cut(decoded, values)))

        return decode_pairs
    items = _column(args[1])

    def decode_objects(values: Values) -> Values:
        if not set(map(type, values)) <= _DICT:
            raise Invalid("not an object")
        flat = list(itertools.chain.from_iterable(map(dict.values, values)))
        decoded = items(flat)
        if decoded is flat:  # values as parsed: keep the objects
            return values
        # each object's keys with as many of the decoded values (zip stops at the keys)
        return list(map(dict, map(zip, values, itertools.repeat(iter(decoded)))))

    return decode_objects


def _record_column(hints: tuple[object, ...], make: type, name: str) -> Column:
    """Arrays of ``len(hints)`` values, each made into ``make`` (``tuple``, a named tuple
    through ``tuple.__new__``, a dataclass through ``__init__``: its defaults apply to
    none). Each field of all the records is one column."""
    if not hints:
        raise TypeError(f"no cache decoding for an empty {name}")
    fields = [_column(hint) for hint in hints]
    sizes = frozenset({len(hints)})
    build = _builder(make)

    def decode(values: Values) -> Values:
        if not set(map(type, values)) <= _LIST or not set(map(len, values)) <= sizes:
            raise Invalid(f"not a {name}")
        if not values:
            return []
        rows = zip(*values, strict=True)
        return build(*[field(column) for field, column in zip(fields, rows, strict=True)])

    return decode


def _builder(make: type) -> Callable[..., Values]:
    """What makes records of ``make`` from columns of their fields: tuples, named tuples
    (through ``tuple.__new__``) or dataclasses (through ``__init__``: its defaults apply to
    none)."""
    if make is tuple:
        return lambda *columns: list(zip(*columns, strict=True))
    if _is_named_tuple(make):
        new = functools.partial(map, tuple.__new__, itertools.repeat(make))
        return lambda *columns: list(new(zip(*columns, strict=True)))

    def build(*columns: Values) -> Values:
        try:
            return list(map(make, *columns))
        except (TypeError, ValueError) as exc:  # a __post_init__ that refuses the values
            raise Invalid(str(exc)) from None

    return build


def _is_fixed(origin: type, args: tuple[object, ...]) -> bool:
    """Whether a sequence hint is a tuple of so many values (``tuple[int, str]``)."""
    return origin is tuple and not (len(args) == 2 and args[1] is Ellipsis)


def _is_named_tuple(hint: object) -> bool:
    return isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields")


def _fields(hint: Any) -> list[tuple[str, object]]:
    hints = typing.get_type_hints(hint)
    if _is_named_tuple(hint):
        return [(name, hints[name]) for name in hint._fields]
    fields = dataclasses.fields(hint)
    if not all(field.init for field in fields):
        raise TypeError(f"{hint.__name__} has fields its __init__ does not take")
    return [(field.name, hints[field.name]) for field in fields]


@functools.cache
def _field_hints(hint: Any) -> tuple[object, ...]:
    return tuple(field for _, field in _fields(hint))


def _accepts(hint: object) -> Callable[[Any], bool]:
    """Whether a value is one of ``hint`` (a union's encoder picks its alternative with it)."""
    if hint is object:
        return lambda value: True
    if hint is int:  # a bool is an int to isinstance, but not to the decoder
        return lambda value: isinstance(value, int) and not isinstance(value, bool)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        tests = [_accepts(arg) for arg in typing.get_args(hint)]
        return lambda value: any(test(value) for test in tests)
    origin = typing.get_origin(hint)
    kind = origin if isinstance(origin, type) else typing.cast(type, hint)
    return lambda value: isinstance(value, kind)
