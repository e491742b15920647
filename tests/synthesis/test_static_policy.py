"""Gates 1 and 2 on small snippets: what they refuse, what they let through, and what they say."""

from __future__ import annotations

import pytest

from trace_envs.synthesis import GateContext
from trace_envs.synthesis.gates.static_policy import check_policy, parse_gate, static_policy_gate

CONTEXT = GateContext(target="retail")


def rules(source: str) -> set[str]:
    result = static_policy_gate(source, CONTEXT)
    return {f.rule for f in result.findings}


ALLOWED = {
    "seeded rng": "import random\nr = random.Random(7)\nx = r.choice([1, 2])\n",
    "rng argument": "def generate(self, rng):\n    return rng.choice([1, 2]) + rng.randint(1, 3)\n",
    "fixed dates": "from datetime import date, datetime, timedelta\nd = datetime(2024, 5, 15) + timedelta(days=3)\n",
    "super init": "class A(B):\n    def __init__(self):\n        super().__init__(seed=1)\n",
    "literal getattr": "v = getattr(obj, 'status', None)\n",
    "contract and domain": "from trace_envs.core import CapabilityEnv\nfrom trace_envs.domains.retail import RETAIL\n",
    "domain submodule": "from trace_envs.domains.retail.data_model import Order\n",
    "stdlib subset": "import math, re, json, itertools, functools, dataclasses, enum, string, typing\n"
    "from collections import Counter\nfrom collections.abc import Sequence\nfrom pydantic import BaseModel\n",
    "local hash variable": "hash = 'abc'\nprint(hash)\n",
    "main guard": "if __name__ == '__main__':\n    pass\n",
    "f-string": "name = 'x'\ntext = f'hello {name}'\n",
    "allowed module attributes": "import math\nimport datetime as dt\nx = math.sqrt(2) + dt.timedelta(days=1).days\n",
    "submodule chain": "import collections.abc\nT = collections.abc.Sequence\n",
    "contract by module path": "import trace_envs.core\nplan = trace_envs.core.Plan\n",
    "kit submodule as a module": "from trace_envs.domains.retail import records\nR = records.RetailRecords\n",
    "plain format fields": "text = 'Order {order} of {0}'.format(0, order='x')\n",
    "own private attribute": "class A:\n    def f(self):\n        return self._cache\n",
    "allowed dunder methods": "class A:\n    def __repr__(self):\n        return 'A'\n",
    "literal annotation": "from typing import Literal\nx: Literal['a', 'b'] = 'a'\n",
    "dict lookups by string": "table = {'a': 1}\nx = table['a']\n",
    "assigning own objects": "class A:\n    def f(self):\n        self.x = 1\n        d = {}\n        d['k'] = self\n",
    # issue 34: what the run-time-building rules must still let through
    "type of a value": "def f(x):\n    return type(x)\n",
    "type in isinstance and annotations": "def f(x: type, y: dict[str, type]) -> type:\n"
    "    return x if isinstance(x, type) and issubclass(x, (int, type)) else x\n",
    "template picked from a table": "T = ('Hi {name}.', 'Hello {name}.')\nG = {'a': 'it is {x}'}\n"
    "def f(rng, k):\n    return rng.choice(T).format(name='x') + G[k].format(x=1) + G.get(k, 'no {x}').format(x=2)\n",
    "template in an f-string": "def f(c):\n    done = f'Set {c} for {{day}}.'\n    return done.format(day=1)\n",
    "lone brace looked for": "def f(a):\n    return a.startswith('{') or a.strip().endswith(('}', ']')) or a == '{'\n",
    "local id in one function": "def f(id):\n    return id + 1\n",
    "enum class statement": "from enum import Enum\nclass E(Enum):\n    A = 1\nx = E('A') if False else E(1)\n",
    # issue 34, third round: pattern matching on public attributes and plain keys still passes
    "class pattern on public attributes": "def f(x):\n    match x:\n        case Order(status='pending', order_id=i):\n"
    "            return i\n        case {'open': 1, **rest}:\n            return rest\n",
    "a docstring naming a frame attribute": 'def f():\n    """Never reads gi_frame."""\n',
}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_ordinary_env_code_passes(name: str) -> None:
    assert rules(ALLOWED[name]) == set()


