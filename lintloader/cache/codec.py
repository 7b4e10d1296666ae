"""Cache entries as plain data: JSON checked against a type on the way back in.

A cache entry is read back by a later run, possibly after someone else rewrote it, so reading
one must never run code (a pickle does, which is why lintloader no longer stores any). An entry
is a header line naming its kind, then compact JSON. What is read back is rebuilt along a type
hint (``tuple[Stamp, ...]``, a ``NamedTuple``, a dataclass...): every value must be exactly of
the type the hint names, or the whole entry is :class:`Invalid`, a miss.

How the hints map to JSON:

* ``str``, ``int``, ``bool``, ``float`` and ``None`` are themselves (``bool`` is never an ``int``);
* ``bytes``: a string of the bytes as Latin-1 characters;
* ``tuple``, ``list`` and ``frozenset``: an array; ``NamedTuple`` and dataclass records: an
  array of their fields, in order (every field of a dataclass must be an ``__init__`` field);
* ``dict[str, V]``: an object; a dict with other keys: an array of ``[key, value]`` pairs;
* an ``IntEnum``: its value; ``X | Y``: the first alternative that takes the value;
* ``object``: any JSON value, unchecked (the caller checks it).

Encoders and decoders are built once per hint. Reading is about as fast as unpickling was for
what warm runs read (columns of strings and ints, decoded by ``json`` in C).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import operator
import types
import typing
from collections.abc import Callable
from typing import Any

HEADER = b"lintloader-cache 1 "  # then the entry's kind, then a newline, then the JSON
Convert = Callable[[Any], Any]


class Invalid(ValueError):
    """A stored value that is not what the hint says: the entry is a miss."""


def dumps(kind: str, hint: object, value: object) -> bytes:
    """``value`` (of type ``hint``) as the bytes of an entry of ``kind``."""
    text = json.dumps(encoder(hint)(value), separators=(",", ":"), allow_nan=False)
    return HEADER + kind.encode("ascii") + b"\n" + text.encode("ascii")


def loads(kind: str, hint: object, data: bytes) -> Any:
    """The value stored in ``data`` as an entry of ``kind``; :class:`Invalid` when it is not
    one, or not of type ``hint``."""
    head = HEADER + kind.encode("ascii") + b"\n"
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
    if not _is_fixed(origin, args):
        item = encoder(args[0])
        return lambda value: [item(element) for element in value]
    items = [encoder(arg) for arg in args]
    return lambda value: [convert(element) for convert, element in zip(items, value, strict=True)]


def _dict_encoder(args: tuple[object, ...]) -> Convert:
    key, item = encoder(args[0]), encoder(args[1])
    if args[0] is str:
        return lambda value: {name: item(element) for name, element in value.items()}
    return lambda value: [[key(name), item(element)] for name, element in value.items()]


def _record_encoder(hint: Any) -> Convert:
    names = [name for name, _ in _fields(hint)]
    converts = [encoder(field) for field in _field_hints(hint)]
    pairs = list(zip(names, converts, strict=True))
    return lambda value: [convert(getattr(value, name)) for name, convert in pairs]


@functools.cache
def decoder(hint: object) -> Convert:
    """What rebuilds a value of type ``hint`` from JSON data, raising :class:`Invalid` for
    anything else."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is object:
        return _identity
    if hint in _SCALARS:
        return _scalar_decoder(hint)
    if hint is bytes:
        return _decode_bytes
    if isinstance(hint, type) and issubclass(hint, enum.IntEnum):
        return _enum_decoder(hint)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(args)
    if origin in (tuple, list, frozenset):
        return _sequence_decoder(origin, args)
    if origin is dict:
        return _dict_decoder(args)
    if _is_named_tuple(hint) or dataclasses.is_dataclass(hint):
        return _record_decoder(hint)
    raise TypeError(f"no cache decoding for {hint!r}")


def _scalar_decoder(kind: type) -> Convert:
    def decode(value: Any) -> Any:
        if type(value) is not kind:
            raise Invalid(f"{type(value).__name__}, not {kind.__name__}")
        return value

    return decode


def _decode_bytes(value: Any) -> bytes:
    if type(value) is not str:
        raise Invalid("not a byte string")
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        raise Invalid("not a byte string") from None


