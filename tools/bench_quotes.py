"""Benchmark figures quoted in the README and the class pages, written from the benchmarks' own output.

A page quotes a figure inside a marked block, in the running text:

    costs <!-- bench:addon:per-call record_event -->2.8-3.2 us<!-- /bench --> a call

`bench:SOURCE:QUOTE ARGS` names the stored output `docs/benchmarks/SOURCE.md` (what `scripts/bench
SOURCE` wrote) and one of the `QUOTES` below, which reads the figure from that file's tables or text.
Each benchmark calls `publish(SOURCE)` after writing its file, so the quoted figures are rewritten
from the same data as its tables and are never typed by hand; `python -m tools.bench_quotes`
rewrites every block from the stored files (no benchmark run), `--check` only reports differences.
`tests/test_docs_bench_quotes.py` fails when a block differs from its stored output, and when a page
quotes a per-call cost (a figure in us or ns) outside a block (`ALLOWED` lists the few that no
benchmark measures).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "benchmarks"

BLOCK = re.compile(
    r"<!-- bench:(?P<source>\w+):(?P<quote>[\w-]+)(?P<args>(?: [^ >]+)*) -->(?P<body>.*?)<!-- /bench -->",
    re.S,
)
# A per-call cost: a figure (or range) in microseconds or nanoseconds.
PER_CALL = re.compile(r"~?\d[\d,.]*(?:\s*-\s*\d[\d,.]*)?\s*(?:us|µs|μs|ns)\b")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")

# Per-call figures no benchmark measures, as whitespace-normalised phrases of their page: history
# (what a change measured once, before and after) and one estimate.
# The record of one measured change (a compiled kernel, removed), kept as measured like the stored
# outputs: it quotes no benchmark that runs today.
RECORDS = frozenset({"memory-kernel.md"})
# Keyed by the page's path from the repository root.
ALLOWED: dict[str, tuple[str, ...]] = {
    "docs/memory.md": (
        "a `record` went from 33 to 2.5 us, an `awareness` from 26 to 2.9 us"
        " and a `query_strongest` from 39 to 7 us",
    ),
    "docs/python-in-godot.md": ("the result was 12.7 us before Dictionaries were converted in C",),
    "docs/reliability.md": ("The check is one comparison per call (~50 ns)",),
}


class QuoteError(ValueError):
    """A marked block that cannot be written: an unknown quote, or a figure its stored output lacks."""


def pages(root: Path = ROOT) -> list[Path]:
    """The pages that may quote benchmark figures: the README, the docs/ pages and the class pages
    (not the stored outputs in docs/benchmarks/, which the quotes are read from)."""
    named = [root / "README.md", *sorted(p for p in (root / "docs").glob("*.md") if p.name not in RECORDS)]
    return [page for page in named if page.exists()] + sorted((root / "docs" / "classes").glob("*.md"))


def page_name(page: Path, root: Path = ROOT) -> str:
    """A page's path from the repository root, as `ALLOWED` names it."""
    try:
        return page.relative_to(root).as_posix()
    except ValueError:
        return page.name


# --- the stored output -------------------------------------------------------------------------
@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> int:
        try:
            return self.header.index(name)
        except ValueError:
            raise QuoteError(f"no column {name!r} in the table {self.header}") from None

    def cells(self, column: str, **where: str) -> list[str]:
        """The cells of `column` in the rows whose columns `where` (header -> cell text) match."""
        index = self.column(column)
        keys = [(self.column(name), text) for name, text in where.items()]
        found = [row[index] for row in self.rows if all(row[i] == text for i, text in keys)]
        if not found:
            raise QuoteError(f"no row with {where} in the table {self.header}")
        return found


