// The cases of tests/conformance/headers.json through this client's header
// parser: the same answers as loadgen's (ratelimit_headers_test) and Python's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { rateLimitsFromHeaders } from "../headers.mjs";

const HEADERS = JSON.parse(readFileSync(new URL("../../../tests/conformance/headers.json", import.meta.url)));

test("the file holds the cases", () => assert.ok(HEADERS.cases.length >= 6));

for (const c of HEADERS.cases) {
  test(c.name, () => {
    const got = rateLimitsFromHeaders(c.headers, c.now_ms);
    assert.deepEqual(got, {
      remainingRequests: c.expect.remaining_requests,
      resetRequestsMs: c.expect.reset_requests_ms,
      remainingTokens: c.expect.remaining_tokens,
      resetTokensMs: c.expect.reset_tokens_ms,
    });
  });
}

test("a fetch Headers object, names in any case", () => {
  const h = new Headers({ "X-RateLimit-Remaining-Requests": "4", "X-RateLimit-Reset-Requests": "2s" });
  const got = rateLimitsFromHeaders(h, 0);
  assert.equal(got.remainingRequests, 4);
  assert.equal(got.resetRequestsMs, 2000);  // "2s" = 2000 ms
});
