"""The Prometheus text-format parser on real-looking expositions and on the format's corners."""

from __future__ import annotations

import math

import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentload.errors import InputError
from agentload.measure.prometheus import parse

DCGM = """\
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0", UUID="GPU-a",modelName="NVIDIA H100"} 409.692000
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b",modelName="NVIDIA H100"} 23.528000
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a"} 319159391
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1",UUID="GPU-b"} 31035686671
"""

HISTOGRAM = """\
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="m"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 12.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 12.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 3.25
"""


def test_dcgm_exposition_series_labels_help_and_types() -> None:
    exposition = parse(DCGM)
    power = exposition.series("DCGM_FI_DEV_POWER_USAGE")
    assert [s.label("gpu") for s in power] == ["0", "1"]
    assert [s.value for s in power] == [409.692, 23.528]
    assert power[0].label_map["modelName"] == "NVIDIA H100"
    assert power[0].label("UUID") == "GPU-a"  # a blank after the comma is allowed
    assert exposition.types["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] == "counter"
    assert exposition.help["DCGM_FI_DEV_POWER_USAGE"] == "Power draw (in W)."
    assert exposition.value("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") == 319159391 + 31035686671
    assert exposition.value("DCGM_FI_DEV_POWER_USAGE", {"gpu": "1"}) == 23.528
    assert exposition.value("DCGM_FI_DEV_POWER_USAGE", {"gpu": ("0", "1")}) == pytest.approx(
        409.692 + 23.528
    )
    assert exposition.value("DCGM_FI_DEV_POWER_USAGE", {"gpu": "7"}) is None
    assert exposition.value("NOPE") is None


def test_histograms_stay_plain_series_with_special_values() -> None:
    exposition = parse(HISTOGRAM)
    buckets = exposition.series("vllm:time_to_first_token_seconds_bucket")
    assert [b.label("le") for b in buckets] == ["0.001", "+Inf"]
    assert exposition.value("vllm:time_to_first_token_seconds_count") == 12.0
    assert exposition.types["vllm:time_to_first_token_seconds"] == "histogram"


def test_values_timestamps_and_escapes() -> None:
    text = (
        "# HELP m_total A \\\\ backslash and\\nnewline; \\q kept.\n"
        'm_total{path="C:\\\\dir",quote="say \\"hi\\"",nl="a\\nb"} 1.5e3 1700000000123\n'
        "nan_metric NaN\n"
        "pos_inf +Inf\n"
        "neg_inf -Inf\n"
        "neg -0.25\n"
        'trailing_comma{a="1",} 2\n'
        "empty_labels{} 3\n"
        '  \t spaced{ a = "x" , b="y" }   4   \n'
        'hash_in_label{path="/a#b"} 5\n'
    )
    exposition = parse(text)
    m = exposition.series("m_total")[0]
    assert m.label_map == {"path": "C:\\dir", "quote": 'say "hi"', "nl": "a\nb"}
    assert m.value == 1500.0
    assert m.timestamp_ms == 1700000000123
    assert exposition.help["m_total"] == "A \\ backslash and\nnewline; \\q kept."
    assert math.isnan(exposition.series("nan_metric")[0].value)
    assert exposition.series("pos_inf")[0].value == math.inf
    assert exposition.series("neg_inf")[0].value == -math.inf
    assert exposition.value("neg") == -0.25
    assert exposition.series("trailing_comma")[0].labels == (("a", "1"),)
    assert exposition.series("empty_labels")[0].labels == ()
    assert exposition.series("spaced")[0].label_map == {"a": "x", "b": "y"}
    assert exposition.series("hash_in_label")[0].label("path") == "/a#b"
    assert exposition.series("neg")[0].timestamp_ms is None


def test_openmetrics_extras_and_quoted_names() -> None:
    text = (
        '{"my.dotted.metric", zone="a"} 7\n'
        'requests_total{code="200"} 3 # {trace_id="abc"} 1.0 1700000000.0\n'
        "# some free comment\n"
        "# EOF\n"
    )
    exposition = parse(text)
    assert exposition.series("my.dotted.metric")[0].label_map == {"zone": "a"}
    assert exposition.value("requests_total") == 3
    assert exposition.names() == {"my.dotted.metric", "requests_total"}


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("metric", "no value"),
        ("metric abc", "bad value"),
        ("metric 1_000", "bad value"),
        ('metric{a="1" 1', "label"),
        ("metric{a=1} 1", "quoted"),
        ('metric{a="1} 1', "unterminated"),
        ('metric{a="\\x"} 1', "escape"),
        ("metric 1 notatime", "timestamp"),
        ("metric 1 2 3", "unexpected"),
        ("9metric 1", "metric name"),
        ('metric{1a="x"} 1', "label name"),
    ],
)
def test_malformed_lines_name_source_and_line(line: str, why: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(f"ok 1\n\n{line}\n", source="http://h/metrics")
    message = str(caught.value)
    assert message.startswith("http://h/metrics:3: bad Prometheus line")
    assert why in message
    assert "\n" not in message


def test_well_formed_expositions_read_as_prometheus_client_reads_them() -> None:
    """Where both parsers are right, agentload's reads what the reference Python client reads,
    sample for sample (`agentload.measure.prometheus` says where they part, and why)."""
    gauges = DCGM.split("# HELP DCGM_FI_DEV_TOTAL_ENERGY")[0]
    text = (
        gauges
        + HISTOGRAM
        + 'm_total{path="C:\\\\dir",quote="say \\"hi\\"",nl="a\\nb"} 1.5e3 1700000000123\n'
        + 'spaced{ a = "x" , b="y" } 4\n'
        + "pos_inf +Inf\n"
    )
    ours = [(s.name, s.label_map, s.value, s.timestamp_ms) for s in parse(text).samples]
    theirs = [
        (s.name, s.labels, s.value, None if s.timestamp is None else round(s.timestamp * 1000))
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]
    assert len(ours) == 9 and ours == theirs