@dataclass
class Stored:
    """One benchmark's stored output (`docs/benchmarks/<source>.md`): its text and tables."""

    source: str
    text: str
    tables: list[Table]

    @classmethod
    def read(cls, source: str, folder: Path = STORED) -> Stored:
        path = folder / f"{source}.md"
        if not path.is_file():
            raise QuoteError(f"no stored output {path.name} (run `scripts/bench {source}`)")
        text = path.read_text()
        return cls(source, text, markdown_tables(text))

    def table(self, having: str) -> Table:
        """The first table with a column named `having`."""
        for table in self.tables:
            if having in table.header:
                return table
        raise QuoteError(f"{self.source}.md has no table with a column {having!r}")


def markdown_tables(text: str) -> list[Table]:
    tables: list[Table] = []
    block: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([cell.strip() for cell in line.strip().strip("|").split("|")])
            continue
        if len(block) >= 2 and set("".join(block[1])) <= set("-: "):  # header, separator, rows
            tables.append(Table(block[0], block[2:]))
        block = []
    return tables


def numbers(cell: str) -> list[float]:
    return [float(n.replace(",", "")) for n in _NUMBER.findall(cell)]


# --- how figures are written -------------------------------------------------------------------
def figure(value: float) -> str:
    return f"{value:.2f}" if value < 1 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def span(values: Iterable[float], unit: str) -> str:
    """`2.8-3.2 us`, or one figure when both ends read the same."""
    values = list(values)
    low, high = figure(min(values)), figure(max(values))
    return f"{low}{'' if low == high else '-' + high}{unit}"


# --- the quotes ----------------------------------------------------------------------------------
Quote = Callable[[Stored, Sequence[str]], str]

ADDON_METHODS = ("record_event", "awareness_of", "evaluate", "query_strongest", "set_inputs", "choice")
ADDON_CALL_PATHS = ("dictionary", "nodes")  # the per-call table's paths (the Dictionary path by default)
ADDON_PATHS = {
    "batched": "batched",
    "signals-off": "batched, signals off",
    "dictionary": "dictionary",
    "nodes": "nodes",
    "gdscript": "gdscript",
    "dictionary-turns": "dictionary, own turns",
    "gdscript-turns": "gdscript, own turns",
}
ADDON_FRAME_COLUMNS = {  # name -> (column, which number of the cell, unit)
    "added": ("added p50 (ms)", 0, " ms"),
    "share": ("of 16.6 ms", 0, "%"),
    "p50": ("with p50 / p99 (ms)", 0, " ms"),
    "p99": ("with p50 / p99 (ms)", 1, " ms"),
    "step": ("of it the server's step (ms)", 0, " ms"),
}


def _addon_per_call(stored: Stored, args: Sequence[str]) -> list[tuple[float, float]]:
    """(node, GDScript baseline) per call, us, at every crowd size of the per-call table, for the
    methods in `args` (all measured, by default) on the path in `args` (`dictionary` by default)."""
    table = stored.table("`record_event` (us)")
    path = next((arg for arg in args if arg in ADDON_CALL_PATHS), "dictionary")
    methods = [arg for arg in args if arg not in ADDON_CALL_PATHS]
    unknown = [method for method in methods if method not in ADDON_METHODS]
    if unknown:
        raise QuoteError(f"addon per-call: no method {unknown[0]!r} (one of {', '.join(ADDON_METHODS)})")
    rows = table.rows
    if "path" in table.header:  # one row per crowd size and path
        rows = [row for row in rows if row[table.column("path")] == path]
    names = methods or [method for method in ADDON_METHODS if f"`{method}` (us)" in table.header]
    pairs = []
    for method in names:
        index = table.column(f"`{method}` (us)")
        cells = [numbers(row[index]) for row in rows]
        pairs += [(cell[0], cell[1]) for cell in cells if len(cell) >= 2]  # "-": not measured there
    if not pairs:
        raise QuoteError(f"addon per-call: no {', '.join(names)} measured on the {path} path")
    return pairs


