"""Tables printed to a pipe keep their full cells (rich would cut them at 80 columns)."""

from __future__ import annotations

import io

from rich.table import Table
from twistarena.clients.terminal import make_console


def test_a_piped_table_is_as_wide_as_its_content() -> None:
    out = io.StringIO()
    console = make_console(file=out)
    assert not console.is_terminal
    table = Table()
    table.add_column("win share (95% CI)")
    table.add_column("entrant")
    table.add_row("0.42 (0.30-0.55)", "heuristic-with-a-long-registered-name " * 3)
    console.print(table)
    text = out.getvalue()
    assert "0.42 (0.30-0.55)" in text
    assert "heuristic-with-a-long-registered-name " * 3 in text.replace("│", "")
    assert "…" not in text
    console.rule("rules keep the terminal width")
    assert max(len(line) for line in out.getvalue().splitlines()[-1:]) == console.width
