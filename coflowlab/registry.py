"""The one registry of algorithms: every exact method, relaxation, bound, approximation and
online policy, described by one entry type.

Each family declares its entries where its code lives (``coflowlab.formulations.registry``,
``coflowlab.approximations.registry``, ``coflowlab.heuristics.registry``); this module merges
them into :data:`REGISTRY`, in that order, and refuses a name registered twice. Everything that
runs algorithms by name (``coflowlab solve``, ``simulate``, ``compare``, :func:`coflowlab.run`,
the property suites, the benchmarks) looks them up here.

Adding an algorithm means writing its module and adding one :class:`AlgorithmEntry` to its
family's registry; it then appears in ``solve --list`` or ``simulate --list``, runs through
:func:`coflowlab.run` and ``compare``, and joins the property suites of its family.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import import_module
from typing import Any

from .params import parameters_of
from .time_models import TimeModel

__all__ = [
    "REGISTRY",
    "AlgorithmEntry",
    "Family",
    "Paper",
    "Parameter",
    "algorithm_names",
    "get_entry",
    "register",
    "select",
]


class Family(StrEnum):
    """What an algorithm computes."""

    EXACT = "exact"
    """A proven optimum (with its gap when stopped early)."""
    RELAXATION = "relaxation"
    """An LP relaxation: a lower bound on the optimum."""
    BOUND = "bound"
    """A combinatorial lower bound."""
    APPROXIMATION = "approximation"
    """An offline schedule with a certified bound (and a proven guarantee, if any)."""
    ONLINE = "online"
    """An online policy, replayed by the event-driven simulator on the release dates."""


@dataclass(frozen=True)
class Paper:
    """The publication an algorithm implements.

    Examples
    --------
    >>> str(Paper("Chowdhury, Zhong, Stoica", "Efficient Coflow Scheduling with Varys",
    ...           "SIGCOMM", 2014))
    'Chowdhury, Zhong, Stoica, "Efficient Coflow Scheduling with Varys", SIGCOMM 2014'
    """

    authors: str
    title: str
    venue: str
    year: int

    def __str__(self) -> str:
        return f'{self.authors}, "{self.title}", {self.venue} {self.year}'


@dataclass(frozen=True)
class Parameter:
    """One parameter of an algorithm, as ``--param`` accepts it.

    Attributes
    ----------
    name, annotation, default
        From the signature of the function or class (``annotation`` as text).
    unit
        For online policies whose paper states a default in ms or MB: that unit; the default
        is converted to the instance's units when the instance has byte and time units.
    """

    name: str
    annotation: str
    default: Any
    unit: str | None = None


# not algorithm parameters: the instance, the solver settings (``options``) and the names of
# the settings inside them, so that ``--param mip_gap=...`` is pointed to ``--mip-gap``
RESERVED = ("instance", "options", "solver", "time_limit", "mip_gap", "threads", "log")


@dataclass(frozen=True)
class AlgorithmEntry:
    """One registered algorithm.

    Attributes
    ----------
    name
        Registry name (``--method``, ``--policy``, ``--algorithms``).
    family
        What it computes (:class:`Family`).
    target
        ``"package.module:attribute"``, imported on use, or the object itself (an algorithm
        registered at run time with :func:`register`): for offline families a function
        ``run(instance, *, options, **params) -> Solution``; for online policies a class
        following :class:`coflowlab.policy.Policy`.
    model
        The time model of its schedule or bound (online policies: the fluid model).
    summary
        One line for the listings.
    paper
        The publication it implements (``None`` for coflowlab's own formulations and the
        plain baselines).
    maximize
        Whether its objective is maximized (the deadline methods: coflows on time); all
        others minimize Σ w_j C_j.
    fixed
        Constructor arguments the name implies (``scf`` is Varys with the SCF order).
    ms_params, mb_params
        Online parameters whose paper defaults are in ms / MB.
    coflowsim
        The name of CoflowSim's counterpart (``--time-model coflowsim``), if it has one.
    """

    name: str
    family: Family
    target: str | Callable[..., Any]
    model: TimeModel
    summary: str
    paper: Paper | None = None
    maximize: bool = False
    fixed: dict[str, Any] = field(default_factory=dict)
    ms_params: tuple[str, ...] = ()
    mb_params: tuple[str, ...] = ()
    coflowsim: str | None = None

    @property
    def online(self) -> bool:
        """Whether it is an online policy (run by the simulator)."""
        return self.family is Family.ONLINE

    @property
    def clairvoyant(self) -> bool:
        """Whether it knows flow sizes in advance: offline methods always do; an online
        policy says so in its class (:class:`coflowlab.policy.Policy`)."""
        return not self.online or bool(getattr(self.load(), "clairvoyant", True))

    @property
    def is_lower_bound(self) -> bool:
        """Whether its value is a lower bound (relaxations and bounds)."""
        return self.family in (Family.RELAXATION, Family.BOUND)

    def load(self) -> Any:
        """The function or class the entry names."""
        if not isinstance(self.target, str):
            return self.target
        module, attr = self.target.split(":")
        return getattr(import_module(module), attr)

    def takes_options(self) -> bool:
        """Whether it runs an LP/MIP solver and so takes :class:`SolverOptions`."""
        return not self.online and "options" in inspect.signature(self.load()).parameters

    def parameters(self) -> tuple[Parameter, ...]:
        """Its parameters, with annotations, defaults and paper units.

        Examples
        --------
        >>> {p.name: p.unit for p in get_entry("varys").parameters() if p.unit}
        {'T': 'ms', 'delta': 'ms'}
        """
        target = self.load()
        signature = inspect.signature(target)
        names = [n for n in parameters_of(target, RESERVED) if n not in self.fixed]
        units = {**dict.fromkeys(self.ms_params, "ms"), **dict.fromkeys(self.mb_params, "MB")}
        out = []
        for n in names:
            p = signature.parameters[n]
            note = p.annotation if isinstance(p.annotation, str) else _name(p.annotation)
            default = None if p.default is p.empty else p.default
            out.append(Parameter(n, note, default, units.get(n)))
        return tuple(out)


def _name(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


_FAMILY_MODULES = (
    "coflowlab.formulations.registry",
    "coflowlab.approximations.registry",
    "coflowlab.heuristics.registry",
)


def _collect() -> dict[str, AlgorithmEntry]:
    merged: dict[str, AlgorithmEntry] = {}
    for module in _FAMILY_MODULES:
        for entry in import_module(module).ENTRIES:
            if entry.name in merged:
                raise ValueError(f"algorithm {entry.name!r} is registered twice (in {module})")
            merged[entry.name] = entry
    return merged


class _Registry(typing.Mapping[str, AlgorithmEntry]):
    """The merged registry, read from the family modules on first use (so that importing
    coflowlab stays light)."""

    _entries: dict[str, AlgorithmEntry] | None = None

    def entries(self) -> dict[str, AlgorithmEntry]:
        """The underlying dict (what :func:`register` adds to)."""
        if self._entries is None:
            self._entries = _collect()
        return self._entries

    def __getitem__(self, name: str) -> AlgorithmEntry:
        return self.entries()[name]

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self.entries())


REGISTRY: _Registry = _Registry()
"""Every registered algorithm by name, families in the order exact and relaxations and bounds
(formulations), approximations, online policies."""


def register(entry: AlgorithmEntry) -> AlgorithmEntry:
    """Adds an algorithm at run time (for example one written in a notebook), so that
    :func:`coflowlab.run`, ``compare`` and the listings know it. Returns the entry.

    Raises
    ------
    ValueError
        If the name is taken.

    Examples
    --------
    >>> from coflowlab.formulations.bounds import bound_release_rho
    >>> e = register(AlgorithmEntry("my-bound", Family.BOUND, bound_release_rho,
    ...                             TimeModel.FLUID, "Σ w (r + ρ), registered by hand"))
    >>> from coflowlab.instances.examples import fig_3_2
    >>> import coflowlab as cl
    >>> cl.run("my-bound", fig_3_2()).objective
    4.0
    >>> del REGISTRY.entries()["my-bound"]  # (cleaning up after the example)
    """
    entries = REGISTRY.entries()
    if entry.name in entries:
        raise ValueError(f"algorithm {entry.name!r} is registered already")
    entries[entry.name] = entry
    return entry


def get_entry(name: str) -> AlgorithmEntry:
    """The entry called ``name``.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.

    Examples
    --------
    >>> get_entry("sincronia").family.value
    'approximation'
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(REGISTRY)}") from None


def algorithm_names(*families: Family | str) -> list[str]:
    """The registered names of the given families (all when none is given), in order.

    Examples
    --------
    >>> "fair" in algorithm_names("online") and "fair" not in algorithm_names("exact")
    True
    """
    wanted = {Family(f) for f in families}
    return [n for n, e in REGISTRY.items() if not wanted or e.family in wanted]


def select(selector: str) -> list[str]:
    """The names a selector stands for: a family name (``online``, ``approximation``,
    ``relaxation``, ``bound``, ``exact``), ``all``, or one registered name.

    Examples
    --------
    >>> select("bound")
    ['bound-release-rho', 'bound-smith']
    """
    if selector == "all":
        return algorithm_names()
    if selector in Family.__members__.values() or selector in {f.value for f in Family}:
        return algorithm_names(selector)
    return [get_entry(selector).name]
