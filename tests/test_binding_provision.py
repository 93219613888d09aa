"""Provisioning of the engine and the extension, without starting the engine."""

from __future__ import annotations

import importlib.util
import json
import py_compile
import zipfile
from pathlib import Path

import pytest

from tools.provision import gdextension, godot
from tools.provision.debian import ProvisionError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("version", ["4.6.3.stable.debian4.6.3+ds-3", "4.7.0.dev", "5.0.stable"])
def test_engines_from_4_6_are_accepted(version: str) -> None:
    godot._check_minimum(version, "GODOT=x")


@pytest.mark.parametrize("version", ["4.5.1.stable", "3.6.stable"])
def test_older_engines_are_refused_with_the_reason(version: str) -> None:
    with pytest.raises(ProvisionError, match=r"needs Godot 4\.6 or newer"):
        godot._check_minimum(version, "GODOT=x")


def test_a_godot_that_is_not_executable_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GODOT", str(tmp_path / "missing"))
    with pytest.raises(ProvisionError, match="not an executable file"):
        godot.provision()


def test_the_lock_records_what_was_fetched() -> None:
    lock = json.loads(godot.LOCK.read_text())
    names = {row["name"]: row for row in lock["packages"]}
    assert lock["suite"] == "sid" and "godot" in names and "libgl1-mesa-dri" in names
    assert all(len(row["sha256"]) == 64 for row in lock["packages"])


def test_the_cleaned_header_parses_as_a_cdef() -> None:
    import cffi

    header = (gdextension.BUILD / "gdextension_interface.h").read_text()
    ffi = cffi.FFI()
    ffi.cdef(gdextension.clean_header(header))
    assert ffi.sizeof("GDExtensionClassCreationInfo5") > 0


def test_the_build_carries_its_own_python_runtime() -> None:
    from tools.provision import package

    assert (gdextension.BIN / gdextension.LIBRARY).is_file()
    assert (package.RUNTIME / "lib" / package.LIBPYTHON).is_file()
    assert (package.RUNTIME / ".gdignore").is_file()  # the editor never scans the runtime
    site = package.RUNTIME / "lib" / package.VERSION_DIR / "site-packages"
    shipped = {p.name for p in site.iterdir()}
    assert {"numpy", "certifi"} <= shipped  # cffi: only its backend ships
    assert any(name.startswith("_cffi_backend.") for name in shipped), shipped
    # The pure-Python distributions' bytecode is in the standard library's zip, their metadata here.
    with zipfile.ZipFile(package.RUNTIME / "lib" / package.STDLIB_ZIP) as archive:
        assert "httpx/__init__.pyc" in archive.namelist()
    assert any(name.startswith("httpx-") and name.endswith(".dist-info") for name in shipped), shipped
    assert not {"pytest", "matplotlib", "ruff"} & {p.name for p in site.iterdir()}
    # The project's own packages are copies, in step with python/ (the test session syncs them).
    for name in package.OWN_PACKAGES:
        copy, source = site / name / "__init__.py", ROOT / "python" / name / "__init__.py"
        assert copy.read_bytes() == source.read_bytes()
    assert package.sync_own_packages() == 0


def test_the_own_packages_bytecode_names_no_path_of_this_machine() -> None:
    """Python rewrote a stale .pyc with its absolute file name: a checkout's addon copied into a game
    named this checkout. The sync makes hash-checked bytecode named relative to site-packages, even
    over bytecode the engine wrote."""
    from tools.provision import package

    site = package.RUNTIME / "lib" / package.VERSION_DIR / "site-packages"
    module = site / "npc_mind" / "_version.py"
    written_by_python = Path(importlib.util.cache_from_source(str(module)))
    py_compile.compile(str(module), str(written_by_python))  # as an import of a stale copy would
    assert str(site).encode() in written_by_python.read_bytes()
    package.sync_own_packages()
    for name in package.OWN_PACKAGES:
        for cached in (site / name).rglob("*.pyc"):
            data = cached.read_bytes()
            assert int.from_bytes(data[4:8], "little") == 0b11, cached  # validated by the source's hash
            assert str(ROOT).encode() not in data, cached


def test_every_project_using_the_addon_is_imported() -> None:
    projects = gdextension.projects()
    assert ROOT / "tests" / "godot" / "binding" in projects
    assert all((project / ".godot" / "extension_list.cfg").is_file() for project in projects)
