"""The project's provisioning: one entry point (`scripts/provision`), one module per component."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPS = ROOT / ".deps"
