"""Start and stop the project's own llama-server (provisioned by `scripts/provision llm`) on loopback.

    with LocalLlamaServer() as server:
        endpoint = Endpoint(server.base_url, max_in_flight=server.parallel)

One thread by default (`-t 1`), leaving a core for the game. Used by tests, benchmarks and the demo;
`NPC_MIND_LLM_URL` makes `resolve_endpoints` skip it and use that endpoint instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from npc_mind.llm.endpoints import Endpoint, endpoints_from_env

REPO = Path(__file__).resolve().parents[3]
LLAMA_DIR = REPO / ".deps" / "llama"
LAUNCHER = LLAMA_DIR / "llama-server"
MODEL = LLAMA_DIR / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


class LocalServerError(RuntimeError):
    """llama-server is missing or did not come up; the message says how to fix it."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclasses.dataclass
class LocalLlamaServer:
    """threads: 1..64 (`-t`); parallel: 1..64 slots (`-np`); context: 256..131072 tokens shared by the
    slots; startup_timeout: 1..600 s; niceness: 0..19, the scheduling priority the server runs at
    (lower than the game's by default, so a busy model never starves the game's main thread)."""

    launcher: Path = LAUNCHER
    model: Path = MODEL
    threads: int = 1
    parallel: int = 4
    context: int = 4096
    startup_timeout: float = 60.0
    niceness: int = 10
    log_path: Path | None = None
    port: int = 0

    def __post_init__(self) -> None:
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
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def endpoint(self) -> Endpoint:
        return Endpoint(self.base_url, max_in_flight=self.parallel)

    def start(self) -> LocalLlamaServer:
        for path, what in ((self.launcher, "llama-server"), (self.model, "the model")):
            if not path.is_file():
                raise LocalServerError(f"{what} is not provisioned ({path.name}); run scripts/provision llm")
        for _attempt in range(3):  # another process may take the free port between probe and bind
            self.port = free_port()
            if self._spawn():
                return self
        raise LocalServerError(f"llama-server did not come up; see {self.log_path or 'its output'}")

    def _spawn(self) -> bool:
        # `nice` from the start, so every thread the server spawns inherits the lower priority.
        command = ["nice", "-n", str(self.niceness)] if self.niceness else []
        command += [str(self.launcher), "-m", str(self.model), "--host", "127.0.0.1"]
        command += ["--port", str(self.port)]
        command += ["-t", str(self.threads), "-np", str(self.parallel), "-c", str(self.context)]
        command += ["--no-webui", "--slots"]
        log = self.log_path.open("ab") if self.log_path else subprocess.DEVNULL
        try:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        finally:
            if self.log_path:
                log.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._process = None
                return False
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.root_url}/health", timeout=1.0).status_code == 200:
                    return True
            time.sleep(0.05)
        self.stop()
        return False

    def slots_busy(self) -> list[bool]:
        """Which slots are processing now (llama-server's `/slots`)."""
        slots = httpx.get(f"{self.root_url}/slots", timeout=2.0).json()
        return [bool(slot["is_processing"]) for slot in slots]

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

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
    with LocalLlamaServer(**server_options) as server:  # type: ignore[arg-type]
        yield [server.endpoint()]