def addon_per_call(stored: Stored, args: Sequence[str]) -> str:
    """A node method's time per call from GDScript, over the crowd sizes measured: `3.1-3.6 us`."""
    return span((node for node, _ in _addon_per_call(stored, args)), " us")


def addon_per_call_ratio(stored: Stored, args: Sequence[str]) -> str:
    """Node over the GDScript baseline doing the same work, per call (all four methods by default)."""
    return span((node / baseline for node, baseline in _addon_per_call(stored, args)), "x")


def addon_frame(stored: Stored, args: Sequence[str]) -> str:
    """One cell of the frame-time table: `frame added|share|p50|p99 GUARDS batched|signals-off|dictionary`."""
    if len(args) != 3 or args[0] not in ADDON_FRAME_COLUMNS or args[2] not in ADDON_PATHS:
        raise QuoteError(f"addon frame: want {'|'.join(ADDON_FRAME_COLUMNS)} GUARDS {'|'.join(ADDON_PATHS)}")
    column, which, unit = ADDON_FRAME_COLUMNS[args[0]]
    guards = f"{int(args[1]):,}"
    table = stored.table("added p50 (ms)")
    (cell,) = table.cells(column, guards=guards, path=ADDON_PATHS[args[2]])
    value = numbers(cell)[which]
    return f"{value:.0f}%" if unit == "%" else span([value], unit)


BINDING_CASES = {
    "empty-process": "empty _process",
    "typed-call": "typed call add(int, int) -> int",
    "untyped-call": "untyped call add(1, 2)",
    "dict-argument": "call with a 5-key Dictionary argument",
    "dict-return": "call returning a 6-key Dictionary",
    "typed-dict-argument": "call with a 5-key Dictionary[String, float] argument",
    "get-property": '_get-backed property read get(&"level")',
    "packed-array": "call with PackedFloat32Array[1000] + Dictionary[10]",
    "stringname-return": "call returning a StringName",
}
# Quotable, but not a callback into Python (not in `callbacks`): the other direction.
BINDING_OTHER = {"engine-call": "engine call get_child_count() from the language"}
BINDING_NODES = "1,000"  # the steadier of the two crowd sizes (docs/benchmarks/binding.md)


def _binding(stored: Stored, args: Sequence[str], column: str) -> list[float]:
    table = stored.table("Python (us)")
    cases = BINDING_CASES | BINDING_OTHER
    unknown = [name for name in args if name not in cases and name != "callbacks"]
    if not args or unknown:
        raise QuoteError(f"binding: name cases ({', '.join(cases)}, or callbacks: all the callbacks)")
    names = list(BINDING_CASES) if "callbacks" in args else args
    return [numbers(c)[0] for n in names for c in table.cells(column, case=cases[n], nodes=BINDING_NODES)]


def binding_python(stored: Stored, args: Sequence[str]) -> str:
    """A GDScript -> Python call's cost through gdbridge (1,000 nodes): `binding:python CASE...`."""
    return span(_binding(stored, args, "Python (us)"), " us")


def binding_gdscript(stored: Stored, args: Sequence[str]) -> str:
    """The same call to a GDScript method, same run."""
    return span(_binding(stored, args, "GDScript (us)"), " us")


def binding_ratio_max(stored: Stored, args: Sequence[str]) -> str:
    """The largest Python / GDScript ratio over the cases named."""
    return f"{max(_binding(stored, args, 'ratio')):.1f}x"


def utility_per_npc(stored: Stored, args: Sequence[str]) -> str:
    """The per-NPC (one context dict) cost of a selector call, median: `utility:per-npc choose`."""
    if len(args) != 1:
        raise QuoteError("utility per-npc: name one call (rank, choose, explain)")
    (cell,) = stored.table("per NPC (median)").cells("per NPC (median)", what=f"`{args[0]}`")
    return span(numbers(cell), " us")


