"""`scripts/provision [COMPONENT ...]`: install what the project needs, idempotently.

Each component is a module `tools.provision.<name>` with a `provision() -> None` function.
The Python environment itself is set up by `scripts/provision` before this runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from tools.provision.debian import ProvisionError

# In dependency order; `all` provisions each of them.
COMPONENTS = ("godot", "gdextension", "memkernel", "numpy_build", "package", "llm", "display")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/provision", description=__doc__)
    parser.add_argument("components", nargs="*", default=["all"], help=f"all or any of {COMPONENTS}")
    args = parser.parse_args(argv)
    wanted = list(COMPONENTS) if "all" in args.components else args.components
    unknown = sorted(set(wanted) - set(COMPONENTS))
    if unknown:
        parser.error(f"unknown component(s) {unknown}; choose from {COMPONENTS}")
    for name in COMPONENTS:
        if name not in wanted:
            continue
        try:
            module = importlib.import_module(f"tools.provision.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"tools.provision.{name}":
                raise
            print(f"provision: {name}: not part of this checkout yet, skipped", flush=True)
            continue
        started = time.monotonic()
        try:
            module.provision()
        except ProvisionError as error:
            print(f"provision: {name} failed: {error}", file=sys.stderr, flush=True)
            return 1
        print(f"provision: {name} ready ({time.monotonic() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
