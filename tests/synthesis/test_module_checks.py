"""The library side of ``trace-envs validate``: reading a module, settling its target, naming what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.synthesis.module_checks import ModuleInputError, check_target, defines_no_env, read_module


def test_a_missing_file_and_a_non_env_name_the_module(tmp_path: Path) -> None:
    with pytest.raises(ModuleInputError, match="does not exist") as missing:
        read_module(tmp_path / "nope.py")
    (tmp_path / "plain.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(ModuleInputError, match="defines no env") as plain:
        read_module(tmp_path / "plain.py")
    assert missing.value.field == plain.value.field == "module"


def test_an_env_importing_no_target_kit_asks_for_the_target(tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text("from trace_envs.core import CapabilityEnv\n\nclass MineEnv(CapabilityEnv):\n    pass\n")
    with pytest.raises(ModuleInputError, match="cannot tell which target") as error:
        read_module(path)
    assert error.value.field == "target"
    module = read_module(path, target="device")
    assert (module.target, module.path) == ("device", path)


@pytest.mark.parametrize("shipped", ["generated_envs/order_cancel.py", "examples/library_env.py"])
def test_a_shipped_env_on_a_domain_of_its_own_is_an_env_with_no_target(shipped: str) -> None:
    """writing-an-env.md points to both; each subclasses ``CapabilityEnv[Knobs]`` on a domain of its own."""
    path = Path(__file__).parents[2] / shipped
    assert defines_no_env(path, path.read_text(encoding="utf-8")) is None
    with pytest.raises(ModuleInputError, match="imports no target's kit") as error:
        read_module(path)
    assert error.value.field == "target" and "property suite" in str(error.value)


def test_an_env_importing_several_target_kits_names_them(tmp_path: Path) -> None:
    path = tmp_path / "two.py"
    path.write_text(
        "from trace_envs.core import CapabilityEnv\nimport trace_envs.domains.retail\nimport trace_envs.domains.airline\n\n"
        "class TwoEnv(CapabilityEnv):\n    pass\n"
    )
    with pytest.raises(ModuleInputError, match="imports the kits of") as error:
        read_module(path)
    assert "--target" in str(error.value) and "retail" in str(error.value)


def test_an_unknown_target_and_broken_python() -> None:
    with pytest.raises(ModuleInputError) as error:
        check_target("no-such-target", data=False)
    assert error.value.field == "target"
    assert "not valid Python (line 1" in str(defines_no_env(Path("m.py"), "def (:\n"))
