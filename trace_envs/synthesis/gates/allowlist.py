"""The static gate's allow-list: exactly which names a generated env module may import, one declaration
that the gate, the generation prompt and the docs all read.

A name is allowed, not a module: ``from random import Random`` and ``random.Random`` pass, ``random.choice``
or ``typing.sys`` do not. The standard names are listed here by hand (each module's pure, clock-free,
I/O-free part); the target's kit (:attr:`~trace_envs.registry.targets.Target.kit`) exposes its public
API, read from the kit's own (trusted) modules: ``trace_envs.core`` exactly its ``__all__`` (the contract,
no submodules), every other kit module its ``__all__`` or else its public names, minus module objects,
anything that comes from a module off this list, and the helpers that import by string.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import types
from typing import Any

from .ast_names import exclusive_ast

CONTRACT = "trace_envs.core"
"""The contract package: a module imports exactly its ``__all__``, and none of its submodules."""

_MATH = (
    "ceil floor trunc sqrt isqrt exp log log2 log10 pow fabs fsum prod gcd lcm comb perm factorial isclose"
    " isfinite isinf isnan copysign hypot dist sin cos tan asin acos atan atan2 degrees radians pi e tau inf nan"
)
_RE = (
    "compile match fullmatch search findall finditer sub subn split escape Pattern Match error"
    " IGNORECASE I MULTILINE M DOTALL S VERBOSE X ASCII A"
)
_TYPING = (
    "TYPE_CHECKING Any Annotated Callable ClassVar Final Generic Iterable Iterator Literal Mapping NamedTuple"
    " Optional Protocol Self Sequence TypeAlias TypedDict TypeVar Union cast overload"
    " Dict List Set FrozenSet Tuple Type DefaultDict"
)
_ABC = (
    "Callable Collection Container Generator Hashable ItemsView Iterable Iterator KeysView Mapping"
    " MutableMapping MutableSequence MutableSet Sequence Set Sized ValuesView"
)
_PYDANTIC = (
    "BaseModel ConfigDict Field PrivateAttr RootModel ValidationError field_validator"
    " model_validator computed_field NonNegativeInt NonNegativeFloat PositiveInt PositiveFloat"
    " StrictBool StrictInt StrictFloat StrictStr conint confloat constr conlist"
)

STDLIB_NAMES: dict[str, frozenset[str]] = {
    module: frozenset(names.split())
    for module, names in {
        "__future__": "annotations",
        "random": "Random",
        "datetime": "MAXYEAR MINYEAR UTC date datetime time timedelta timezone",
        "math": _MATH,
        "re": _RE,
        "itertools": "accumulate chain combinations combinations_with_replacement compress count cycle"
        " dropwhile filterfalse groupby islice pairwise permutations product repeat starmap takewhile tee"
        " zip_longest",
        "functools": "cache cached_property cmp_to_key lru_cache partial reduce total_ordering",
        "collections": "ChainMap Counter OrderedDict defaultdict deque namedtuple",
        "collections.abc": _ABC,
        "dataclasses": "InitVar KW_ONLY asdict astuple dataclass field fields replace",
        "typing": _TYPING,
        "enum": "Enum IntEnum StrEnum Flag IntFlag auto unique",
        "string": "ascii_letters ascii_lowercase ascii_uppercase digits hexdigits octdigits punctuation"
        " whitespace printable capwords Template",
        "json": "dumps loads JSONDecodeError",
        "copy": "copy deepcopy",
        "operator": "abs add and_ concat contains eq floordiv ge gt itemgetter le lt mod mul ne neg not_ or_"
        " pos sub truediv truth xor",
        "bisect": "bisect bisect_left bisect_right insort insort_left insort_right",
        "heapq": "heapify heappop heappush heappushpop heapreplace merge nlargest nsmallest",
        "textwrap": "dedent fill indent shorten wrap",
        "decimal": "Decimal InvalidOperation ROUND_CEILING ROUND_DOWN ROUND_FLOOR ROUND_HALF_DOWN"
        " ROUND_HALF_EVEN ROUND_HALF_UP ROUND_UP",
        "fractions": "Fraction",
        "statistics": "fmean mean median median_high median_low mode multimode pstdev pvariance quantiles"
        " stdev variance",
        "calendar": "day_abbr day_name isleap leapdays month_abbr month_name monthcalendar monthrange weekday"
        " MONDAY TUESDAY WEDNESDAY THURSDAY FRIDAY SATURDAY SUNDAY",
        "pydantic": _PYDANTIC,
    }.items()
}
"""Standard (and pydantic) modules a capability env may import, each with exactly the names it may use."""

ALLOWED_STDLIB: dict[str, str] = {
    "__future__": "compiler switches only (annotations)",
    "random": "only random.Random, seeded from the rng generate() receives",
    "datetime": "date arithmetic on fixed dates; the clock reads (now, today, utcnow) are refused",
    "math": "pure functions",
    "re": "pure text matching",
    "itertools": "pure iteration helpers",
    "functools": "pure helpers (partial, reduce, lru_cache on pure functions)",
    "collections": "containers (Counter, OrderedDict, defaultdict, deque)",
    "collections.abc": "abstract container types for annotations",
    "dataclasses": "plain records",
    "typing": "annotations",
    "enum": "constants",
    "string": "character constants and $-templates (no Formatter: it walks attributes)",
    "json": "serialising data in memory (files cannot be opened: open is refused)",
    "copy": "copying state objects",
    "operator": "pure functions (no attrgetter or methodcaller: they reach attributes by computed names)",
    "bisect": "sorted-list search",
    "heapq": "priority queues",
    "textwrap": "formatting messages",
    "decimal": "exact money arithmetic (no getcontext: it changes process-wide state)",
    "fractions": "exact arithmetic",
    "statistics": "pure functions",
    "calendar": "weekday and month tables (it has no clock)",
    "pydantic": "state and task models, as the contract uses (no ImportString, no pydantic.v1)",
}
"""Why each module of :data:`STDLIB_NAMES` is safe: no I/O, clock, process or network."""

NAME_REASONS: dict[str, str] = {
    "attrgetter": "reaches attributes by computed names",
    "methodcaller": "calls methods by computed names",
    "ImportString": "imports whatever module a string names",
    "v1": "pydantic.v1's BaseSettings fills fields from the environment and secrets files",
    "getcontext": "changes process-wide decimal state",
    "Formatter": "walks attributes named inside format fields",
    "sys": "reaches interpreter internals",
    "builtins": "reaches open, exec and eval",
    "bltns": "is the builtins module (open, exec and eval)",
    "modules": "reaches every loaded module",
    "register_env": "imports whatever module its entry-point string names",
    "register_domain": "imports whatever module its factory string names",
    "resolve": "imports whatever module its string names",
    "require": "imports whatever module its string names",
}
"""Why the usual dangerous attributes of allowed modules are refused (other names: not on the allow-list)."""

IMPORT_BY_STRING: tuple[str, ...] = (
    "trace_envs.core:register_env",
    "trace_envs.core:register_domain",
    "trace_envs.core.capability:resolve",
    "trace_envs.registry:resolve",
    "trace_envs.registry.envs:resolve",
    "trace_envs.registry.targets:resolve",
    "trace_envs.domains.device.extras:require",
)
"""Helpers of our own package that import a module named by a string: never importable by an env module,
whichever kit module exports them."""

ALLOWED_DUNDER_METHODS = frozenset(
    {"__init__", "__post_init__", "__repr__", "__str__", "__eq__", "__hash__", "__lt__", "__le__", "__gt__"}
    | {"__ge__", "__len__", "__iter__", "__contains__", "__bool__", "__getitem__"}
)
"""Dunder methods a module may define (others, such as ``__del__``, ``__getattr__`` or ``__reduce__``, run
at times the env does not choose: at collection, on a failed lookup, on copy)."""


def stdlib_module(name: str) -> bool:
    """Whether ``name`` is one of the standard modules of :data:`STDLIB_NAMES` (exactly, not a submodule)."""
    return name in STDLIB_NAMES


def under(name: str, roots: tuple[str, ...]) -> bool:
    """Whether module ``name`` is one of ``roots`` or inside one."""
    return any(name == root or name.startswith(root + ".") for root in roots)


def kit_module(name: str, roots: tuple[str, ...]) -> bool:
    """Whether ``name`` is importable as a kit module: inside one of ``roots``, but never a submodule of the
    contract (:data:`CONTRACT` is imported by its ``__all__`` only)."""
    return under(name, roots) and not name.startswith(CONTRACT + ".")


@functools.cache
def _import_by_string() -> tuple[Any, ...]:
    """The objects :data:`IMPORT_BY_STRING` names (ours, so importing them is safe)."""
    found = []
    for reference in IMPORT_BY_STRING:
        module, _, attribute = reference.partition(":")
        try:
            found.append(getattr(importlib.import_module(module), attribute))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _from_allowed_place(value: Any, roots: tuple[str, ...]) -> bool:
    """A class or function defined in our package or a kit root, or an allowed standard name."""
    if not (inspect.isclass(value) or inspect.isroutine(value)):
        return True  # data: constants, records, domain objects
    origin = getattr(value, "__module__", None) or ""
    if under(origin, ("trace_envs", *roots)):
        return True
    name = getattr(value, "__name__", "")
    return any(name in STDLIB_NAMES.get(module, frozenset()) for module in (origin, origin.split(".")[0]))


@functools.cache
def kit_names(module: str, roots: tuple[str, ...]) -> frozenset[str]:
    """The names ``from module import name`` may bind for a kit module (empty when it cannot be imported)."""
    try:
        loaded = importlib.import_module(module)
    except Exception:  # a kit module that fails to import exposes nothing
        return frozenset()
    declared = getattr(loaded, "__all__", None)
    if module == CONTRACT or declared is not None:
        candidates = [str(name) for name in declared or ()]
    else:
        candidates = [name for name in vars(loaded) if not name.startswith("_")]
    unsafe = _import_by_string()
    allowed = set()
    for name in candidates:
        value = getattr(loaded, name, None)
        if isinstance(value, types.ModuleType) or any(value is helper for helper in unsafe):
            continue
        if _from_allowed_place(value, roots):
            allowed.add(name)
    return frozenset(allowed)


def allowed_names(module: str, roots: tuple[str, ...]) -> frozenset[str]:
    """Every name an env module may take from ``module`` (a standard module or a kit module)."""
    if module in STDLIB_NAMES:
        return STDLIB_NAMES[module]
    if kit_module(module, roots):
        with exclusive_ast():  # the first call imports the kit module (see exclusive_ast)
            return kit_names(module, roots)
    return frozenset()


def is_allowed_module(module: str, roots: tuple[str, ...]) -> bool:
    """Whether ``import module`` is allowed: an exact standard module or a kit module."""
    return stdlib_module(module) or kit_module(module, roots)


@functools.cache
def _exists(module: str) -> bool:
    """Whether ``module`` is a module (it may be a name inside one); only asked of kit paths, which are ours."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def is_allowed_submodule(module: str, roots: tuple[str, ...]) -> bool:
    """Whether ``module`` (``package.name``) is an allowed module that exists, not a name of its package."""
    return stdlib_module(module) or (kit_module(module, roots) and _exists(module))


def stdlib_summary() -> list[str]:
    """The standard names in words, one ``module: names`` entry per module (the prompt and docs list them)."""
    return [f"{module}: {', '.join(sorted(names))}" for module, names in STDLIB_NAMES.items()]