REFUSED = {
    # issue 34: a builtin's name bound in one scope switches no rule off elsewhere; names and templates built at
    # run time are refused
    # issue 34, third round: attributes read by name with no Attribute node
    "class pattern keyword": ("match g:\n    case object(gi_frame=f):\n        pass\n", "frame-attribute"),
    "nested class pattern": (
        "match g:\n    case object(x=object(f_builtins={'exec': e})):\n        pass\n",
        "frame-attribute",
    ),
    "class pattern dunder": ("match g:\n    case object(__class__=c):\n        pass\n", "dunder-attribute"),
    "class pattern private": ("match g:\n    case object(_secret=c):\n        pass\n", "private-attribute"),
    "pattern capture dunder": ("match g:\n    case [*__builtins__]:\n        pass\n", "dunder-name"),
    "mapping rest dunder": ("match g:\n    case {**__builtins__}:\n        pass\n", "dunder-name"),
    "pattern as dunder": ("match g:\n    case int() as __loader__:\n        pass\n", "dunder-name"),
    "except as dunder": ("try:\n    pass\nexcept Exception as __builtins__:\n    pass\n", "dunder-name"),
    "pydantic field named like a frame attribute": ("class M(BaseModel):\n    gi_frame: int\n", "frame-attribute"),
    "frame attribute as an alias string": ("x = Field(alias='f_globals')\n", "frame-attribute"),
    "frame attribute among namedtuple fields": ("P = namedtuple('P', 'a tb_frame')\n", "frame-attribute"),
    "frame attribute keyword": ("x = dict(f_back=1)\n", "frame-attribute"),
    "getattr parameter elsewhere": ("def f(getattr):\n    return 1\nx = getattr(obj, name)\n", "dynamic-attribute"),
    "getattr parameter": ("def f(getattr):\n    return getattr(obj, name)\n", "shadows-builtin"),
    "setattr local": ("def f():\n    setattr = print\n", "shadows-builtin"),
    "id parameter elsewhere": ("def f(id):\n    return id\nk = id(obj)\n", "nondeterministic-builtin"),
    "hash in a class body only": (
        "class A:\n    hash = 1\n    def f(self):\n        return hash('x')\n",
        "nondeterministic-builtin",
    ),
    "type with a namespace": ("S = type('S', (str,), {k: f})\n", "class-built-at-run-time"),
    "type as a value": ("make = type\nS = make('S', (), {})\n", "class-built-at-run-time"),
    "functional enum": ("from enum import Enum\nE = Enum('E', {k: 1})\n", "class-built-at-run-time"),
    "template built by concatenation": ("s = ('{0' + '.x}').format(obj)\n", "format-reach"),
    "template from a parameter": ("def f(t, o):\n    return t.format(o)\n", "format-reach"),
    "str.format as a value": ("f = str.format\n", "format-reach"),
    "template name rebound": ("T = 'a {x}'\nT = T + k\ns = T.format(x=o)\n", "format-reach"),
    "fragment of a field": ("a = '{0.'\n", "format-fragment"),
    "format taken by getattr": ("def f(t, o):\n    return getattr(t, 'format')(o)\n", "format-reach"),
    "builtin as a default": ("def f(x, hash=hash):\n    return hash(x)\n", "nondeterministic-builtin"),
    "lone closing brace": ("b = x + '}'\n", "format-fragment"),
    "import os": ("import os\n", "forbidden-import"),
    "from os import path": ("from os import path\n", "forbidden-import"),
    "another domain": ("from trace_envs.domains.airline import AIRLINE\n", "forbidden-import"),
    "the testing package": ("import trace_envs.testing\n", "forbidden-import"),
    "relative import": ("from . import helpers\n", "relative-import"),
    "star import": ("from trace_envs.core import *\n", "star-import"),
    "module random function": ("import random\nx = random.random()\n", "global-rng"),
    "aliased random": ("import random as r\nx = r.shuffle([1])\n", "global-rng"),
    "from random import": ("from random import choice\n", "global-rng"),
    "random.seed": ("import random\nrandom.seed(3)\n", "global-rng"),
    "unseeded Random": ("import random\nr = random.Random()\n", "global-rng"),
    "random function as value": ("import random\npick = random.choice\n", "global-rng"),
    "date.today": ("from datetime import date\nd = date.today()\n", "wall-clock"),
    "datetime.datetime.utcnow": ("import datetime\nd = datetime.datetime.utcnow()\n", "wall-clock"),
    "from datetime import now": ("import datetime as dt\nd = dt.datetime.now()\n", "wall-clock"),
    "getattr clock": ("from datetime import datetime\nf = getattr(datetime, 'now')\n", "wall-clock"),
    "open": ("data = open('/etc/passwd').read()\n", "forbidden-name"),
    "exec": ("exec('x = 1')\n", "forbidden-name"),
    "compile": ("c = compile('1', 'f', 'eval')\n", "forbidden-name"),
    "__import__": ("m = __import__('os')\n", "forbidden-name"),
    "globals": ("g = globals()\n", "forbidden-name"),
    "vars": ("v = vars(obj)\n", "forbidden-name"),
    "hash": ("k = hash('x')\n", "nondeterministic-builtin"),
    "hash as key": ("k = sorted(['b', 'a'], key=hash)\n", "nondeterministic-builtin"),
    "id": ("k = id(obj)\n", "nondeterministic-builtin"),
    "computed getattr": ("f = getattr(obj, 'op' + 'en')\n", "dynamic-attribute"),
    "computed setattr": ("setattr(obj, name, 1)\n", "dynamic-attribute"),
    "getattr as value": ("g = getattr\n", "dynamic-attribute"),
    "dunder getattr": ("g = getattr(obj, '__class__')\n", "dunder-attribute"),
    "dunder attribute": ("c = obj.__class__\n", "dunder-attribute"),
    "dunder on super other than init": ("x = super().__getattribute__('a')\n", "dunder-attribute"),
    "__builtins__": ("b = __builtins__\n", "dunder-name"),
    "frame walk": ("def g():\n    yield 1\nf = g().gi_frame.f_globals\n", "frame-attribute"),
    "dunder string key": ("x = table['__builtins__']\n", "dunder-string"),
    "format-string attribute walk": ("s = '{0.__class__}'.format(obj)\n", "dunder-string"),
    "typing.sys": ("import typing\nm = typing.sys\n", "name-not-allowed"),
    "from-import of a name not listed": ("from random import SystemRandom\n", "global-rng"),
    "attrgetter": ("import operator\nf = operator.attrgetter('x')\n", "name-not-allowed"),
    "methodcaller": ("from operator import methodcaller\n", "name-not-allowed"),
    "module as argument": ("import json\nprint(json)\n", "module-as-value"),
    "module alias rebound": ("import json\njson = 3\n", "module-rebound"),
    "module name as parameter": ("import json\ndef f(json):\n    return json.sys\n", "module-rebound"),
    "submodule as value": ("import collections.abc\nm = collections.abc\n", "module-as-value"),
    "contract submodule": ("from trace_envs.core.domain import get_domain\n", "forbidden-import"),
    "contract name not exported": ("from trace_envs.core import templates\n", "name-not-allowed"),
    "kit module object": ("from trace_envs.domains.retail.records import random\n", "name-not-allowed"),
    "pydantic ImportString": ("import pydantic\nx = pydantic.ImportString\n", "name-not-allowed"),
    "pydantic.v1": ("import pydantic.v1\n", "forbidden-import"),
    "private attribute": ("x = obj._secret\n", "private-attribute"),
    "private getattr": ("x = getattr(obj, '_secret')\n", "private-attribute"),
    "dunder method": ("class A:\n    def __getattr__(self, name):\n        return 1\n", "dunder-method"),
    "format attribute field": ("s = '{0.name}'\n", "format-reach"),
    "format index field": ("s = '{0[key]}'\n", "format-reach"),
    "nested format field": ("s = '{0:{1.width}}'\n", "format-reach"),
    "format_map": ("s = '{a}'.format_map(m)\n", "format-reach"),
    "quoted annotation": ("x: 'pydantic.ImportString' = 1\n", "quoted-annotation"),
    "quoted annotation inside a subscript": ("def f(x: list['Any']) -> None: ...\n", "quoted-annotation"),
    "forward reference in a generic": (
        "from pydantic import RootModel\nM = RootModel['pydantic.ImportString']\n",
        "quoted-annotation",
    ),
    "pydantic TypeAdapter": ("from pydantic import TypeAdapter\n", "name-not-allowed"),
    "patching an imported class": (
        "from trace_envs.core import CapabilityEnv\nCapabilityEnv.verify = lambda self: 1.0\n",
        "patches-import",
    ),
    "patching a kit table": (
        "from trace_envs.domains.retail import RETAIL_TOOLS\nRETAIL_TOOLS['x'] = 1\n",
        "patches-import",
    ),
    "patching a standard module": ("import json\njson.loads = len\n", "patches-import"),
    "setattr on an import": (
        "from trace_envs.domains.retail import RETAIL\nsetattr(RETAIL, 'policy', '')\n",
        "patches-import",
    ),
    "global statement": ("count = 0\ndef bump():\n    global count\n    count += 1\n", "global-state"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_forbidden_constructs_are_reported(name: str) -> None:
    source, rule = REFUSED[name]
    assert rule in rules(source)


def test_a_finding_names_the_line_the_construct_and_the_fix() -> None:
    source = "import random\n\n\ndef generate(rng):\n    return random.choice([1, 2])\n"
    (finding,) = static_policy_gate(source, CONTEXT).findings
    assert finding.line == 5
    assert finding.subject == "random.choice"
    assert "rng.choice" in finding.fix
    assert finding.render().startswith("line 5: random.choice: random.choice uses the process-wide random generator")


def test_the_allow_list_follows_the_target() -> None:
    source = "from trace_envs.domains.airline import AIRLINE\n"
    assert static_policy_gate(source, GateContext(target="airline")).passed
    assert not static_policy_gate(source, GateContext(target="retail")).passed


def test_one_finding_per_construct_and_line_in_line_order() -> None:
    import ast

    source = "import os\nimport os\nx = open('a')\n"
    findings = check_policy(ast.parse(source), source, "retail")
    assert [(f.line, f.rule) for f in findings] == [
        (1, "forbidden-import"),
        (2, "forbidden-import"),
        (3, "forbidden-name"),
    ]


def test_a_dunder_inside_an_f_string_is_reported_at_its_line() -> None:
    source = "x = 1\n\ny = f'{x}__import__'\nz = f'{x.__class__}'\nw = f'{x} is fine'\n"
    found = {(f.line, f.rule) for f in static_policy_gate(source, CONTEXT).findings}
    assert found == {(3, "dunder-string"), (4, "dunder-attribute")}


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("def f(:\n    pass\n", "invalid syntax"),
        ("return 3\n", "'return' outside function"),
        ("x = 1\x00\n", "null bytes"),
        ("x = 1\n" * 60_000, "more than the 300,000 allowed"),
    ],
)
def test_the_parse_gate_reports_what_does_not_compile(source: str, text: str) -> None:
    result = parse_gate(source, CONTEXT)
    assert result.status == "failed"
    assert text in result.findings[0].render()


