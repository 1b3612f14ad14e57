"""The one converter from parameter text (``--param key=value``, ``varys:starvation=false``)
to typed values, driven by the annotation of the function or class that takes the parameter.

Every entry point that accepts parameters as text (``coflowlab solve``, ``simulate``,
``compare``, :func:`coflowlab.run`) goes through :func:`convert`, so they all accept the same
spellings: booleans as ``true/false``, ``yes/no``, ``on/off`` or ``1/0``; ``none`` for an
optional parameter; a ``Literal`` only among its values; unions such as ``int | Generator``
as their first scalar type.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["convert", "convert_params", "parse_assignments", "parse_spec"]

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_SCALARS = {"float": float, "int": int, "bool": bool, "str": str}


def convert(text: str, annotation: Any, name: str) -> Any:
    """``text`` converted to the type ``annotation`` names.

    Without an annotation (``None`` or ``inspect.Parameter.empty``), ``text`` is read as a
    boolean, integer or number when it spells one, else kept as text.

    Raises
    ------
    ValueError
        Naming the parameter, the text and what was expected.

    Examples
    --------
    >>> convert("off", bool, "starvation"), convert("3", int | None, "seed")
    (False, 3)
    >>> convert("none", float | None, "T") is None
    True
    >>> convert("2.5", None, "x"), convert("abc", None, "x")
    (2.5, 'abc')
    >>> convert("1:10", tuple[float, float], "sizes")
    (1.0, 10.0)
    >>> convert("x", typing.Literal["greedy", "madd"], "allocation")
    Traceback (most recent call last):
    ...
    ValueError: parameter allocation: 'x' is not one of greedy, madd
    """
    if annotation is None or annotation is inspect.Parameter.empty:
        return _guess(text)
    if isinstance(annotation, str):  # an unresolved annotation: its first scalar name
        annotation = _SCALARS.get(annotation.split("|")[0].strip(), str)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if type(None) in options and text.strip().lower() == "none":
            return None
        scalars = [t for t in options if t in (bool, int, float, str)]
        literals = [t for t in options if typing.get_origin(t) is typing.Literal]
        others = [t for t in options if t is not type(None)]
        annotation = (scalars or literals or others or [str])[0]
        origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        allowed = typing.get_args(annotation)
        if text not in allowed:
            raise ValueError(
                f"parameter {name}: {text!r} is not one of {', '.join(map(str, allowed))}"
            )
        return text
    if annotation is bool:
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"parameter {name}: {text!r} is not true or false")
    if origin is tuple:  # e.g. sizes: tuple[float, float], spelled "1:10" or "1,10"
        kinds = [k for k in typing.get_args(annotation) if k is not Ellipsis]
        parts = [p for p in text.replace(",", ":").split(":") if p.strip()]
        if len(kinds) == 2 and Ellipsis in typing.get_args(annotation):
            kinds = kinds * len(parts)
        if len(parts) != len(kinds):
            raise ValueError(
                f"parameter {name}: {text!r} is not {len(kinds)} values separated by ':'"
            )
        return tuple(convert(p, k, name) for p, k in zip(parts, kinds, strict=True))
    if annotation in (int, float):
        try:
            return annotation(text)
        except ValueError:
            what = "an integer" if annotation is int else "a number"
            raise ValueError(f"parameter {name}: {text!r} is not {what}") from None
    return text


def _guess(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def convert_params(
    target: Callable[..., Any],
    params: Mapping[str, Any],
    *,
    owner: str,
    reserved: tuple[str, ...] = (),
) -> dict[str, Any]:
    """``params`` checked against ``target``'s signature, text values converted with its
    annotations (other values pass unchanged).

    Parameters
    ----------
    target
        The function or class that will receive the parameters.
    params
        Name to value (text or already typed).
    owner
        How errors name the target (``"policy 'varys'"``).
    reserved
        Names that are not parameters even if the signature has them (the instance, solver
        options).

    Examples
    --------
    >>> def f(instance, *, alpha: float = 0.5, mode: str = "a"): ...
    >>> convert_params(f, {"alpha": "0.25"}, owner="f", reserved=("instance",))
    {'alpha': 0.25}
    >>> convert_params(f, {"beta": "1"}, owner="f", reserved=("instance",))
    Traceback (most recent call last):
    ...
    ValueError: f has no parameter 'beta'; it takes: alpha, mode
    """
    takes = parameters_of(target, reserved)
    signature = inspect.signature(target)
    open_ended = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    init = target.__init__ if isinstance(target, type) else target  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # annotations that do not resolve: read the text as a literal
        hints = {}
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key in reserved or (key not in takes and not open_ended):
            listing = f"it takes: {', '.join(takes)}" if takes else "it takes no parameters"
            raise ValueError(f"{owner} has no parameter {key!r}; {listing}")
        out[key] = convert(value, hints.get(key), key) if isinstance(value, str) else value
    return out


def parameters_of(target: Callable[..., Any], reserved: tuple[str, ...] = ()) -> list[str]:
    """The keyword parameters of ``target`` (a function or class), without ``reserved``."""
    return [
        p.name
        for p in inspect.signature(target).parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in reserved
    ]


def parse_assignments(
    pairs: list[str] | tuple[str, ...], *, what: str = "--param"
) -> dict[str, str]:
    """``["k=v", ...]`` as a dict of text values.

    Examples
    --------
    >>> parse_assignments(["alpha=0.5", " seed = 3 "])
    {'alpha': '0.5', 'seed': '3'}
    """
    out: dict[str, str] = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """An algorithm spelled with its parameters, ``name:key=value,key=value``, as the name and
    its text parameters.

    Examples
    --------
    >>> parse_spec("varys:starvation=false,T=1000")
    ('varys', {'starvation': 'false', 'T': '1000'})
    >>> parse_spec("fair")
    ('fair', {})
    """
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"algorithm {spec!r}: no name before ':'")
    pairs = [p for p in rest.split(",") if p.strip()] if rest else []
    return name, parse_assignments(pairs, what=f"algorithm {name!r}")
