"""`scripts/provision gdextension`: build the Python GDExtension library into `addons/npc_mind/bin/`.

1. The engine in hand dumps `gdextension_interface.h` and `extension_api.json` into `.deps/gdextension/`.
2. cffi (embedding mode) compiles `python/gdbridge/_native.c` (which includes the parts in
   `python/gdbridge/native/`) against that header into
   `addons/npc_mind/bin/libgdbridge.linux.x86_64.so`.
3. Beside it: `gdbridge_api.json.gz` (the engine API, trimmed to what the binding reads at start-up,
   gzipped: 1.2 MB of JSON in 0.2 MB)
   and the Python runtime the library starts (`bin/python/`, see `tools.provision.package`); the
   library's RUNPATH is `$ORIGIN/python/lib`, so nothing names the build machine.
4. Projects that use the addon are imported once headless (`--import`), so that
   `.godot/extension_list.cfg` names the extension; without it the engine silently skips it.

Rebuilt when the engine, the Python build or the binding's C layer changes; otherwise quick.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from tools.provision import package
from tools.provision.debian import ProvisionError

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / ".deps" / "gdextension"
ADDON = REPO / "addons" / "npc_mind"
BIN = ADDON / "bin"
LIBRARY = "libgdbridge.linux.x86_64.so"
API_FILE = "gdbridge_api.json.gz"
NATIVE = REPO / "python" / "gdbridge" / "_native.c"
NATIVE_PARTS = REPO / "python" / "gdbridge" / "native"  # the C sources _native.c includes
NATIVE_CDEF = REPO / "python" / "gdbridge" / "_native.cdef"
LAUNCHER = REPO / ".deps" / "godot" / "godot"
MODULE = "_gdbridge"

# Runs inside the engine on the first callback. Python is already running from the addon's own
# runtime (bin/python, started by the C layer) unless NPC_MIND_PYTHON names another interpreter,
# whose package folders then come first.
INIT_CODE = r"""
import os, sys
from _gdbridge import ffi, lib

def _gdbridge_start():
    if os.environ.get("GDBRIDGE_FAULTHANDLER"):
        import faulthandler
        faulthandler.enable()
    here = os.path.dirname(ffi.string(lib.gdb_library_path()).decode())
    home = ffi.string(lib.gdb_bundled_home()).decode()
    override = os.environ.get("NPC_MIND_PYTHON")
    if override:
        import json, site, subprocess
        probe = "import json, sys; print(json.dumps([sys.version_info[:2], [p for p in sys.path if p]]))"
        try:
            found = subprocess.run([override, "-c", probe], capture_output=True, text=True, check=False)
        except OSError as error:
            raise RuntimeError("NPC_MIND_PYTHON=%s does not run: %s" % (override, error)) from None
        if found.returncode != 0:
            raise RuntimeError("NPC_MIND_PYTHON=%s does not run: %s" % (override, found.stderr.strip()))
        version, paths = json.loads(found.stdout)
        if tuple(version) != sys.version_info[:2]:
            raise RuntimeError("NPC_MIND_PYTHON=%s is Python %d.%d; this library embeds %d.%d"
                               % (override, version[0], version[1], *sys.version_info[:2]))
        for path in [p for p in paths if os.path.isdir(p)]:
            # The interpreter's packages win over the runtime's own.
            before = list(sys.path)
            site.addsitedir(path)
            sys.path[:] = [p for p in sys.path if p not in before] + before
        python = override
    elif home:
        python = home
    else:
        raise RuntimeError("the addon's Python runtime %s is missing (build it with scripts/package, "
                           "or set NPC_MIND_PYTHON to a Python %d.%d)"
                           % (os.path.join(here, "python"), *sys.version_info[:2]))
    api = os.path.join(here, "gdbridge_api.json.gz")
    if not os.path.isfile(api):
        raise RuntimeError(api + " is missing (it is built with the library by scripts/package)")
    import gdbridge._runtime
    gdbridge._runtime.attach(ffi, lib, {"python": python, "api": api})