def test_the_allow_list_and_the_prompt_come_from_the_targets_kit(monkeypatch: pytest.MonkeyPatch) -> None:
    """One declaration: a target whose kit adds a module lets modules import it, and the prompt says so."""
    import dataclasses

    from trace_envs.registry import targets as registry
    from trace_envs.synthesis import SynthesisRequest, generation_prompt

    source = "from trace_envs.domains.tau2_records import money\n"
    assert rules(source) == {"forbidden-import"}
    retail = registry.target("retail")
    wider = dataclasses.replace(retail, kit=(*retail.kit, "trace_envs.domains.tau2_records"))
    monkeypatch.setitem(registry._REGISTRY, "retail", wider)
    assert rules(source) == set()
    prompt = generation_prompt(SynthesisRequest(capability="refund_check", description="x", target="retail"))
    rule = next(line for line in prompt.splitlines() if line.startswith("1. Imports:"))
    assert "`trace_envs.domains.tau2_records`" in rule and "`trace_envs.domains.retail`" in rule
    assert "from `generated_envs`" not in prompt  # the helpers the examples use are the kit's
    narrower = dataclasses.replace(retail, kit=("trace_envs.core",))
    monkeypatch.setitem(registry._REGISTRY, "retail", narrower)
    finding = static_policy_gate("from trace_envs.domains.retail import RETAIL\n", CONTEXT).findings[0]
    assert "kit (trace_envs.core)" in finding.message


