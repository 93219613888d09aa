"""Issue 14 (6): per-call costs in the README, the docs/ pages and the class pages come from the
benchmarks' stored output, never retyped. No engine, no benchmark run: the stored outputs in
docs/benchmarks/ are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import bench_quotes
from tools.bench_quotes import ALLOWED, BLOCK, QuoteError, page_name, pages, publish, render, unquoted

ROOT = Path(__file__).resolve().parents[1]
FIX = "run `.venv/bin/python -m tools.bench_quotes` to rewrite them from docs/benchmarks/"


@pytest.mark.parametrize("page", pages(), ids=page_name)
def test_every_quoted_figure_is_what_its_benchmark_stored(page: Path) -> None:
    text = page.read_text()
    assert render(text) == text, f"{page.name}: benchmark figures differ from their stored output; {FIX}"


@pytest.mark.parametrize("page", pages(), ids=page_name)
def test_no_per_call_cost_is_typed_outside_a_block(page: Path) -> None:
    typed = unquoted(page.read_text(), ALLOWED.get(page_name(page), ()))
    assert typed == [], f"{page.name} types per-call costs by hand: {typed}; quote them with a bench: block"


def test_the_allow_list_names_phrases_that_are_there() -> None:
    """An allowed phrase that was reworded would allow nothing (and hide nothing): keep the list true."""
    for name, phrases in ALLOWED.items():
        prose = " ".join((ROOT / name).read_text().split())
        for phrase in phrases:
            assert " ".join(phrase.split()) in prose, f"{name}: allowed phrase gone: {phrase!r}"


def test_every_quoted_benchmark_writes_its_blocks() -> None:
    """The figures follow each run: a benchmark whose output a page quotes calls `publish` itself."""
    sources = {match["source"] for page in pages() for match in BLOCK.finditer(page.read_text())}
    assert sources >= {"addon", "binding"}
    for source in sources:
        script = (ROOT / "benchmarks" / f"bench_{source}.py").read_text()
        assert f'publish("{source}")' in script, f"benchmarks/bench_{source}.py does not publish its figures"


# --- the mechanism, on a page and stored outputs of its own ----------------------------------------
STORED_ADDON = """# Addon frame time

| guards | path | without p50 / p99 (ms) | with p50 / p99 (ms) | added p50 (ms) | of 16.6 ms |
|---:|---|---:|---:|---:|---:|
| 1,000 | batched | 0.12 / 0.24 | 1.85 / 5.42 | 1.73 | 10% |