try:
    _gdbridge_start()
except BaseException as error:
    import traceback
    lib.gdb_error(("gdbridge: Python could not start: %s" % error).encode(), traceback.format_exc().encode())

    @ffi.def_extern(name="gdb_py_initialize")
    def _gdb_idle_init(level):
        pass

    @ffi.def_extern(name="gdb_py_deinitialize")
    def _gdb_idle_deinit(level):
        pass
"""


def _run(command: list[str], cwd: Path | None = None, timeout: int = 300) -> str:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ProvisionError(f"{command[0]} failed: {error}") from error
    if done.returncode != 0:
        raise ProvisionError(f"{' '.join(command[:3])} ... exited {done.returncode}:\n{done.stderr[-2000:]}")
    return done.stdout


def clean_header(text: str) -> str:
    """gdextension_interface.h as cffi's cdef parser accepts it (no comments, no preprocessor)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # The C/C++ prelude (#ifndef __cplusplus ... #else ... #endif) and the extern "C" wrappers.
    text = re.sub(r"#ifndef __cplusplus.*?#endif", "", text, flags=re.S)
    text = re.sub(r"#ifdef __cplusplus.*?#endif", "", text, flags=re.S)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def compact_api(api: dict[str, Any]) -> dict[str, Any]:
    """What gdbridge reads at start-up: classes (methods, virtuals, properties), utilities, builtins."""
    classes = {}
    for cls in api["classes"]:
        methods, virtuals = {}, {}
        for method in cls.get("methods", []):
            args = [arg["type"] for arg in method.get("arguments", [])]
            ret = method.get("return_value", {}).get("type", "")
            if method.get("is_virtual"):
                virtuals[method["name"]] = [args, ret]
            else:
                methods[method["name"]] = [method["hash"], method.get("is_static", False)]
        properties = {
            prop["name"]: [prop.get("setter", ""), prop.get("getter", ""), prop.get("index")]
            for prop in cls.get("properties", [])
        }
        constants = {c["name"]: c["value"] for c in cls.get("constants", [])}
        for enum in cls.get("enums", []):
            constants.update({v["name"]: v["value"] for v in enum["values"]})
        classes[cls["name"]] = {
            "parent": cls.get("inherits", ""),
            "refcounted": cls.get("is_refcounted", False),
            "instantiable": cls.get("is_instantiable", False),
            "methods": methods,
            "virtuals": virtuals,
            "properties": properties,
            "constants": constants,
            "signals": [s["name"] for s in cls.get("signals", [])],
        }
    builtin = {
        f"{b['name']}.{m['name']}": m["hash"]
        for b in api["builtin_classes"]
        for m in b.get("methods", [])
        if m["name"] in ("size", "resize", "keys", "values")
    }
    # Every utility: [hash, is_vararg, argument types, return type ("" for none)]; the types give
    # the ptrcall layout (a vararg utility takes Variants but returns its declared type).
    utility = {
        u["name"]: [u["hash"], u.get("is_vararg", False), [a["type"] for a in u.get("arguments", [])],
                    u.get("return_type", "")]
        for u in api["utility_functions"]
    }
    return {"header": api["header"], "classes": classes, "builtin": builtin, "utility": utility}