UTILITY_ROWS = {  # quote argument -> the batch table's row (docs/benchmarks/utility.md)
    "float64": "score_batch, float64",
    "float64-numpy": "score_batch, float64, numpy path (`NPC_MIND_KERNEL=numpy`)",
    "float32": "score_batch, float32 inputs",
    "choose": "choose_batch (score + anti-dithering state)",
    "mixed": "mixed families + product + veto, score_batch",
}


def utility_ratio(stored: Stored, args: Sequence[str]) -> str:
    """A batch row's speed-up over the per-NPC loop, min / min to median / median:
    `utility:ratio 1,000 float64` (float64-numpy, float32, choose, mixed)."""
    if len(args) != 2 or args[1] not in UTILITY_ROWS:
        raise QuoteError(f"utility ratio: name the NPCs (1,000) and one of {', '.join(UTILITY_ROWS)}")
    table = stored.table("vs baseline (min / min)")
    where = {"what": UTILITY_ROWS[args[1]], "NPCs": args[0]}
    (best,) = table.cells("vs baseline (min / min)", **where)
    (median,) = table.cells("(median / median)", **where)
    low, high = (f"{value:,.0f}" for value in sorted((*numbers(best), *numbers(median))))  # as the table
    return f"{low}x" if low == high else f"{low}-{high}x"


_MEMORY_WORK = {"record": "(a) record 4 each", "query": "(b) query 1 each", "sweep": "(c) R of all"}


def memory_ratio(stored: Stored, args: Sequence[str]) -> str:
    """The pool's time over the C++ stream's: `memory:ratio 1,000 query` (record, query, sweep)."""
    if len(args) != 2 or args[1] not in _MEMORY_WORK:
        raise QuoteError(f"memory ratio: name the NPCs (1,000) and one of {', '.join(_MEMORY_WORK)}")
    (cell,) = stored.table("pool / C++").cells("pool / C++", NPCs=args[0], work=_MEMORY_WORK[args[1]])
    return span(numbers(cell), "x")


def game_ratio(stored: Stored, args: Sequence[str]) -> str:
    """A variant's frame p50 over the plain GDScript game's: `game:ratio 200 scripted`."""
    if len(args) != 2:
        raise QuoteError("game ratio: name the mobs (200, 1,000) and a variant (scripted, batched, nocode)")
    (cell,) = stored.table("p50 / gdscript").cells("p50 / gdscript", mobs=args[0], variant=args[1])
    return f"{numbers(cell)[0]:.2f}x"  # two decimals: the goals (1.0x, 1.5x) sit at the first


_LLM_REQUEST = re.compile(r"One request costs the main thread (\d[\d.]*) us")


def llm_request(stored: Stored, args: Sequence[str]) -> str:
    """What one LLM request costs the main thread (p50)."""
    found = _LLM_REQUEST.search(stored.text)
    if found is None:
        raise QuoteError("llm.md does not say what one request costs the main thread")
    return span([float(found[1])], " us")


_SENSES_COLUMNS = {  # (column, which number of the cell, unit)
    "ratio": ("nodes / GDScript", 0, "x"),
    "nodes": ("nodes added: p50 / CPU (ms)", 1, " ms"),
    "gdscript": ("hand-written GDScript added: p50 / CPU (ms)", 1, " ms"),
}


def senses_frame(stored: Stored, args: Sequence[str]) -> str:
    """One cell of the senses table: `senses:frame ratio|nodes|gdscript GUARDS` (the CPU time added
    a frame, or the nodes / hand-written GDScript ratio of it)."""
    if len(args) != 2 or args[0] not in _SENSES_COLUMNS:
        raise QuoteError(f"senses frame: name one of {', '.join(_SENSES_COLUMNS)} and the guards")
    column, which, unit = _SENSES_COLUMNS[args[0]]
    guards = f"{int(args[1]):,}"
    (cell,) = stored.table(column).cells(column, guards=guards)
    return f"{numbers(cell)[which]:.2f}{unit}"


