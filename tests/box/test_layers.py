"""Boxes fail closed: where this host lacks a kernel layer, no box starts and the error names the layer and
``--weaker-box``; with ``weaker_box`` (limits, ``load_envs``, ``validate_modules``, the CLI) boxes start and
name the layers they had."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import trace_envs
from trace_envs.box import BoxLayerMissing, BoxLimits, BoxProcess, client, default_pool
from trace_envs.box.layers import REQUIRED, host_layers, missing_layers
from trace_envs.box.limits import WEAKER_BOX_VARIABLE
from trace_envs.box.protocol import Reset

from .conftest import GOOD, synthesis_folder

LACKING = ["seccomp filter (libseccomp is not installed (apt-get install libseccomp2))"]


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """No weaker box allowed in this process (whatever ran before), restored afterwards."""
    monkeypatch.setenv(WEAKER_BOX_VARIABLE, "0")
    pool = default_pool()
    monkeypatch.setattr(pool, "limits", pool.limits.model_copy(update={"weaker_box": False}))


@pytest.fixture
def host_lacks_seccomp(monkeypatch: pytest.MonkeyPatch, strict: None) -> None:
    """This host, as one without libseccomp would look to the box's launcher."""
    monkeypatch.setattr(client, "missing_layers", lambda namespaces=True: list(LACKING))


def test_this_host_has_every_layer_or_names_what_it_lacks() -> None:
    found = host_layers()
    assert set(found) == set(REQUIRED)
    assert [m.split(" (")[0] for m in missing_layers()] == [name for name in REQUIRED if found[name] is not None]
    assert all(name in " ".join(missing_layers(namespaces=False)) for name in REQUIRED[:6])


def test_a_missing_layer_starts_no_box_and_names_the_layer_and_the_way_out(host_lacks_seccomp: None) -> None:
    with pytest.raises(BoxLayerMissing) as raised:
        BoxProcess(GOOD)
    message = str(raised.value)
    assert "seccomp filter" in message and "libseccomp2" in message
    assert "--weaker-box" in message and "weaker_box=True" in message
    assert raised.value.reason == "layers" and raised.value.stage == "start"


def test_a_weaker_box_starts_and_names_the_layers_it_had(host_lacks_seccomp: None) -> None:
    box = BoxProcess(GOOD, limits=BoxLimits(weaker_box=True))
    try:
        box.call(Reset(seed=0))
        assert box.isolation and any("landlock" in layer for layer in box.sealed), box.sealed
    finally:
        box.close()


def test_load_envs_refuses_naming_the_layer_and_loads_with_weaker_box(
    host_lacks_seccomp: None, tmp_path: Path, clean_ids: list[str]
) -> None:
    source = GOOD + "\n# a text of its own: no boxed class of it is cached yet\n"
    folder = synthesis_folder(tmp_path / "envs", {"cancel.py": source})
    before = set(gym.registry)
    try:
        with pytest.raises(ImportError, match="seccomp filter"):
            trace_envs.load_envs(folder, id_prefix="layers")
        ids = trace_envs.load_envs(folder, id_prefix="layers", weaker_box=True)
    finally:
        clean_ids += sorted(set(gym.registry) - before)
    assert len(ids) == 1 and default_pool().limits.weaker_box
    assert BoxLimits().weaker_box, "later boxes of this process (and its workers) are weaker boxes too"


def test_validate_modules_passes_weaker_box_to_every_box(monkeypatch: pytest.MonkeyPatch, strict: None) -> None:
    from trace_envs.synthesis import module_checks

    seen: list[Any] = []
    monkeypatch.setattr(module_checks, "_validate_one", lambda module, context: seen.append(context.limits))
    module = module_checks.ModuleSource(Path("cancel.py"), GOOD, "retail")
    module_checks.validate_modules([module], weaker_box=True, seeds=3)
    module_checks.validate_modules([module], seeds=3)
    assert [limits.weaker_box for limits in seen] == [True, False]