def _fingerprint(engine_version: str, header: bytes) -> str:
    digest = hashlib.sha256()
    for part in (
        engine_version.encode(),
        header,
        sys.version.encode(),
        sys.executable.encode(),
        str(sysconfig.get_config_var("LIBDIR")).encode(),
        NATIVE.read_bytes(),
        *(part.name.encode() + part.read_bytes() for part in sorted(NATIVE_PARTS.glob("*.c"))),
        NATIVE_CDEF.read_bytes(),
        Path(__file__).read_bytes(),
    ):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def build(engine: list[str]) -> bool:
    """Build the library if anything it depends on changed; True when it was (re)built."""
    import cffi

    BUILD.mkdir(parents=True, exist_ok=True)
    version = _run([*engine, "--version"]).strip().splitlines()[-1]
    _run([*engine, "--headless", "--dump-gdextension-interface", "--dump-extension-api"], cwd=BUILD)
    header = (BUILD / "gdextension_interface.h").read_bytes()
    stamp_file = BIN / "gdbridge.stamp"
    fingerprint = _fingerprint(version, header)
    outputs = [BIN / LIBRARY, BIN / API_FILE]
    if all(p.is_file() for p in outputs) and stamp_file.is_file() and stamp_file.read_text() == fingerprint:
        return False
    print(f"provision: gdextension: building {LIBRARY} against Godot {version}", flush=True)
    ffi = cffi.FFI()
    ffi.cdef(clean_header(header.decode()) + "\n" + NATIVE_CDEF.read_text())
    ffi.embedding_init_code(INIT_CODE)
    ffi.set_source(
        MODULE,
        '#include "gdextension_interface.h"\n' + NATIVE.read_text(),
        include_dirs=[str(BUILD), str(NATIVE.parent)],
        # -g0 last: the build Python's CFLAGS carry -g, and debug info names the build's folders.
        extra_compile_args=["-O2", "-Wno-unused-function", "-Wno-unused-parameter", "-g0"],
        # Never unloaded: the editor's library reload (`reloadable = true`) closes and opens it
        # again, and the Python runtime it started (with objects pointing into it) stays.
        extra_link_args=["-Wl,-z,nodelete"],
        libraries=["dl"],
    )
    try:
        built = Path(ffi.compile(tmpdir=str(BUILD), target=LIBRARY, verbose=False))
    except Exception as error:
        raise ProvisionError(f"compiling the extension failed: {error}") from error
    BIN.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, BIN / LIBRARY)
    # libpython from the addon's runtime beside the library (bin/python/lib), wherever that is:
    # the build's RUNPATH names the build machine's Python.
    _run([package.patchelf(), "--set-rpath", "$ORIGIN/python/lib", str(BIN / LIBRARY)])
    api = json.loads((BUILD / "extension_api.json").read_text())
    compact = json.dumps(compact_api(api), separators=(",", ":")).encode()
    (BIN / API_FILE).write_bytes(gzip.compress(compact, compresslevel=9, mtime=0))
    (BIN / "gdbridge_api.json").unlink(missing_ok=True)  # older builds stored it uncompressed
    (BIN / "gdbridge_env.json").unlink(missing_ok=True)  # older builds named the build machine's .venv
    stamp_file.write_text(fingerprint)
    return True


def projects() -> list[Path]:
    """Godot projects in the checkout that load the addon (the root one and the test projects)."""
    found = [REPO] if (REPO / "project.godot").is_file() else []
    found += sorted(p.parent for p in (REPO / "tests" / "godot").glob("*/project.godot"))
    return found


def import_project(engine: list[str], project: Path, force: bool = False) -> None:
    """`--headless --import` once, so that `.godot/extension_list.cfg` names the extension.

    The editor discovers the addon while it runs and loads it then; that single import must exit
    cleanly (gdbridge keeps a headless editor from refreshing its docs at exit, see gdbridge.editor).
    """
    if not force and (project / ".godot" / "extension_list.cfg").is_file():
        return
    print(f"provision: gdextension: importing {project.relative_to(REPO) or '.'}", flush=True)
    _run([*engine, "--headless", "--path", str(project), "--import"], timeout=300)
    if not (project / ".godot" / "extension_list.cfg").is_file():
        raise ProvisionError(f"importing {project} did not write .godot/extension_list.cfg")


def provision() -> None:
    if not LAUNCHER.is_file():
        raise ProvisionError("no Godot launcher at .deps/godot/godot; run scripts/provision godot first")
    engine = [str(LAUNCHER)]
    rebuilt = build(engine)
    package.bundle()  # the runtime the library starts; before any import runs it
    for project in projects():
        import_project(engine, project, force=False)
    state = "built" if rebuilt else "up to date"
    print(f"provision: gdextension: addons/npc_mind/bin/{LIBRARY} {state}", flush=True)