_INPUTS_COLUMNS = {
    "typed": "typed (us)", "untyped": "untyped (us)", "take": "take (us)", "gdscript": "GDScript (us)",
}  # fmt: skip


def inputs_per_call(stored: Stored, args: Sequence[str]) -> str:
    """`inputs:per-call typed|untyped|take|gdscript`: the per-call cost of UtilitySelector.set_input
    (its share of the hand-over to Python, or the GDScript Dictionary write baseline) over the NPC
    counts of the inputs table."""
    if len(args) != 1 or args[0] not in _INPUTS_COLUMNS:
        raise QuoteError(f"inputs per-call: name one of {', '.join(_INPUTS_COLUMNS)}")
    column = _INPUTS_COLUMNS[args[0]]
    table = stored.table(column)
    return span((numbers(row[table.column(column)])[0] for row in table.rows), " us")


_EVALUATE_COLUMNS = {
    "repeating": "repeating (us)", "drifting": "drifting (us)", "gdscript": "GDScript (us)",
    "drifting-ratio": "drifting / GDScript", "checked": "checked",
}  # fmt: skip
_EVALUATE_KERNELS = {"check": "compiled (check)", "no-check": "numpy (no check)"}


def evaluate_per_call(stored: Stored, args: Sequence[str]) -> str:
    """`evaluate:per-call COLUMN KERNEL` (a column of `_EVALUATE_COLUMNS`, `check` or `no-check`):
    that column of UtilitySelector.evaluate's table over its NPC counts, as a span."""
    if len(args) != 2 or args[0] not in _EVALUATE_COLUMNS or args[1] not in _EVALUATE_KERNELS:
        columns, kernels = ", ".join(_EVALUATE_COLUMNS), ", ".join(_EVALUATE_KERNELS)
        raise QuoteError(f"evaluate per-call: name one of {columns} and one of {kernels}")
    column = _EVALUATE_COLUMNS[args[0]]
    cells = stored.table(column).cells(column, kernel=_EVALUATE_KERNELS[args[1]])
    values = [numbers(cell)[0] for cell in cells]
    if args[0] == "checked":
        return span(values, "%")
    return span(values, "x" if args[0].endswith("ratio") else " us")


def llm_goodput(stored: Stored, args: Sequence[str]) -> str:
    """A cell of the goodput table: `llm:goodput ENDPOINTS NPCS COLUMN` (`1 1,000 ratio`; the column's
    name may have spaces: `2 1,000 cores servers`)."""
    if len(args) < 3:
        raise QuoteError("llm goodput: name the endpoints, the NPCs and a column (answers/s, ratio, scaling)")
    endpoints, npcs, *words = args
    column = " ".join(words)
    (cell,) = stored.table("answers/s").cells(column, endpoints=endpoints, NPCs=npcs)
    return cell


SHIP_SIZES = {  # quote argument -> the size table's row (docs/benchmarks/ship.md)
    "addon": "the addon's zip, unpacked (`scripts/package`)",
    "addon-zipped": "the addon's zip, zipped (`scripts/package`)",
    "runtime": "the export's Python runtime (`python/`)",
    "export": "the export folder (binary, pack, engine libraries, runtime)",
}
SHIP_RUNS = {"exported": "exported (`--export-release`)", "editor": "editor-run (`godot --path .`)"}


def ship_size(stored: Stored, args: Sequence[str]) -> str:
    """A size of the addon or the exported demo: `ship:size addon` (MB), `ship:size addon files`."""
    if not args or args[0] not in SHIP_SIZES:
        raise QuoteError(f"ship size: name one of {', '.join(SHIP_SIZES)} (and files for the file count)")
    table = stored.table("MB")
    if args[1:] == ["files"]:
        (cell,) = table.cells("files", size=SHIP_SIZES[args[0]])
        return f"{int(numbers(cell)[0]):,}"
    (cell,) = table.cells("MB", size=SHIP_SIZES[args[0]])
    return f"{numbers(cell)[0]:.1f} MB"