def _enum_decoder(kind: type[enum.IntEnum]) -> Convert:
    members = {member.value: member for member in kind}

    def decode(value: Any) -> Any:
        if type(value) is not int or value not in members:
            raise Invalid(f"not a {kind.__name__}")
        return members[value]

    return decode


def _union_decoder(args: tuple[object, ...]) -> Convert:
    """Plain scalar alternatives are taken by their type at once; the others are tried in
    order."""
    scalars = frozenset(typing.cast(type, arg) for arg in args if arg in _SCALARS)
    alternatives = [decoder(arg) for arg in args if arg not in _SCALARS]

    def decode(value: Any) -> Any:
        if type(value) in scalars:
            return value
        for alternative in alternatives:
            try:
                return alternative(value)
            except Invalid:
                continue
        raise Invalid(f"none of {args!r}")

    return decode


def _sequence_decoder(origin: type, args: tuple[object, ...]) -> Convert:
    if _is_fixed(origin, args):
        return _fixed_decoder(args)
    item = args[0]
    if item in (str, int, bool):  # columns of scalars: one type test per value
        return _scalar_column(origin, item)
    convert = decoder(item)

    def decode(value: Any) -> Any:
        if type(value) is not list:
            raise Invalid("not an array")
        return origin(map(convert, value))

    return decode


def _scalar_column(origin: type, item: type) -> Convert:
    def decode(value: Any) -> Any:
        if type(value) is not list or not set(map(type, value)) <= {item}:
            raise Invalid(f"not an array of {item.__name__}")
        return value if origin is list else origin(value)

    return decode


def _fixed_decoder(args: tuple[object, ...]) -> Convert:
    return _positional_decoder(args, tuple, "tuple")


def _positional_decoder(hints: tuple[object, ...], make: Convert, name: str) -> Convert:
    """Decode an array of ``len(hints)`` values into ``make(values)``. The positions of plain
    scalars are checked at once (their types, picked out in C); the others are converted.
    Most records are a few ints and strings, and there are tens of thousands of them."""
    plain = [index for index, hint in enumerate(hints) if hint in _SCALARS]
    expected = tuple(typing.cast(type, hints[index]) for index in plain)
    pick = _picker(plain)
    converted = [(index, decoder(hint)) for index, hint in enumerate(hints) if index not in plain]
    size = len(hints)
    if not converted:  # scalars only (a Site, a stat stamp): all checked in C

        def decode_plain(value: Any) -> Any:
            if type(value) is not list or tuple(map(type, value)) != expected:
                raise Invalid(f"not a {name}")
            return make(value)

        return decode_plain

    def decode(value: Any) -> Any:
        if type(value) is not list or len(value) != size:
            raise Invalid(f"not a {name}")
        kinds = list(map(type, value))
        if pick(kinds) != expected:
            raise Invalid(f"not a {name}")
        for index, convert in converted:
            value[index] = convert(value[index])
        return make(value)

    return decode


def _dict_decoder(args: tuple[object, ...]) -> Convert:
    item = decoder(args[1])
    if args[0] is str:

        def decode_object(value: Any) -> Any:
            if type(value) is not dict:
                raise Invalid("not an object")
            return {name: item(element) for name, element in value.items()}

        return decode_object
    pair = _fixed_decoder((args[0], args[1]))

    def decode_pairs(value: Any) -> Any:
        if type(value) is not list:
            raise Invalid("not an array of pairs")
        return dict(map(pair, value))

    return decode_pairs


def _picker(indices: list[int]) -> Callable[[list[Any]], tuple[Any, ...]]:
    """What picks the values at ``indices`` out of a list, as a tuple."""
    if len(indices) > 1:
        return operator.itemgetter(*indices)
    if indices:
        only = indices[0]
        return lambda values: (values[only],)
    return lambda values: ()


def _record_decoder(hint: Any) -> Convert:
    """A record's fields in order, each checked; made as its class makes it (a named tuple
    through ``tuple.__new__``, a dataclass through ``__init__``: its defaults apply to none)."""
    if _is_named_tuple(hint):
        return _positional_decoder(
            _field_hints(hint), functools.partial(tuple.__new__, hint), hint.__name__
        )

    def make(fields: list[Any]) -> Any:
        try:
            return hint(*fields)
        except (TypeError, ValueError) as exc:  # a __post_init__ that refuses the values
            raise Invalid(str(exc)) from None

    return _positional_decoder(_field_hints(hint), make, hint.__name__)


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
