"""The annotation language the docs test reads: what each directive does to a command."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_blocks import AnnotationError, Block, fenced_blocks, parse, with_options


def blocks(tmp_path: Path, markdown: str) -> list[Block]:
    doc = tmp_path / "doc.md"
    doc.write_text(markdown)
    return [parse(block) for block in fenced_blocks(doc)]


def test_commands_are_the_lines_a_shell_would_run(tmp_path: Path) -> None:
    (block,) = blocks(
        tmp_path,
        "```\n"
        "vcosim bus &                # the router\n"
        "  output the docs show\n"
        'pip install -e ".[viewer]" && vcosim view \\\n'
        "    --listen 0.0.0.0:8080\n"
        "```\n",
    )
    assert [c.words for c in block.commands] == [
        ["vcosim", "bus"],
        ["pip", "install", "-e", ".[viewer]"],
        ["vcosim", "view", "--listen", "0.0.0.0:8080"],
    ]
    assert [c.background for c in block.commands] == [True, False, False]
    assert [c.line for c in block.commands] == [2, 4, 4]


def test_an_annotation_belongs_to_the_block_right_after_it(tmp_path: Path) -> None:
    first, second = blocks(
        tmp_path,
        "<!-- docs-test: set --duration 1 -->\n\n```\nvcosim sim --duration 30\n```\n"
        "<!-- docs-test: set --duration 2 -->\nsome prose\n```\nvcosim sim\n```\n",
    )
    assert first.commands[0].words == ["vcosim", "sim", "--duration", "1"]
    assert second.commands[0].words == ["vcosim", "sim"] and not second.annotated


def test_directives_for_one_command_by_its_beginning(tmp_path: Path) -> None:
    (block,) = blocks(
        tmp_path,
        "<!-- docs-test\n"
        "replace 10.0.0.5 => 127.0.0.1  # one machine here\n"
        "vcosim bus: background; ready router on; interrupt; exit 130|0\n"
        "vcosim sim: with vcosim controller cruise; set --duration 2 --debug-log runs/x\n"
        "python my.py: delay 6; ends-within 5 of vcosim sim; expect done; file runs/x/*.csv\n"
        "-->\n"
        "```\nvcosim bus\nvcosim sim --bus 10.0.0.5 --duration 60\npython my.py\n```\n",
    )
    bus, sim, mine = block.commands
    assert bus.background and bus.interrupt and bus.ready == "router on"
    assert bus.allowed_exits == (130, 0)
    assert sim.words == ["vcosim", "sim", "--bus", "127.0.0.1", "--duration", "2"] + [
        "--debug-log",
        "runs/x",
    ]
    assert sim.companions == ["vcosim controller cruise"] and sim.allowed_exits == (0,)
    assert mine.delay == 6 and mine.ends_within == (5, "vcosim sim")
    assert mine.expect == ["done"] and mine.files == ["runs/x/*.csv"]


def test_a_command_named_exactly_wins_over_longer_ones(tmp_path: Path) -> None:
    (block,) = blocks(
        tmp_path,
        "<!-- docs-test\nvcosim drive: interrupt\n-->\n"
        "```\nvcosim drive\nvcosim drive --wall-time 30\n```\n",
    )
    assert [c.interrupt for c in block.commands] == [True, False]


def test_python_blocks_run_as_one_program_changed_by_replace(tmp_path: Path) -> None:
    saved, run = blocks(
        tmp_path,
        "<!-- docs-test: save-as keep.py -->\n```python\nx = 1\n```\n"
        "<!-- docs-test\n+ vcosim bus: background; interrupt\nreplace run(60) => run(2)\n-->\n"
        "```python\nclient.run(60)\n```\n",
    )
    assert saved.save_as == "keep.py" and saved.commands == []
    assert run.text == "client.run(2)\n"
    assert [c.words for c in run.commands] == [["vcosim", "bus"], ["python"]]
    assert run.commands[0].extra and run.commands[0].interrupt


@pytest.mark.parametrize(
    ("annotation", "complaint"),
    [
        ("vcosim: interrupt", "2 commands start with it"),
        ("vcosim sim: bounce", "unknown directive 'bounce'"),
        ("replace 10.0.0.9 => 127.0.0.1", "nothing to replace"),
        ("vcosim bus: help", "help needs the reason"),
        ("vcosim bus: ends-within 5 of python", "a command the block lacks"),
    ],
)
def test_an_annotation_the_runner_cannot_follow_is_an_error(
    tmp_path: Path, annotation: str, complaint: str
) -> None:
    with pytest.raises(AnnotationError, match=complaint):
        blocks(tmp_path, f"<!-- docs-test\n{annotation}\n-->\n```\nvcosim bus\nvcosim sim\n```\n")


def test_set_replaces_as_many_values_as_it_gives() -> None:
    words = ["vcosim", "sim", "--duration", "30", "--check", "FILE"]
    assert with_options(words, ["--duration", "1", "--check", "--out", "x"]) == [
        "vcosim",
        "sim",
        "--duration",
        "1",
        "--check",
        "FILE",
        "--out",
        "x",
    ]


def test_expect_takes_numbers_in_ranges() -> None:
    from doc_runs import unshown

    output = "plot: run.csv\n  groundspeed (m/s): starts 0, ends 19.98, max 20.1\n"
    assert unshown("groundspeed (m/s): starts 0", output) is None
    assert unshown("ends {19.5..20.5}, max {19.5..22}", output) is None
    assert unshown("ends {-1e3..1e-3}", output) == ("printed 'ends 19.98', not 'ends {-1e3..1e-3}'")
    assert unshown("rpm (1/min): ends {0..9000}", output) == (
        "did not print 'rpm (1/min): ends {0..9000}'"
    )
    assert unshown("{0..1} answered", "5999 answered; 0 answered") is None  # any line will do
    assert unshown("│ applied │ {390..400} │", "│ applied     │ 398     │") is None