def ship_startup(stored: Stored, args: Sequence[str]) -> str:
    """The median start-up of the exported or the editor-run demo: `ship:startup exported`."""
    if len(args) != 1 or args[0] not in SHIP_RUNS:
        raise QuoteError(f"ship startup: name one of {', '.join(SHIP_RUNS)}")
    (cell,) = stored.table("median s").cells("median s", run=SHIP_RUNS[args[0]])
    return f"{numbers(cell)[0]:.2f} s"


QUOTES: dict[tuple[str, str], Quote] = {
    ("senses", "frame"): senses_frame,
    ("inputs", "per-call"): inputs_per_call,
    ("evaluate", "per-call"): evaluate_per_call,
    ("addon", "per-call"): addon_per_call,
    ("addon", "per-call-ratio"): addon_per_call_ratio,
    ("addon", "frame"): addon_frame,
    ("binding", "python"): binding_python,
    ("binding", "gdscript"): binding_gdscript,
    ("binding", "ratio-max"): binding_ratio_max,
    ("utility", "per-npc"): utility_per_npc,
    ("utility", "ratio"): utility_ratio,
    ("memory", "ratio"): memory_ratio,
    ("game", "ratio"): game_ratio,
    ("llm", "request"): llm_request,
    ("llm", "goodput"): llm_goodput,
    ("ship", "size"): ship_size,
    ("ship", "startup"): ship_startup,
}


# --- pages -----------------------------------------------------------------------------------------
def render(text: str, sources: Iterable[str] | None = None, folder: Path = STORED) -> str:
    """`text` with every block (of `sources`, or all) rewritten from its stored output."""
    wanted = None if sources is None else set(sources)
    stored: dict[str, Stored] = {}

    def write(match: re.Match[str]) -> str:
        source, name = match["source"], match["quote"]
        if wanted is not None and source not in wanted:
            return match[0]
        quote = QUOTES.get((source, name))
        if quote is None:
            raise QuoteError(
                f"no quote bench:{source}:{name} (known: {', '.join(f'{s}:{q}' for s, q in QUOTES)})"
            )
        if source not in stored:
            stored[source] = Stored.read(source, folder)
        body = quote(stored[source], match["args"].split())
        return match[0][: match.start("body") - match.start()] + body + "<!-- /bench -->"

    return BLOCK.sub(write, text)


def unquoted(text: str, allowed: Sequence[str] = ()) -> list[str]:
    """The per-call figures of `text` outside marked blocks and outside the `allowed` phrases."""
    prose = " ".join(BLOCK.sub(" ", text).split())
    for phrase in allowed:
        prose = prose.replace(" ".join(phrase.split()), " ")
    return [match[0] for match in PER_CALL.finditer(prose)]


def publish(source: str, root: Path = ROOT) -> list[Path]:
    """Rewrite the blocks quoting `source` in every page; a benchmark calls it after writing its
    stored output. A block it cannot write is reported, not raised: the benchmark's own output is
    kept, and the quotes test names the block."""
    changed = []
    for page in pages(root):
        text = page.read_text()
        try:
            new = render(text, [source], root / "docs" / "benchmarks")
        except QuoteError as error:
            print(f"bench_quotes: {page.relative_to(root)}: {error}", file=sys.stderr)
            continue
        if new != text:
            page.write_text(new)
            changed.append(page)
    for page in changed:
        print(f"bench_quotes: rewrote the {source} figures in {page.relative_to(root)}")
    return changed


def main(argv: Sequence[str]) -> int:
    check = "--check" in argv
    stale = []
    for page in pages():
        text = page.read_text()
        new = render(text)
        if new != text:
            stale.append(page.relative_to(ROOT))
            if not check:
                page.write_text(new)
    verb = "differ from their stored outputs" if check else "rewritten"
    for page in stale:
        print(f"bench_quotes: {page}: blocks {verb}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
