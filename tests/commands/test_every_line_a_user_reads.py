"""Every line a user reads, from every figure verb, the report and the help, at 80 columns and in
a pipe, on a measured demo (power assumed), a search's results and a simulated search: no figure
parted from its unit by a line break (`p95 TTFT ≤ 2` / `s`, `1,068 /` / `0`), no row of a split
table without its identity, no module name or backtick, no `(s)` plural or `1 GPUs`, one
comparison sign (`≥`, never `>=`), no raw float (`0.9649423466932137`), and a per-MW figure on
assumed power says so in its own cell."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from agentload.cli import main
from agentload.console import WIDE_COLUMNS
from tests.paths import REPO
from tests.report.builder import build_results

DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"
"""A saved demo: llama.cpp on a CPU, its power declared (assumed), no GPU count."""
LAYOUTS = REPO / "tests" / "report" / "data" / "layouts-b300x8.json"
"""A saved layout search (8 x B300, five tiers, two searched deployments)."""
PIPE = 0
BOX = "│┃"
HEAVY = set("┏┓┗┛┡┩└┘┳┻╇━─┼┬┴┯┷╋┌┐├┤")
TEAM = ["--developers", "100", "--agents-per-developer", "2", "--active-share", "25%"]
PRICES = [
    "--gpu-hour-price",
    "2.26",
    "--capex-per-gpu",
    "30000",
    "--years",
    "4",
    "--kwh-price",
    "0.1",
]
HOSTED = ["--input-price", "1.25", "--output-price", "10", "--cached-discount", "90%"]
SIM_WORKLOAD = (
    "synthetic:agentic-coding?sessions=24&system_tokens=2048&min_input=3000&mean_input=8000"
    "&max_input=24000&task_median=400&calls_median=10&tool_call_output_median=40"
    "&burst_output_median=300&max_output=1024&tool_time_median_s=2&max_tool_time_s=10"
)

FIGURE = re.compile(r"[(~≈<>≤≥$]*\d[\d,.]*(?:[-–]\d[\d,.]*)?[%kMGT×x]?")
"""A word that is a figure (as `agentload.console` tells one)."""
UNIT = re.compile(
    r"(?:s|ms|W|kW|MW|GW|Wh|kWh|MWh|GB|TB|%|tokens(?:/s)?|tok/s|GPU-h|GPU-s|agents?|GPUs?|"
    r"probes?|calls?|calls/s|J/token|years?|hours?|nats|/.*)[,;:.)]?"
)
"""A word that is a unit, or a `/` going on (`1,068 /` `0`)."""
MODULE = re.compile(r"\bagentload\.[a-z_]+")
RAW_FLOAT = re.compile(r"\d\.0*[1-9]\d{4,}")
"""More than four significant digits after the point: a float printed as Python holds it."""
SINGULAR = re.compile(r"(?<![\d.,])1 (GPUs|probes|agents|vCPUs|devices|calls|threads|points)\b")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_results(tmp_path_factory.mktemp("every-line") / "r").path


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")
    out = tmp_path_factory.mktemp("every-line-sim") / "s"
    deployment = ["--system", "h200_sxm", "--model", "Qwen/Qwen3-8B", "--gpus", "2"]
    search = ["--tier", "fast:150:2", "--tier", "slow:40:5", "--max-agents", "32"]
    search += ["--settle", "5", "--window", "15", "--max-window", "30", "--ramp", "2"]
    search += ["--min-samples", "10", "--seed", "5", "--salt", "fixed"]
    argv = ["simulate", "--workload", SIM_WORKLOAD, *deployment, *search, "--out", str(out)]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("every-line-layouts")
    (folder / "layouts.json").write_bytes(LAYOUTS.read_bytes())
    return folder


def _verbs(results: Path, simulated: Path, layouts: Path) -> dict[str, list[str]]:
    r, s, d = str(results), str(simulated), str(DEMO)
    return {
        "report demo": ["report", d, "--no-html"],
        "report simulated": ["report", s, "--no-html"],
        "report layouts": ["report", str(layouts), "--no-html"],
        "decode demo": ["decode", d],
        "decode simulated": ["decode", s],
        "frontier": ["frontier", d, r, s],
        "compare": ["compare", d, s, r],
        "cost": ["cost", d, *PRICES, *HOSTED],
        "cost simulated": ["cost", s, *PRICES, *HOSTED],
        "plan demo": ["plan", d, "--tier", "cpu60", "--gpus-per-deployment", "1", *TEAM, *PRICES],
        "plan simulated": ["plan", s, "--tier", "slow", *TEAM, *PRICES],
        "workload stats": ["workload", "stats", f"{SIM_WORKLOAD}&max_output=2048"],
        **{
            f"{verb} --help": [verb, "--help"]
            for verb in ("cost", "decode", "plan", "frontier", "compare", "simulate", "demo")
        },
    }


VERBS = [
    "report demo",
    "report simulated",
    "report layouts",
    "decode demo",
    "decode simulated",
    "frontier",
    "compare",
    "cost",
    "cost simulated",
    "plan demo",
    "plan simulated",
    "workload stats",
    *(f"{verb} --help" for verb in ("cost", "decode", "plan", "frontier", "compare", "simulate")),
    "demo --help",
]


def _read(
    argv: list[str], width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[str, int]:
    if width == PIPE:
        monkeypatch.delenv("COLUMNS", raising=False)
        width = WIDE_COLUMNS
    else:
        monkeypatch.setenv("COLUMNS", str(width))
    try:
        code = main(argv)
    except SystemExit as exit:  # --help
        code = int(exit.code or 0)
    assert code == 0
    captured = capsys.readouterr()
    return captured.out + captured.err, width


def cells(line: str) -> list[str]:
    """A line's text, a table row's cell by cell."""
    if any(c in BOX for c in line):
        return [cell.strip() for cell in re.split(f"[{BOX}]", line)[1:-1]]
    return [line.strip()]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def parted(lines: list[str]) -> list[str]:
    """Each place a line ends on a figure and the next (in the same cell) goes on with its
    unit: a figure parted from its unit."""
    found = []
    for above, below in itertools.pairwise(lines):
        if set(above) & HEAVY or set(below) & HEAVY:
            continue
        up, down = cells(above), cells(below)
        if len(up) != len(down):
            continue
        if len(up) == 1 and _indent(below) <= _indent(above):
            continue  # a line of its own, not the continuation of the one above
        for a, b in zip(up, down, strict=True):
            last, first = (a.split() or [""])[-1], (b.split() or [""])[0]
            if FIGURE.fullmatch(last) and UNIT.fullmatch(first):
                found.append(f"{a!r} / {b!r}")
            if last in {"/", "≤", "≥", "×"}:
                found.append(f"{a!r} / {b!r}")
    return found


@pytest.mark.parametrize("width", [80, PIPE], ids=["80 columns", "pipe"])
@pytest.mark.parametrize("verb", VERBS)
def test_every_line_keeps_figures_whole_and_in_plain_words(
    verb: str,
    width: int,
    results: Path,
    simulated: Path,
    layouts: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, columns = _read(_verbs(results, simulated, layouts)[verb], width, monkeypatch, capsys)
    lines = out.splitlines()
    assert lines, verb
    assert not [line for line in lines if len(line) > columns], f"{verb}: wider than {columns}"
    assert not parted(lines), f"{verb}: a figure parted from its unit: {parted(lines)[:3]}"
    assert not MODULE.findall(out), f"{verb}: module names {MODULE.findall(out)}"
    assert "`" not in out, f"{verb}: a backtick"
    assert "(s)" not in out.replace("(s)\n", "").replace(", s)", ""), f"{verb}: a '(s)' plural"
    assert not SINGULAR.findall(out), f"{verb}: {SINGULAR.findall(out)}"
    assert ">=" not in out and "<=" not in out, f"{verb}: '>=' or '<=' (one sign: ≥, ≤)"
    assert not RAW_FLOAT.findall(out), f"{verb}: raw floats {RAW_FLOAT.findall(out)[:3]}"


def test_a_split_table_carries_each_rows_identity(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """decode's checks had `tier cpu60 | agrees` twice in part 2, their relation only in part 1:
    rows whose key does not tell them apart are records instead, each with all its cells."""
    out, _ = _read(["decode", str(DEMO)], 80, monkeypatch, capsys)
    checks = out[out.index("Consistency checks") :]
    assert "(2 of 2)" not in checks.splitlines()[0]
    block = checks.split("\n\n")[0]
    assert "  point: tier cpu60" in block and "  relation: agents per MW" in block
    assert "  verdict: agrees" in block


def test_per_mw_on_assumed_power_says_so_in_its_cell_and_the_title(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's per-MW cells read `3.33G assumed` in decode, frontier and compare (they read
    `3.33G`, with only a note saying so), and decode is not headed `Decoded (measured)`."""
    decode, _ = _read(["decode", str(DEMO)], PIPE, monkeypatch, capsys)
    assert "Decoded (measured; power assumed): demo" in decode
    assert "Decoded (measured):" not in decode
    assert re.search(r"│ +3\.33G assumed │ +1\.36M assumed │", decode)
    frontier, _ = _read(["frontier", str(DEMO)], PIPE, monkeypatch, capsys)
    assert re.search(r"│ +2\.20 assumed │ +\S+ assumed │", frontier)
    compare, _ = _read(["compare", str(DEMO), str(DEMO)], PIPE, monkeypatch, capsys)
    assert re.search(r"│ agents per MW +│ agents/MW +│ 1\.36M assumed", compare)


