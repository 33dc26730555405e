"""File tools: reading, writing and listing inside the files root; confinement."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from obelisk.errors import ToolDefinitionError
from obelisk.interpreter.tools.registry import Registry
from obelisk.stdlib_tools import default_registry, file_tools

FILE_TOOLS = ["read_text", "write_text", "read_json", "write_json", "list_dir", "path_exists"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


@pytest.fixture
def tools(root: Path) -> Registry:
    return Registry(file_tools(root))


def test_write_then_read_text(tools: Registry, root: Path) -> None:
    assert tools["write_text"]("notes/a.txt", "héllo\r\nworld") == 13
    assert (root / "notes" / "a.txt").read_bytes() == "héllo\r\nworld".encode()
    assert tools["read_text"]("notes/a.txt") == "héllo\r\nworld"
    assert tools["read_text"](str(root / "notes" / "a.txt")) == "héllo\r\nworld"
    assert tools["write_text"]("notes/a.txt", "") == 0
    assert tools["read_text"]("notes/./../notes/a.txt") == ""


def test_write_then_read_json(tools: Registry, root: Path) -> None:
    value = {"a": [1, None], "b": "é"}
    written = tools["write_json"]("deep/er/data.json", value)
    text = '{\n  "a": [\n    1,\n    null\n  ],\n  "b": "é"\n}\n'
    assert (root / "deep/er/data.json").read_text(encoding="utf-8") == text
    assert written == len(text.encode("utf-8"))
    assert tools["read_json"]("deep/er/data.json") == value
    assert tools["write_json"]("one.json", [1, 2], indent=None) == 7
    assert (root / "one.json").read_text(encoding="utf-8") == "[1, 2]\n"


def test_read_json_error_names_the_file_line_and_column(tools: Registry, root: Path) -> None:
    (root / "bad.json").write_text('{"a":\n}', encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        tools["read_json"]("bad.json")
    assert str(caught.value) == "bad.json: invalid JSON at line 2, column 1: Expecting value"


def test_list_dir_and_path_exists(tools: Registry, root: Path) -> None:
    (root / "b.txt").write_text("b", encoding="utf-8")
    (root / "a").mkdir()
    (root / "a" / "inner.txt").write_text("x", encoding="utf-8")
    (root / "C.md").write_text("c", encoding="utf-8")
    assert tools["list_dir"]() == ["C.md", "a/", "b.txt"]
    assert tools["list_dir"]("a") == ["inner.txt"]
    assert tools["list_dir"]("") == ["C.md", "a/", "b.txt"]
    assert tools["path_exists"]("a/inner.txt") is True
    assert tools["path_exists"]("a/missing.txt") is False


def test_missing_file_is_file_not_found(tools: Registry) -> None:
    with pytest.raises(FileNotFoundError):
        tools["read_text"]("nope.txt")


@pytest.mark.parametrize("name", FILE_TOOLS)
@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd"])
def test_escapes_are_refused(tools: Registry, root: Path, name: str, path: str) -> None:
    args = {"write_text": ("t",), "write_json": ({"a": 1},)}.get(name, ())
    with pytest.raises(PermissionError) as caught:
        tools[name](path, *args)
    assert str(caught.value) == f"path {path!r} is outside the files root '{root.resolve()}'"
    assert not (root.parent / "x").exists()


def test_absolute_path_of_a_sibling_with_the_root_as_prefix_is_refused(
    tools: Registry, root: Path
) -> None:
    sibling = root.parent / (root.name + "-other")
    sibling.mkdir()
    (sibling / "secret.txt").write_text("s", encoding="utf-8")
    with pytest.raises(PermissionError, match="is outside the files root"):
        tools["read_text"](str(sibling / "secret.txt"))
    with pytest.raises(PermissionError, match="is outside the files root"):
        tools["read_text"]("../root-other/secret.txt")


def test_symlink_pointing_outside_is_refused(tools: Registry, root: Path) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret.txt", root / "file-link")
    for name, path in [("read_text", "link/secret.txt"), ("read_text", "file-link")]:
        with pytest.raises(PermissionError) as caught:
            tools[name](path)
        assert str(caught.value) == (f"path {path!r} is outside the files root '{root.resolve()}'")
    with pytest.raises(PermissionError):
        tools["write_text"]("link/new.txt", "x")
    with pytest.raises(PermissionError):
        tools["list_dir"]("link")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_symlink_pointing_inside_is_allowed(tools: Registry, root: Path) -> None:
    (root / "real").mkdir()
    (root / "real" / "f.txt").write_text("inside", encoding="utf-8")
    os.symlink(root / "real", root / "alias")
    assert tools["read_text"]("alias/f.txt") == "inside"


def test_root_given_through_a_symlink_is_resolved(tmp_path: Path, root: Path) -> None:
    os.symlink(root, tmp_path / "root-link")
    tools = Registry(file_tools(str(tmp_path / "root-link")))
    assert tools["write_text"]("x.txt", "ok") == 2
    assert (root / "x.txt").read_text(encoding="utf-8") == "ok"


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_no_root_refuses_every_call(name: str) -> None:
    tools = default_registry()
    args = {"write_text": ("t",), "write_json": ({"a": 1},)}.get(name, ())
    with pytest.raises(PermissionError) as caught:
        tools[name]("a.txt", *args)
    assert str(caught.value) == (
        "no files root is configured; pass --files-root DIR (or files_root=...)"
    )


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        file_tools(tmp_path / "missing")
    assert str(caught.value) == f"files root '{tmp_path.resolve() / 'missing'}' is not a directory"


def test_default_registry_with_a_files_root(tmp_path: Path) -> None:
    tools = default_registry(files_root=tmp_path)
    assert tools["write_text"]("a/b.txt", "hi") == 2
    assert tools["read_text"]("a/b.txt") == "hi"
    assert tools["list_dir"]() == ["a/"]
    assert all(tools[name].pure is False for name in FILE_TOOLS)


# -- confinement at open time, race-free (issue 16 E; Linux) ------------------------------

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="dir_fd + O_NOFOLLOW")


@pytest.fixture
def outside(root: Path) -> Path:
    folder = root.parent / "outside"
    folder.mkdir()
    (folder / "f.txt").write_text("outside", encoding="utf-8")
    return folder


def _swap_for_link(folder: Path, target: Path) -> None:
    folder.rename(folder.with_name(folder.name + "-old"))
    os.symlink(target, folder)


@linux_only
def test_a_folder_swapped_for_a_symlink_outside_is_refused(
    tools: Registry, root: Path, outside: Path
) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside", encoding="utf-8")
    assert tools["read_text"]("sub/f.txt") == "inside"
    _swap_for_link(root / "sub", outside)
    for name, args in [
        ("read_text", ()),
        ("read_json", ()),
        ("write_text", ("x",)),
        ("write_json", ({"a": 1},)),
    ]:
        with pytest.raises(PermissionError) as caught:
            tools[name]("sub/f.txt", *args)
        assert str(caught.value) == (f"path 'sub/f.txt' is outside the files root '{root}'")
    with pytest.raises(PermissionError):
        tools["write_text"]("sub/new.txt", "x")
    with pytest.raises(PermissionError):
        tools["list_dir"]("sub")
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text(encoding="utf-8") == "outside"


@linux_only
@pytest.mark.parametrize("when", ["before the folder is opened", "after the folder is opened"])
def test_a_swap_while_the_path_is_being_opened_cannot_escape(
    tools: Registry, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside", encoding="utf-8")
    real_open = os.open
    trigger = "sub" if when.startswith("before") else "f.txt"
    swapped: list[bool] = []

    def racing_open(name: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if name == trigger and kwargs.get("dir_fd") is not None and not swapped:
            swapped.append(True)  # the attacker wins the race here
            _swap_for_link(root / "sub", outside)
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", racing_open)
    if trigger == "sub":
        with pytest.raises(PermissionError, match="is outside the files root"):
            tools["read_text"]("sub/f.txt")
    else:  # the folder already open is the one inside: read and write stay inside
        assert tools["read_text"]("sub/f.txt") == "inside"
        swapped.clear()
        (root / "sub").unlink()
        (root / "sub-old").rename(root / "sub")
        assert tools["write_text"]("sub/f.txt", "new") == 3
        assert (root / "sub-old" / "f.txt").read_text(encoding="utf-8") == "new"
    assert swapped == [True]
    assert (outside / "f.txt").read_text(encoding="utf-8") == "outside"


@linux_only
def test_a_symlinked_file_outside_is_neither_read_nor_written(
    tools: Registry, root: Path, outside: Path
) -> None:
    os.symlink(outside / "f.txt", root / "link.txt")
    os.symlink(outside / "missing.txt", root / "dangling.txt")
    for name, args in [("read_text", ()), ("write_text", ("x",)), ("path_exists", ())]:
        for path in ("link.txt", "dangling.txt"):
            with pytest.raises(PermissionError):
                tools[name](path, *args)
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text(encoding="utf-8") == "outside"


@linux_only
def test_symlinks_inside_the_root_are_followed_by_hand(tools: Registry, root: Path) -> None:
    (root / "real" / "deep").mkdir(parents=True)
    (root / "real" / "deep" / "f.txt").write_text("x", encoding="utf-8")
    os.symlink("real/deep", root / "rel")  # relative target
    os.symlink(root / "real", root / "abs")  # absolute target inside the root
    os.symlink("../real/deep/f.txt", root / "real" / "up.txt")
    assert tools["read_text"]("rel/f.txt") == "x"
    assert tools["read_text"]("abs/deep/f.txt") == "x"
    assert tools["read_text"]("rel/../deep/f.txt") == "x"  # .. after a link: physical
    assert tools["read_text"]("real/up.txt") == "x"
    assert tools["write_text"]("rel/g.txt", "yz") == 2
    assert (root / "real" / "deep" / "g.txt").read_text(encoding="utf-8") == "yz"
    os.symlink("loop", root / "loop")
    with pytest.raises(OSError, match="too many symlinks"):
        tools["read_text"]("loop")


@linux_only
def test_special_files_are_refused_not_waited_on(tools: Registry, root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(PermissionError) as caught:
        tools["read_text"]("pipe")  # an open() without O_NONBLOCK would wait forever
    assert str(caught.value) == "path 'pipe' is not a regular file"
    with pytest.raises(IsADirectoryError):
        tools["read_text"](".")
    assert tools["path_exists"]("pipe") is True
