"""The cases of tests/conformance/declared.json through this client's reader
of the declared configuration: each is refused with the C++ reader's message
(bp::GateConfigFromJson), to the letter."""

import json
from pathlib import Path

import pytest

from backpressure import read_declared_config
from backpressure.declared import format_number, seed_pairs

CASES = json.loads(
    (Path(__file__).resolve().parents[3] / "tests/conformance/declared.json").read_text())


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_refused_with_the_cpp_readers_message(case):
    with pytest.raises(ValueError) as e:
        seed_pairs(case["config"])
    assert str(e.value) == case["error"]


def test_a_text_is_refused_with_the_same_message_after_its_source():
    case = next(c for c in CASES["cases"] if c["name"] == "a negative tenant weight")
    with pytest.raises(ValueError) as e:
        read_declared_config(json.dumps(case["config"]))
    assert str(e.value) == "declared configuration: " + case["error"]


def test_the_version_may_be_left_out_of_a_dict():
    # 1 request/s, burst 1 s; no max costs, classes or tuning: sent empty.
    assert seed_pairs({"caps": {"requests_per_s": 1}})[:10] == [
        "requests_per_s", "1", "tokens_per_s", "0", "burst_s", "1",
        "max_cost_requests", "", "max_cost_tokens", ""]


@pytest.mark.parametrize("value, text", [
    (60, "60"), (0.5, "0.5"), (1e-6, "1e-06"), (1e6, "1e+06"), (8.64e7, "8.64e+07"),
    (1e-3 / 60, "1.6666666666666667e-05"), (1e9 / 60, "16666666.666666666"),
    (2**53, "9007199254740992"), (123456789, "123456789"), (-2.5, "-2.5")])
def test_numbers_are_written_as_bp_format_number_writes_them(value, text):
    assert format_number(value) == text
