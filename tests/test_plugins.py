"""Envs from plugins: the ``trace_envs.envs`` entry points (the shipped envs are one), ``load_envs(folder)``
and ``$TRACE_ENVS_PATH``."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import gymnasium as gym
import pytest

import trace_envs
from generated_envs import SHIPPED_ENVS
from trace_envs.box import BoxedEnv
from trace_envs.registry.sources import ENTRY_POINT_GROUP, PATH_VARIABLE, loaded_folders
from trace_envs.rollout import play_actions

from .conftest import REPO_ROOT, vouching_entry

RENAMED_ENV = '''
"""An env module of a folder: a shipped env under a new capability name."""

from generated_envs.order_cancel import OrderCancelEnv
from trace_envs.core import Capability


class PluginOrderCancelEnv(OrderCancelEnv):
    capability = Capability(name="plugin_order_cancel", description="Cancel the order the user names.")
'''


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """Forget the ``trace/`` ids a test registers."""
    before = set(gym.registry)
    yield
    for env_id in set(gym.registry) - before:
        del gym.registry[env_id]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=REPO_ROOT,
        check=False,
    )


def test_the_shipped_envs_are_a_plugin() -> None:
    points = {p.name: p.value for p in entry_points(group=ENTRY_POINT_GROUP)}
    assert points.get("shipped") == "generated_envs:register", (
        f"the installed metadata lacks the {ENTRY_POINT_GROUP!r} entry point: reinstall with `pip install -e .`"
    )
    assert set(SHIPPED_ENVS) <= set(trace_envs.list_envs())


def test_a_third_party_package_registers_through_the_entry_point_group(tmp_path: Path) -> None:
    (tmp_path / "thirdparty_envs.py").write_text(
        "from trace_envs import register_env\n\n"
        "def register():\n"
        "    register_env('trace/third-party-v0', 'generated_envs.order_cancel:OrderCancelEnv')\n",
        encoding="utf-8",
    )
    (tmp_path / "broken_envs.py").write_text("def register():\n    raise RuntimeError('no licence file')\n")
    for name, value in (("thirdparty-envs", "thirdparty_envs:register"), ("broken-envs", "broken_envs:register")):
        meta = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
        (meta / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{name} = {value}\n", encoding="utf-8")
    result = run_python(
        "import json, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import trace_envs\n"
        "print(json.dumps([trace_envs.list_envs(), [str(w.message) for w in caught]]))",
        PYTHONPATH=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    ids, warned = json.loads(result.stdout)
    assert "trace/third-party-v0" in ids and "trace/order-cancel-v0" in ids
    assert len(warned) == 1 and "'broken-envs'" in warned[0] and "no licence file" in warned[0]


@pytest.mark.usefixtures("clean_registry")
@pytest.mark.parametrize("boxed", [True, False])
def test_load_envs_registers_the_envs_a_folder_defines(tmp_path: Path, boxed: bool) -> None:
    (tmp_path / "renamed.py").write_text(RENAMED_ENV, encoding="utf-8")
    (tmp_path / "named.py").write_text(RENAMED_ENV + '\nENV_ID = "trace/named-by-module-v0"\n', encoding="utf-8")
    (tmp_path / "_helpers.py").write_text("raise RuntimeError('helpers are not env modules')\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a module", encoding="utf-8")
    ids = trace_envs.load_envs(tmp_path, boxed=boxed)
    assert ids == ["trace/named-by-module-v0", "trace/plugin-order-cancel-v0"]  # not the imported base class
    assert trace_envs.load_envs(str(tmp_path), boxed=boxed) == ids  # again: nothing new, no conflict
    assert str(tmp_path.resolve()) in loaded_folders(boxed=boxed)
    assert str(tmp_path.resolve()) not in loaded_folders(boxed=not boxed)
    env = gym.make("trace/plugin-order-cancel-v0")
    assert isinstance(env.unwrapped, BoxedEnv) == boxed  # boxed by default; imported only when asked
    _, info = env.reset(seed=4)
    assert info["capability"] == "plugin_order_cancel"
    reward, _ = play_actions(env, env.unwrapped.oracle_actions(), seed=4)  # type: ignore[attr-defined]
    assert reward == 1.0
    env.close()


@pytest.mark.usefixtures("clean_registry")
def test_a_folder_is_boxed_from_the_text_read_at_load_time(tmp_path: Path) -> None:
    marker = tmp_path / "ran-here"
    payload = f"\ntry:\n    open({str(marker)!r}, 'w').write('imported')\nexcept Exception:\n    pass\n"
    source = RENAMED_ENV + payload
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "renamed.py").write_text(source, encoding="utf-8")
    (env_id,) = trace_envs.load_envs(tmp_path / "mine")
    (tmp_path / "mine" / "renamed.py").write_text(RENAMED_ENV + "\nraise RuntimeError('the edit ran')\n")
    env = gym.make(env_id).unwrapped
    assert isinstance(env, BoxedEnv) and env.source == source and not marker.exists()
    assert env.source_sha256 == hashlib.sha256(source.encode("utf-8")).hexdigest()
    env.reset(seed=1)
    assert play_actions(env, env.oracle_actions(), seed=1)[0] == 1.0  # the text read at load time, not the edit
    env.close()


@pytest.mark.usefixtures("clean_registry")
def test_two_folders_of_one_capability_load_side_by_side_under_prefixed_ids(tmp_path: Path) -> None:
    for target in ("retail", "airline"):
        (tmp_path / target).mkdir()
        (tmp_path / target / "renamed.py").write_text(RENAMED_ENV + f"\nTARGET = {target!r}\n", encoding="utf-8")
    assert trace_envs.load_envs(tmp_path / "retail", id_prefix="retail") == ["trace/retail-plugin-order-cancel-v0"]
    assert trace_envs.load_envs(tmp_path / "airline", id_prefix="airline") == ["trace/airline-plugin-order-cancel-v0"]
    trace_envs.load_envs(tmp_path / "retail")
    with pytest.raises(ValueError, match="already registered"):  # without a prefix the second folder's id clashes
        trace_envs.load_envs(tmp_path / "airline")


@pytest.mark.usefixtures("clean_registry")
def test_load_envs_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="is not a folder"):
        trace_envs.load_envs(tmp_path / "missing")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "typo.py").write_text("from trace_envs.core import CapabilityEnvv\n", encoding="utf-8")
    with pytest.raises(ImportError, match=r"typo\.py failed in its box: ImportError"):
        trace_envs.load_envs(broken)
    with pytest.raises(ImportError, match=r"typo\.py failed to import: ImportError"):
        trace_envs.load_envs(broken, boxed=False)
    clash = tmp_path / "clash"
    clash.mkdir()
    (clash / "clash.py").write_text(RENAMED_ENV + '\nENV_ID = "trace/order-cancel-v0"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"already registered to 'generated_envs\.order_cancel:OrderCancelEnv'"):
        trace_envs.load_envs(clash)
    two = tmp_path / "two"
    two.mkdir()
    (two / "two.py").write_text(
        RENAMED_ENV + "\nclass Other(PluginOrderCancelEnv):\n    pass\n\nENV_ID = 'trace/x-v0'\n", encoding="utf-8"
    )
    with pytest.raises(
        ImportError, match="must define exactly one concrete CapabilityEnv subclass; found Other, "
    ) as two_envs:
        trace_envs.load_envs(two)
    assert str(two_envs.value).endswith(
        "split it, or load a folder of your own trusted code with load_envs(folder, boxed=False)"
    )
    with pytest.raises(ValueError, match="sets ENV_ID but defines 2 envs"):
        trace_envs.load_envs(two, boxed=False)


def test_the_path_variable_is_loaded_boxed_on_import(tmp_path: Path) -> None:
    marker = tmp_path / "ran-here"
    payload = f"\ntry:\n    open({str(marker)!r}, 'w').write('imported')\nexcept Exception:\n    pass\n"
    (tmp_path / "renamed.py").write_text(RENAMED_ENV + payload, encoding="utf-8")
    code = (
        "import sys, gymnasium as gym, trace_envs\n"
        "from trace_envs.box import BoxedEnv\n"
        "env = gym.make('trace/plugin-order-cancel-v0').unwrapped\n"
        "print(isinstance(env, BoxedEnv), any('renamed' in name for name in sys.modules))"
    )
    made = run_python(code, **{PATH_VARIABLE: f"{tmp_path}{os.pathsep}"})
    assert made.stdout.split() == ["True", "False"], made.stderr[-2000:]
    assert not marker.exists()  # the module never ran in the process that imported trace_envs
    missing = run_python(code, **{PATH_VARIABLE: str(tmp_path / "missing")})
    assert missing.returncode != 0 and f"${PATH_VARIABLE}: " in missing.stderr and "is not a folder" in missing.stderr


def synthesis_folder(folder: Path, source: str) -> Path:
    """A folder as ``trace-envs synthesize`` writes it: one module and a manifest vouching for it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "renamed.py").write_text(source, encoding="utf-8")
    entry = vouching_entry("renamed.py", source)
    manifest = {"format": "trace-envs/synthesis@1", "modules": {"renamed.py": entry}, "rejected": {}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


@pytest.mark.usefixtures("clean_registry")
def test_a_synthesis_folder_loads_only_the_modules_its_manifest_vouches_for(tmp_path: Path) -> None:
    from trace_envs.registry.manifest import UnvalidatedModule

    vouched = synthesis_folder(tmp_path / "vouched", RENAMED_ENV)
    assert trace_envs.load_envs(vouched) == ["trace/plugin-order-cancel-v0"]
    edited = synthesis_folder(tmp_path / "edited", RENAMED_ENV)
    (edited / "renamed.py").write_text(RENAMED_ENV + "\nSNEAKY = 1\n", encoding="utf-8")
    with pytest.raises(UnvalidatedModule, match=r"renamed\.py was edited since it was validated") as refused:
        trace_envs.load_envs(edited)
    assert "trace-envs validate" in str(refused.value)
    extra = synthesis_folder(tmp_path / "extra", RENAMED_ENV)
    (extra / "unlisted.py").write_text(RENAMED_ENV, encoding="utf-8")
    with pytest.raises(UnvalidatedModule, match=r"unlisted\.py is not in .*manifest\.json"):
        trace_envs.load_envs(extra)
    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text('{"name": "another tool"}', encoding="utf-8")
    assert trace_envs.load_envs(other) == []  # not a synthesis manifest: no check


def test_the_path_variable_refuses_an_edited_module_too(tmp_path: Path) -> None:
    folder = synthesis_folder(tmp_path / "envs", RENAMED_ENV)
    (folder / "renamed.py").write_text(RENAMED_ENV.replace("Cancel the order", "Cancel any order"), encoding="utf-8")
    refused = run_python("import trace_envs", **{PATH_VARIABLE: str(folder)})
    assert refused.returncode != 0 and "was edited since it was validated" in refused.stderr