def test_the_cli_option_allows_weaker_boxes_for_the_whole_run(strict: None) -> None:
    from trace_envs.cli import build_app

    app, runner = build_app(), CliRunner()
    assert "--weaker-box" in runner.invoke(app, ["validate", "--help"]).output
    assert runner.invoke(app, ["list"]).exit_code == 0
    assert not BoxLimits().weaker_box
    assert runner.invoke(app, ["--weaker-box", "list"]).exit_code == 0
    assert BoxLimits().weaker_box


def test_the_scratchs_folder_is_hidden_unless_something_the_box_reads_lives_there(tmp_path: Path) -> None:
    from trace_envs.box import launch

    scratch = str(tmp_path / "trace-box-1")
    assert launch.hidden_folder(scratch, ["/opt/site-packages"]) == str(tmp_path.resolve())
    assert launch.hidden_folder(scratch, [str(tmp_path.resolve() / "checkout")]) is None  # a checkout under /tmp


def test_as_root_the_unprivileged_uid_needs_a_mount_namespace_and_setpriv(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from trace_envs.box import launch, mounts

    has_setpriv = shutil.which("setpriv", path=mounts.SBIN_PATH) is not None
    monkeypatch.setattr(launch.os, "geteuid", lambda: 0)
    assert launch.drops_uid(["mount namespace"]) == has_setpriv
    assert not launch.drops_uid(["network namespace"])
    assert "unprivileged uid" in " ".join(missing_layers(namespaces=False))
    monkeypatch.setattr(launch.os, "geteuid", lambda: 1000)  # an ordinary user's box keeps that user's uid
    assert launch.drops_uid([])


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's box would run as uid 0 without its namespaces")
def test_a_root_box_without_its_namespaces_is_a_weaker_box_that_says_it_is_uid_0() -> None:
    with pytest.raises(BoxLayerMissing, match="unprivileged uid"):
        BoxProcess(GOOD, limits=BoxLimits(namespaces=False, weaker_box=False))
    box = BoxProcess(GOOD, limits=BoxLimits(namespaces=False, weaker_box=True))
    try:
        assert not any(layer.startswith("unprivileged uid") for layer in box.sealed), box.sealed
        assert any(layer.startswith("seccomp filter") for layer in box.sealed), box.sealed  # it went on
    finally:
        box.close()


def test_the_homes_are_covered_with_the_code_the_box_reads_there_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from trace_envs.box import launch

    home, other = tmp_path.resolve() / "root", tmp_path.resolve() / "home"
    (home / ".pyenv" / "3.11").mkdir(parents=True)
    other.mkdir()
    monkeypatch.setattr(launch, "denied_read_roots", lambda: [str(home), str(other)])
    needed = [str(home / ".pyenv" / "3.11"), "/usr"]
    options = launch.home_covers("/tmp/trace-box-1", needed)
    assert options == ["--cover", str(home), "--cover", str(other), "--keep", str(home / ".pyenv" / "3.11")]
    # the home that holds the scratch is left as it is
    assert launch.home_covers(str(other / "trace-box-1"), needed) == options[:2] + options[4:]


def test_a_scratch_under_a_folder_the_box_cannot_pass_goes_to_the_shared_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The box drops to an unprivileged uid, which cannot pass through pytest's 0700 temporary root (or a
    ``$TMPDIR`` in a home): its scratch then goes to /tmp, where it is only the mount point of the box's tmpfs."""
    import tempfile

    from trace_envs.box.launch import SHARED_TEMPORARY, scratch_parent

    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(closed))
    assert scratch_parent() == SHARED_TEMPORARY
    passable = Path(tempfile.mkdtemp(dir=SHARED_TEMPORARY))
    try:
        passable.chmod(0o711)
        monkeypatch.setattr(tempfile, "tempdir", str(passable))
        assert scratch_parent() is None
    finally:
        passable.rmdir()