| guards | `record_event` (us) | `awareness_of` (us) | `evaluate` (us) | `query_strongest` (us) |
|---:|---:|---:|---:|---:|
| 10 | 3.21 / 0.64 (5.0x) | 3.57 / 1.69 (2.1x) | 5.54 / 1.45 (3.8x) | 12.80 / 2.15 (5.9x) |
| 200 | 2.88 / 0.57 (5.1x) | 3.10 / 1.95 (1.6x) | 4.98 / 1.34 (3.7x) | 8.62 / 2.12 (4.1x) |
"""


def a_checkout(tmp_path: Path, page: str) -> Path:
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "docs" / "classes").mkdir()
    (tmp_path / "docs" / "benchmarks" / "addon.md").write_text(STORED_ADDON)
    (tmp_path / "README.md").write_text(page)
    return tmp_path


def test_a_block_is_rewritten_from_the_stored_table_and_the_rest_of_the_page_kept(tmp_path: Path) -> None:
    page = (
        "`evaluate` costs <!-- bench:addon:per-call evaluate -->5-5.5 us<!-- /bench --> a call,\n"
        "<!-- bench:addon:per-call-ratio evaluate -->about 4x<!-- /bench --> GDScript; 1,000 guards add\n"
        "<!-- bench:addon:frame added 1000 batched -->2.20 ms<!-- /bench --> (p99 "
        "<!-- bench:addon:frame p99 1000 batched -->6.8 ms<!-- /bench -->).\n"
    )
    root = a_checkout(tmp_path, page)
    assert publish("addon", root) == [root / "README.md"]
    assert (root / "README.md").read_text() == (
        "`evaluate` costs <!-- bench:addon:per-call evaluate -->5.0-5.5 us<!-- /bench --> a call,\n"
        "<!-- bench:addon:per-call-ratio evaluate -->3.7-3.8x<!-- /bench --> GDScript; 1,000 guards add\n"
        "<!-- bench:addon:frame added 1000 batched -->1.7 ms<!-- /bench --> (p99 "
        "<!-- bench:addon:frame p99 1000 batched -->5.4 ms<!-- /bench -->).\n"
    )
    assert publish("addon", root) == []  # written once: the same again changes nothing
    assert publish("binding", root) == []  # another benchmark's run leaves these blocks alone


def test_a_block_the_stored_output_cannot_answer_is_a_clear_error(tmp_path: Path) -> None:
    folder = a_checkout(tmp_path, "") / "docs" / "benchmarks"
    with pytest.raises(QuoteError, match="no quote bench:addon:per-cal"):
        render("<!-- bench:addon:per-cal evaluate -->1 us<!-- /bench -->", folder=folder)
    with pytest.raises(QuoteError, match="no method 'evaluat'"):
        render("<!-- bench:addon:per-call evaluat -->1 us<!-- /bench -->", folder=folder)
    with pytest.raises(QuoteError, match="no row"):
        render("<!-- bench:addon:frame added 200 batched -->1 ms<!-- /bench -->", folder=folder)
    with pytest.raises(QuoteError, match=r"no stored output binding\.md"):
        render("<!-- bench:binding:python callbacks -->1 us<!-- /bench -->", folder=folder)


def test_a_benchmark_run_reports_a_block_it_cannot_write_and_keeps_going(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = "<!-- bench:addon:frame added 200 batched -->1 ms<!-- /bench -->"
    root = a_checkout(tmp_path, page)
    assert publish("addon", root) == []
    assert "README.md: no row" in capsys.readouterr().err
    assert (root / "README.md").read_text() == page


def test_typed_per_call_figures_are_found_outside_blocks_only() -> None:
    page = (
        "a call costs about 3 us, a range 3-3.5 us, a check\n~50 ns;"
        " <!-- bench:addon:per-call evaluate -->4.9-5.5 us<!-- /bench --> is quoted; 2.3 ms is a frame."
    )
    assert unquoted(page) == ["3 us", "3-3.5 us", "~50 ns"]
    assert unquoted(page, ["a range 3-3.5 us, a\n check"]) == ["3 us", "~50 ns"]


def test_the_stored_markdown_tables_are_read_by_column_and_row() -> None:
    tables = bench_quotes.markdown_tables(STORED_ADDON)
    assert [table.header[1] for table in tables] == ["path", "`record_event` (us)"]
    assert tables[1].cells("`evaluate` (us)", guards="200") == ["4.98 / 1.34 (3.7x)"]
    assert bench_quotes.numbers("4.98 / 1.34 (3.7x)") == [4.98, 1.34, 3.7]
    assert bench_quotes.numbers("| 1,000 |") == [1000.0]


def test_the_per_call_table_with_a_path_column_is_read_for_the_path_asked(tmp_path: Path) -> None:
    """The per-call table grew a path column (the Dictionary path, the nodes feeding the batch) and
    cells that a path does not measure ("-"): the Dictionary path is read unless another is named."""
    stored = (
        STORED_ADDON.split("\n\n", maxsplit=1)[0]
        + "\n\n"
        + (
            "| guards | path | `record_event` (us) | `evaluate` (us) | `set_inputs` (us) |\n"
            "|---:|---|---:|---:|---:|\n"
            "| 200 | dictionary | 0.90 / 0.57 (1.6x) | 4.94 / 1.31 (3.8x) | - |\n"
            "| 200 | nodes | 0.95 / 0.60 (1.6x) | - | 1.50 / 0.30 (5.0x) |\n"
        )
    )
    folder = a_checkout(tmp_path, "") / "docs" / "benchmarks"
    (folder / "addon.md").write_text(stored)

    def quote(spec: str) -> str:
        block = BLOCK.search(render(f"<!-- bench:addon:{spec} -->?<!-- /bench -->", folder=folder))
        assert block is not None
        return block["body"]

    assert quote("per-call record_event") == "0.90 us"
    assert quote("per-call record_event nodes") == "0.95 us"
    assert quote("per-call set_inputs nodes") == "1.5 us"
    assert quote("per-call-ratio") == "1.6-3.8x"  # the Dictionary path's measured methods
    with pytest.raises(QuoteError, match="no set_inputs measured on the dictionary path"):
        quote("per-call set_inputs")
