"""Fetch packages from Debian's `sid` suite into a private folder, without touching the machine's apt.

Godot 4.6 and llama-server exist only in `sid`, built against a newer glibc than the host's.
They run unchanged through sid's own dynamic loader, so we unpack the whole dependency closure
into one root folder and start binaries as `ROOT/.../ld-linux-x86-64.so.2 --library-path ... BIN`.

The archive address and signing key come from the machine's own apt configuration (so a user's
mirror or proxy keeps working); only the suite is swapped for `sid`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

APT_SOURCES_DIR = Path("/etc/apt/sources.list.d")
APT_SOURCES_LIST = Path("/etc/apt/sources.list")
SUITE = "sid"
LIB_DIRS = ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu")
LOADER = "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"


class ProvisionError(RuntimeError):
    """A provisioning step failed; the message says what and how to work around it."""


@dataclasses.dataclass(frozen=True)
class DebianSource:
    uri: str
    signed_by: str | None


@dataclasses.dataclass(frozen=True)
class FetchedPackage:
    name: str
    version: str
    sha256: str
    deb: str


def _parse_deb822(text: str) -> Iterable[dict[str, str]]:
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line.startswith((" ", "\t")):
                continue
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
        if fields:
            yield fields


def find_debian_source() -> DebianSource:
    """The machine's main Debian archive entry (not the security one)."""
    candidates: list[DebianSource] = []
    for path in sorted(APT_SOURCES_DIR.glob("*.sources")):
        for fields in _parse_deb822(path.read_text()):
            if "deb" not in fields.get("types", "").split():
                continue
            if "main" not in fields.get("components", "").split():
                continue
            for uri in fields.get("uris", "").split():
                if "security" not in uri:
                    candidates.append(DebianSource(uri, fields.get("signed-by")))
    lists = [APT_SOURCES_LIST, *sorted(APT_SOURCES_DIR.glob("*.list"))]
    for path in lists:
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            words = line.split()
            if not words or words[0] != "deb":
                continue
            signed_by = None
            rest = words[1:]
            if rest and rest[0].startswith("["):
                options = []
                while rest:
                    options.append(rest.pop(0))
                    if options[-1].endswith("]"):
                        break
                for option in " ".join(options).strip("[]").split():
                    if option.startswith("signed-by="):
                        signed_by = option.split("=", 1)[1]
            if len(rest) >= 3 and "main" in rest[2:] and "security" not in rest[0]:
                candidates.append(DebianSource(rest[0], signed_by))
    for source in candidates:
        if "debian" in source.uri:
            return source
    if candidates:
        return candidates[0]
    raise ProvisionError(
        "no Debian archive entry found in the machine's apt configuration; "
        "set GODOT / NPC_MIND_LLM_URL to use your own engine or endpoint instead"
    )


class SidFetcher:
    """Downloads the closure of some sid packages and unpacks it into `root`."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir.resolve()
        self.lists = self.state_dir / "lists"
        self.archives = self.state_dir / "archives"
        self.status = self.state_dir / "status"
        self.source_list = self.state_dir / "sources.list"
        self._updated = False

    def _apt_options(self) -> list[str]:
        return [
            "-o", f"Dir::Etc::SourceList={self.source_list}",
            "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={self.lists}",
            "-o", f"Dir::State::status={self.status}",
            "-o", f"Dir::Cache={self.state_dir / 'cache'}",
            "-o", f"Dir::Cache::archives={self.archives}",
            "-o", "APT::Install-Recommends=false",
            "-o", "APT::Sandbox::User=root",
            "-o", "Debug::NoLocking=1",
            "-o", "Acquire::Languages=none",
        ]  # fmt: skip

    def update(self) -> None:
        if self._updated:
            return
        source = find_debian_source()
        for folder in (self.lists / "partial", self.archives / "partial", self.state_dir / "cache"):
            folder.mkdir(parents=True, exist_ok=True)
        self.status.touch()
        signed = f"[signed-by={source.signed_by}] " if source.signed_by else ""
        self.source_list.write_text(f"deb {signed}{source.uri} {SUITE} main\n")
        print(f"provision: reading the {SUITE} package index", flush=True)
        self._run(["apt-get", *self._apt_options(), "update", "-q"])
        self._updated = True

    def download(self, packages: list[str]) -> list[FetchedPackage]:
        """Download `packages` and their dependency closure; returns what the closure is."""
        self.update()
        print(f"provision: downloading {' '.join(packages)} and dependencies", flush=True)
        self._run(["apt-get", *self._apt_options(), "install", "--download-only", "-y", "-q", *packages])
        plan = self._run(
            ["apt-get", *self._apt_options(), "install", "--simulate", "-q", *packages], capture=True
        )
        fetched = []
        for line in plan.splitlines():
            # "Inst NAME (VERSION Debian:unstable [ARCH])"
            words = line.replace("(", " ").replace("[", " ").replace("]", " ").replace(")", " ").split()
            if len(words) < 4 or words[0] != "Inst":
                continue
            name, version, arch = words[1], words[2], words[-1]
            deb = f"{name}_{version.replace(':', '%3a')}_{arch}.deb"
            path = self.archives / deb
            if not path.is_file():
                raise ProvisionError(f"apt-get planned {deb} but did not download it")
            fetched.append(FetchedPackage(name, version, sha256_file(path), deb))
        return fetched

    def unpack(self, fetched: list[FetchedPackage], root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        for package in fetched:
            self._run(["dpkg", "-x", str(self.archives / package.deb), str(root)])

    @staticmethod
    def _run(command: list[str], capture: bool = False) -> str:
        try:
            done = subprocess.run(command, check=True, text=True, capture_output=True)
        except FileNotFoundError as error:
            raise ProvisionError(f"{command[0]} is not installed: {error}") from error
        except subprocess.CalledProcessError as error:
            raise ProvisionError(
                f"`{' '.join(command[:2])} ...` failed (exit {error.returncode}):\n"
                f"{error.stderr.strip()[-2000:]}"
            ) from error
        return done.stdout if capture else ""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_lock(path: Path, fetched: list[FetchedPackage]) -> None:
    rows = [dataclasses.asdict(p) for p in sorted(fetched, key=lambda p: p.name)]
    path.write_text(json.dumps({"suite": SUITE, "packages": rows}, indent=1) + "\n")


def read_lock(path: Path) -> list[FetchedPackage]:
    if not path.is_file():
        return []
    return [FetchedPackage(**row) for row in json.loads(path.read_text())["packages"]]


def loader_command(root: Path, binary: str, extra_lib_dirs: Iterable[str] = ()) -> list[str]:
    """The argv prefix that runs `root/binary` through the unpacked root's own loader."""
    lib_path = ":".join(str(root / d) for d in (*LIB_DIRS, *extra_lib_dirs))
    return [str(root / LOADER), "--library-path", lib_path, str(root / binary)]


def write_launcher(path: Path, command: list[str], workdir: Path | None = None) -> None:
    """A shell launcher so users and tests can run the unpacked binary like an installed one."""
    quoted = " ".join(f'"{part}"' for part in command)
    cd = f'cd "{workdir}" || exit 1\n' if workdir else ""
    path.write_text(f'#!/bin/sh\n# generated by scripts/provision\n{cd}exec {quoted} "$@"\n')
    path.chmod(0o755)
