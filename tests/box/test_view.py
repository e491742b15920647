"""The box's file-system view: rules around a hidden path cover everything else under a root, list the folders
on the way without opening them, and a link into such a folder opens nothing more."""

from __future__ import annotations

import os
from pathlib import Path

from trace_envs.box.view import KIT, carve, hidden_parts


def tree(root: Path) -> Path:
    for path in ("lib/python/site/pkg/core/a.py", "lib/python/site/pkg/targets/t.py", "lib/python/site/other/o.py",
                 "lib/python/os.py", "bin/python", "include/h.h"):  # fmt: skip
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x", encoding="utf-8")
    (root / "lib64").symlink_to(root / "lib")
    return root / "lib/python/site/pkg"


def test_a_root_with_nothing_hidden_is_one_readable_rule(tmp_path: Path) -> None:
    tree(tmp_path)
    assert carve([str(tmp_path / "bin")], [str(tmp_path / "lib")]) == ([str(tmp_path / "bin")], [])


def test_the_folders_on_the_way_are_listable_and_their_other_entries_readable(tmp_path: Path) -> None:
    package = tree(tmp_path)
    readable, listable = carve([str(tmp_path)], [str(package / "targets")])
    real = os.path.realpath
    assert listable == [real(p) for p in (tmp_path, tmp_path / "lib", tmp_path / "lib/python",
                                           tmp_path / "lib/python/site", package)]  # fmt: skip
    assert sorted(readable) == sorted(real(p) for p in (tmp_path / "bin", tmp_path / "include",
                                                        tmp_path / "lib/python/os.py", tmp_path / "lib/python/site/other",
                                                        package / "core"))  # fmt: skip
    assert not any(path.startswith(real(package / "targets")) for path in readable + listable)


def test_a_link_into_a_folder_on_the_way_opens_nothing_more(tmp_path: Path) -> None:
    package = tree(tmp_path)
    readable, listable = carve([str(tmp_path / "lib64"), str(tmp_path)], [str(package / "targets")])
    assert os.path.realpath(tmp_path / "lib") in listable and len(set(listable)) == len(listable)
    assert os.path.realpath(tmp_path / "lib") not in readable


def test_only_the_kit_of_the_package_is_left_readable() -> None:
    import trace_envs

    package = Path(trace_envs.__file__).resolve().parent
    hidden = hidden_parts(package)
    assert str(package / "targets") in hidden and str(package / "__init__.py") in hidden
    assert not any(Path(path).name in KIT for path in hidden)
