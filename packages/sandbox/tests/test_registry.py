"""The one registry idiom (`codefu_sandbox.registry.Registry`): members from the entry
points of a group, named without being imported, imported when first named; registered
in this process and taken out again; every refusal in one line naming what to do."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from codefu_sandbox.checkers import CHECKERS
from codefu_sandbox.graders import GRADERS
from codefu_sandbox.languages import LANGUAGES
from codefu_sandbox.registry import Registry

GROUP = "codefu.test_widgets"


def _distribution(root: Path, name: str, entries: str, modules: dict[str, str]) -> None:
    """An installed distribution on `root`: its dist-info with `entries` in GROUP, and its
    modules."""
    info = root / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entries}")
    for module, text in modules.items():
        (root / f"{module}.py").write_text(text)


def _widgets() -> Registry[SimpleNamespace]:
    return Registry("widget", GROUP, lambda widget: widget.name)


WIDGET = "from types import SimpleNamespace\nWIDGET = SimpleNamespace(name={!r})\n"


def test_entry_points_are_named_before_and_imported_when_first_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = {"widget_b": WIDGET.format("b"), "widget_a": WIDGET.format("a")}
    _distribution(tmp_path, "widgets", "b = widget_b:WIDGET\na = widget_a:WIDGET\n", modules)
    monkeypatch.syspath_prepend(str(tmp_path))
    widgets = _widgets()
    assert list(widgets) == ["a", "b"] and "a" in widgets and len(widgets) == 2  # by name
    assert "widget_a" not in sys.modules and "widget_b" not in sys.modules
    assert widgets["b"].name == "b"
    assert "widget_b" in sys.modules and "widget_a" not in sys.modules
    with pytest.raises(ValueError, match="unknown widget 'c': choose one of a, b"):
        widgets.lookup("c")


def test_a_member_is_registered_and_taken_out_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(tmp_path, "widgets", "a = widget_a1:WIDGET\n", {"widget_a1": WIDGET.format("a")})
    monkeypatch.syspath_prepend(str(tmp_path))
    widgets = _widgets()
    widgets.register(SimpleNamespace(name="z"))
    assert list(widgets) == ["a", "z"]
    with pytest.raises(ValueError, match="a widget named 'a' is already registered"):
        widgets.register(SimpleNamespace(name="a"))
    widgets.unregister("z")
    widgets.unregister("a")  # an entry point too, in this process only
    assert list(widgets) == [] and list(_widgets()) == ["a"]
    with pytest.raises(ValueError, match="unknown widget 'a'"):
        widgets.unregister("a")


@pytest.mark.parametrize(
    ("entries", "modules", "message"),
    [
        ("a = widget_x:WIDGET\n", {"widget_x": WIDGET.format("x")}, "its member is named 'x'"),
        ("a = widget_gone:WIDGET\n", {}, "No module named 'widget_gone'"),
    ],
)
def test_a_broken_entry_point_names_itself_and_the_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    entries: str,
    modules: dict[str, str],
    message: str,
) -> None:
    _distribution(tmp_path, "widgets", entries, modules)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match=message) as info:
        _widgets()["a"]
    assert f"({GROUP}) cannot be registered" in str(info.value)
    assert "fix or uninstall the package declaring it" in str(info.value)


def test_two_packages_declaring_one_name_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _distribution(tmp_path / "one", "widgets-one", "a = widget_one:WIDGET\n", {})
    _distribution(tmp_path / "two", "widgets-two", "a = widget_two:WIDGET\n", {})
    monkeypatch.syspath_prepend(str(tmp_path / "one"))
    monkeypatch.syspath_prepend(str(tmp_path / "two"))
    with pytest.raises(RuntimeError, match=r"two packages declare the widget 'a'.*uninstall one"):
        list(_widgets())


@pytest.mark.parametrize("registry", [LANGUAGES, GRADERS, CHECKERS], ids=lambda r: r.what)
def test_every_built_in_member_loads_under_its_own_name(registry: Registry[object]) -> None:
    assert len(registry) > 0
    for name in registry:
        registry.lookup(name)  # its entry point imports and names it
    assert list(registry) == sorted(registry)
