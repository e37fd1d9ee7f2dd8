"""The cases of tests/conformance/headers.json through this client's header
parser: the same answers as loadgen's (ratelimit_headers_test) and Node's."""

import json
from pathlib import Path

import pytest

from backpressure import rate_limits_from_headers

HEADERS = json.loads(
    (Path(__file__).resolve().parents[3] / "tests/conformance/headers.json").read_text())


@pytest.mark.parametrize("case", HEADERS["cases"], ids=lambda c: c["name"])
def test_headers_case(case):
    got = rate_limits_from_headers(case["headers"], case["now_ms"])
    want = case["expect"]
    assert got.remaining_requests == want["remaining_requests"]
    assert got.reset_requests_ms == want["reset_requests_ms"]
    assert got.remaining_tokens == want["remaining_tokens"]
    assert got.reset_tokens_ms == want["reset_tokens_ms"]


def test_header_names_match_in_any_case():
    got = rate_limits_from_headers({"X-RateLimit-Remaining-Requests": "4",
                                    "X-RateLimit-Reset-Requests": "2s"}, 0)
    assert (got.remaining_requests, got.reset_requests_ms) == (4, 2000)  # "2s" = 2000 ms
