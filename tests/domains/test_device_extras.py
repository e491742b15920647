"""The ``device`` extra (pint, geopy): imported only when a tool needs it, and its absence stops the run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.device import FULL_TOOLSET, build_base_world, run_tool_calls
from trace_envs.domains.device.extras import MissingExtraError


def test_importing_the_device_domain_loads_neither_pint_nor_geopy() -> None:
    code = (
        "import sys, json, trace_envs, trace_envs.domains.device, trace_envs.targets.device; "
        "print(json.dumps(sorted(m for m in ('pint', 'geopy') if m in sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []


@pytest.mark.parametrize(
    ("module", "tool", "arguments", "package"),
    [
        ("pint", "unit_conversion", {"amount": 1, "from_unit": "mile", "to_unit": "km"}, "pint"),
        (
            "geopy.distance",
            "calculate_lat_lon_distance",
            {"latitude_0": 0, "longitude_0": 0, "latitude_1": 1, "longitude_1": 1},
            "geopy",
        ),
    ],
)
def test_a_missing_library_raises_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch, module: str, tool: str, arguments: dict[str, object], package: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail as if it were not installed
    message = f'{tool} needs {package}, which is not installed: pip install "trace-envs[device]"'
    with pytest.raises(MissingExtraError) as raised:
        FULL_TOOLSET.execute(build_base_world(), ToolCall(id="c", name=tool, arguments=arguments))
    assert str(raised.value) == message
    with pytest.raises(MissingExtraError, match="trace-envs\\[device\\]"):  # not an observation for the agent
        run_tool_calls(build_base_world(), [{"name": tool, "arguments": arguments}])
