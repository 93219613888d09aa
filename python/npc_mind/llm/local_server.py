"""Start and stop a local llama-server with a GGUF model on loopback (by default the project's own,
provisioned by `scripts/provision llm`: llama-server and SmolLM2-135M).

    with LocalLlamaServer() as server:
        endpoint = server.endpoint()

For any game, from a shell (prints the URL to put in `NPC_MIND_LLM_URL`, runs until Ctrl-C):

    python -m npc_mind.llm [--model FILE.gguf] [--server LLAMA_SERVER] [--port N]

or in Godot the project setting `npc_mind/llm/start_local_model` (the `NpcMindServer` singleton starts
it with the game, including when playing from the editor, and stops it with the game).
Where the files are: the arguments, else `NPC_MIND_LLAMA_SERVER` / `NPC_MIND_LLM_MODEL_FILE`, else the
provisioned `.deps/llama/` of this checkout. Paths are made absolute before the server starts (it
runs from its own folder, so a relative path would not load).

A game can ship both (`scripts/package --with-model`, then the export option `npc_mind/ship_local_model`):
a self-contained folder `SHIPPED_DIR` (`llama/`) beside the extension library, that is in the addon's
`bin/` and, in an exported game, beside its executable; `shipped(folder)` names its two files.

One thread by default (`-t 1`), leaving a core for the game, at a lower priority (nice 10); on Linux
the server is stopped by the kernel if the process that started it dies. A port that was asked for
and is taken is refused before anything starts (no port asked: a free one is picked); a server that
does not come up is reported with its last lines of output (a game's output goes nowhere): the
output goes to `log_path` when one is given, else to a nameless temporary file. `NPC_MIND_LLM_URL` makes
`resolve_endpoints` skip it and use that endpoint instead.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import httpx

from npc_mind.llm.endpoints import Endpoint, endpoints_from_env

REPO = Path(__file__).resolve().parents[3]
LLAMA_DIR = REPO / ".deps" / "llama"
LAUNCHER = LLAMA_DIR / "llama-server"
MODEL = LLAMA_DIR / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
# The self-contained server and model a game ships (built by tools/provision/llm.py's ship_folder).
SHIPPED_DIR = "llama"
SHIPPED_SERVER = "llama-server"
SHIPPED_MODEL = f"models/{MODEL.name}"
SERVER_ENV = "NPC_MIND_LLAMA_SERVER"
MODEL_FILE_ENV = "NPC_MIND_LLM_MODEL_FILE"


def resolve_path(
    value: str | os.PathLike[str] | None, env: str, default: Path, base: Path | None = None
) -> Path:
    """`value`, else the environment variable `env`, else `default`; made absolute (a relative path
    is taken from `base`, else the current directory, at this moment) with `~` expanded."""
    chosen = str(value or "") or os.environ.get(env, "") or str(default)
    path = Path(chosen).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return path.resolve()


def _die_with_parent() -> list[str]:
    """A command prefix asking Linux to stop the server when the process that started it dies (a game
    killed from the editor's Stop button leaves no model server behind): util-linux `setpriv`, where
    present (a `preexec_fn` is not safe in a process with threads, as a game is)."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "TERM", "--"] if setpriv else []


def shipped(folder: Path) -> tuple[Path, Path]:
    """llama-server and the model inside a shipped `llama/` folder."""
    return folder / SHIPPED_SERVER, folder / SHIPPED_MODEL


def _make_executable(launcher: Path) -> None:
    """A shipped folder unpacked without its permission bits (Godot's asset installer and Python's
    zipfile drop them) has a server and loader that cannot be run: give them back where allowed."""
    for path in (launcher, launcher.parent / "ld-linux-x86-64.so.2"):
        if path.is_file() and not os.access(path, os.X_OK):
            with contextlib.suppress(OSError):  # a read-only install: the start then says why
                path.chmod(path.stat().st_mode | 0o111)


class LocalServerError(RuntimeError):
    """llama-server is missing or did not come up; the message says how to fix it."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def port_taken(port: int) -> bool:
    """Whether another program listens on 127.0.0.1:`port` (bound as llama-server binds it, with
    SO_REUSEADDR: a port left in TIME_WAIT by a previous server is free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


TAIL_LINES = 12  # lines of the server's output a failure's message carries
_TAIL_BYTES = 16384  # read from the end of the output for them


def output_tail(output: IO[bytes], start: int) -> str:
    """The last `TAIL_LINES` lines written to the file `output` after offset `start`."""
    output.flush()
    end = output.seek(0, os.SEEK_END)
    output.seek(max(start, end - _TAIL_BYTES))
    lines = output.read().decode(errors="replace").rstrip().splitlines()
    return "\n".join(lines[-TAIL_LINES:])


@dataclasses.dataclass
class LocalLlamaServer:
    """threads: 1..64 (`-t`); parallel: 1..64 slots (`-np`); context: 256..131072 tokens shared by the
    slots; startup_timeout: 1..600 s; niceness: 0..19, the scheduling priority the server runs at
    (lower than the game's by default, so a busy model never starves the game's main thread)."""

    launcher: Path | None = None  # None: NPC_MIND_LLAMA_SERVER, else the provisioned one
    model: Path | None = None  # None: NPC_MIND_LLM_MODEL_FILE, else the provisioned SmolLM2-135M
    threads: int = 1
    # 2 slots: with one thread, 2 requests at once gave the most answers a second (4 gave fewer, each
    # slower: docs/benchmarks/llm.md, "Decisions per second"); the game's server starts it so too.
    parallel: int = 2
    context: int = 4096
    startup_timeout: float = 60.0
    niceness: int = 10
    log_path: Path | None = None
    port: int = 0  # 0: a free one

    def __post_init__(self) -> None:
        self.launcher = resolve_path(self.launcher, SERVER_ENV, LAUNCHER)
        self.model = resolve_path(self.model, MODEL_FILE_ENV, MODEL)
        if not 1 <= self.threads <= 64:
            raise ValueError(f"threads must be in 1..64, got {self.threads}")
        if not 1 <= self.parallel <= 64:
            raise ValueError(f"parallel must be in 1..64, got {self.parallel}")
        if not 256 <= self.context <= 131072:
            raise ValueError(f"context must be in 256..131072, got {self.context}")
        if not 1 <= self.startup_timeout <= 600:
            raise ValueError(f"startup_timeout must be in 1..600 s, got {self.startup_timeout}")
        if not 0 <= self.niceness <= 19:
            raise ValueError(f"niceness must be in 0..19, got {self.niceness}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be in 0..65535 (0: a free one), got {self.port}")
        self._process: subprocess.Popen[bytes] | None = None
        # where the server's output goes (log_path, else a nameless temporary file: a pipe would need
        # a reader, and a game's own output goes nowhere), and where this start's output begins
        self._output: IO[bytes] | None = None
        self._output_start = 0

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def endpoint(self) -> Endpoint:
        return Endpoint(self.base_url, max_in_flight=self.parallel, kind="llama")

    def start(self) -> LocalLlamaServer:
        checks = ((self.launcher, "llama-server", SERVER_ENV), (self.model, "the model", MODEL_FILE_ENV))
        for path, what, env in checks:
            if not path.is_file():  # type: ignore[union-attr]  # resolved to a Path in __init__ (None raised there)
                raise LocalServerError(
                    f"{what} not found at {path}; run scripts/provision llm, or set {env} (or the "
                    "argument / project setting) to its path"
                )
        _make_executable(self.launcher)  # type: ignore[arg-type]  # checked to be a file just above
        fixed = self.port  # 0: a free port, retried: another process may take it before the bind
        if fixed and port_taken(fixed):
            raise LocalServerError(
                f"port {fixed} on 127.0.0.1 is in use by another program; ask for another port, or "
                "for none (0, the default: a free one)"
            )
        failure = ""
        for _attempt in range(1 if fixed else 3):
            self.port = fixed or free_port()
            failure = self._spawn()
            if not failure:
                return self
        raise LocalServerError(failure)

    def _spawn(self) -> str:
        """Start the server and wait until it answers; "" once it does, else why not (with its
        last lines of output)."""
        # `nice` from the start, so every thread the server spawns inherits the lower priority.
        command = _die_with_parent()
        command += ["nice", "-n", str(self.niceness)] if self.niceness else []
        command += [str(self.launcher), "-m", str(self.model), "--host", "127.0.0.1"]
        command += ["--port", str(self.port)]
        command += ["-t", str(self.threads), "-np", str(self.parallel), "-c", str(self.context)]
        command += ["--no-webui", "--slots"]
        self._close_output()
        # held for the server's life, closed by stop() (or once a failed start is reported)
        self._output = self.log_path.open("ab+") if self.log_path else tempfile.TemporaryFile()  # noqa: SIM115
        self._output_start = self._output.seek(0, os.SEEK_END)
        # From its own folder: a shipped server takes its loader and ggml's backends from there.
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._output,
            stderr=subprocess.STDOUT,
            cwd=self.launcher.parent,  # type: ignore[union-attr]  # resolved to a Path in __init__
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            code = self._process.poll()
            if code is not None:
                self._process = None
                return self._failure(f"llama-server exited with code {code} while starting")
            with contextlib.suppress(httpx.HTTPError):
                answered = httpx.get(f"{self.root_url}/health", timeout=1.0).status_code == 200
                if answered and self._process.poll() is None:  # not a program that took the port
                    return ""
            time.sleep(0.05)
        failure = self._failure(f"llama-server did not answer within {self.startup_timeout:g} s")
        self.stop()
        return failure

    def _close_output(self) -> None:
        if self._output is not None:
            self._output.close()
            self._output = None

    def _failure(self, what: str) -> str:
        tail = output_tail(self._output, self._output_start) if self._output else ""
        if self._process is None:  # it exited: nothing writes there any more
            self._close_output()
        where = f" (all of it in {self.log_path})" if self.log_path else ""
        said = f"; its last output{where}:\n{tail}" if tail else "; it printed nothing"
        return f"{what} (model {self.model}){said}"

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def slots_busy(self) -> list[bool]:
        """Which slots are processing now (llama-server's `/slots`)."""
        slots = httpx.get(f"{self.root_url}/slots", timeout=2.0).json()
        return [bool(slot["is_processing"]) for slot in slots]

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            self._close_output()
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        self._close_output()

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextlib.contextmanager
def resolve_endpoints(**server_options: object) -> Iterator[list[Endpoint]]:
    """`NPC_MIND_LLM_URL`'s endpoints if set, else a local llama-server for the duration of the block."""
    configured = endpoints_from_env()
    if configured:
        yield configured
        return
    with LocalLlamaServer(**server_options) as server:  # type: ignore[arg-type]  # options are passed through as the caller gave them
        yield [server.endpoint()]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m npc_mind.llm`: serve a local model for any game until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m npc_mind.llm",
        description="Serve a GGUF model with llama-server on 127.0.0.1 for npc_mind's LLM decisions.",
    )
    provisioned = "else the provisioned one"
    parser.add_argument("--model", help=f"the .gguf file (default: ${MODEL_FILE_ENV}, {provisioned})")
    parser.add_argument("--server", help=f"llama-server (default: ${SERVER_ENV}, {provisioned})")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (default 1: a core for the game)")
    parser.add_argument("--parallel", type=int, default=2, help="slots, requests at once (default 2)")
    parser.add_argument("--log", type=Path, help="write the server's output here")
    args = parser.parse_args(argv)
    try:
        server = LocalLlamaServer(
            launcher=args.server, model=args.model, threads=args.threads, parallel=args.parallel,
            log_path=args.log.resolve() if args.log else None, port=args.port,
        )  # fmt: skip
        server.start()
    except (LocalServerError, ValueError) as error:
        print(f"local_server: {error}", file=sys.stderr)
        return 1
    print(f"local_server: {server.model.name} at {server.base_url}", flush=True)  # type: ignore[union-attr]  # resolved to a Path in __init__
    print(f"export NPC_MIND_LLM_URL={server.base_url}", flush=True)
    try:
        while server.running():
            time.sleep(0.5)
        print("local_server: llama-server exited", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