@pytest.mark.parametrize("target", ["airline", "retail", "device"])
def test_the_shipped_envs_the_prompt_shows_and_the_catalogues_modules_pass(target: str) -> None:
    """The allow-list fits what we ship: the envs that import only their target's kit stay within it (the
    prompt's worked examples), and every catalogue module passes with the installed env packages trusted."""
    import inspect
    from pathlib import Path

    from trace_envs.synthesis.generation.catalogue import CatalogueGenerator, catalogue_source
    from trace_envs.synthesis.generation.prompt import shipped_envs, within_kit

    within = {
        "retail": {"trace/retail-order-cancel-v0"},
        "device": {"trace/datetime-v0", "trace/permission-recovery-v0"},
    }
    shown = set()
    for env_id, cls in shipped_envs(target):
        module = inspect.getmodule(cls)
        assert module is not None and module.__file__ is not None
        if within_kit(Path(module.__file__).read_text(encoding="utf-8"), target):
            shown.add(env_id)
    assert shown >= within.get(target, set())
    context = GateContext(target=target, trusted_imports=CatalogueGenerator().trusted_imports)
    for capability in sorted({cls.capability.name for _, cls in shipped_envs(target)}):  # type: ignore[attr-defined]
        source = catalogue_source(capability, target)
        for gate in (parse_gate, static_policy_gate):
            assert gate(source, context).passed, (capability, [f.render() for f in gate(source, context).findings])


def test_a_kit_modules_import_by_string_helper_and_module_objects_are_refused() -> None:
    """The device kit's ``extras`` imports by string (``require``) and holds ``importlib``: neither is a name a
    generated module may take, by name or through the submodule."""
    context = GateContext(target="device")
    for source in (
        "from trace_envs.domains.device.extras import require\n",
        "from trace_envs.domains.device import extras\nx = extras.importlib\n",
        "from trace_envs.domains.device import extras\nx = extras.require\n",
    ):
        assert {f.rule for f in static_policy_gate(source, context).findings} == {"name-not-allowed"}, source
    assert static_policy_gate("from trace_envs.domains.device.extras import MissingExtraError\n", context).passed
