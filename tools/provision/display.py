"""`scripts/provision display`: a virtual X server (Debian 12's own `xvfb`), so the engine renders real
frames without a GPU or a screen (with Mesa's software OpenGL, which `godot` provisions).

Used by the rendered-frame test and `scripts/record`. Installed with the machine's apt when missing
(root needed); without it those two skip with a clear message rather than fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from tools.provision.debian import ProvisionError

PACKAGE = "xvfb"


def available() -> bool:
    return shutil.which("xvfb-run") is not None and shutil.which("Xvfb") is not None


def provision() -> None:
    if available():
        print("provision: display: xvfb present", flush=True)
        return
    if os.geteuid() != 0:
        print("provision: display: xvfb missing and not root; install Debian's xvfb package to render frames",
              flush=True)  # fmt: skip
        return
    print("provision: display: installing Debian's xvfb package", flush=True)
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", PACKAGE]):
        done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
        if done.returncode != 0 and command[1] == "install":
            raise ProvisionError(f"apt-get install {PACKAGE} failed: {done.stderr[-800:]}")
    if not available():
        raise ProvisionError("xvfb installed but xvfb-run or Xvfb is still not on PATH")