def test_numbers_read_in_one_style(
    simulated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Typed figures as typed (`4` years, `2` agents), money in dollars (`$0.10` per kWh), one
    spelling a unit (`tok/s per GPU`, `tokens/s per MW`, `$/M tokens`) and three significant
    digits, zeros kept (`0.0650` beside `0.0866`, not `0.065`)."""
    argv = ["plan", str(simulated), "--tier", "slow", *TEAM, *PRICES]
    plan, _ = _read(argv, PIPE, monkeypatch, capsys)
    assert re.search(r"│ owned: written off over +│ 4 +│ years", plan)
    assert re.search(r"│ agents per developer at peak +│ 2 +│ agents", plan)
    assert re.search(r"│ electricity +│ \$0\.10 +│ per kWh", plan)
    compare, _ = _read(["compare", str(DEMO), str(simulated)], PIPE, monkeypatch, capsys)
    for old in ("tok/s/GPU", "tok/s/MW", "$/M tok ", "$/M out"):
        assert old not in compare
    assert "tok/s per GPU" in compare and "tokens/s per MW" in compare


@pytest.mark.parametrize("verb", ["cost", "decode", "plan", "frontier", "search", "simulate"])
def test_help_never_breaks_an_option_at_its_hyphen(
    verb: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cost --help` broke `--capex-` / `per-gpu`: argparse's wrap breaks at hyphens."""
    out, _ = _read([verb, "--help"], 80, monkeypatch, capsys)
    assert not [line for line in out.splitlines() if re.search(r"\w-$", line)]


def test_a_workload_spec_breaks_after_an_ampersand(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`workload stats` broke the demo's spec mid-word (`&m` / `ax_input=16000`)."""
    out, _ = _read(["workload", "stats", SIM_WORKLOAD], 80, monkeypatch, capsys)
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("source: synthetic"))
    spec = [lines[start]]
    while lines[start + len(spec)].startswith("  "):
        spec.append(lines[start + len(spec)])
    assert len(spec) > 1 and all(line.endswith("&") for line in spec[:-1])
