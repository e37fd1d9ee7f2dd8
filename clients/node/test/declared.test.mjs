// The cases of tests/conformance/declared.json through this client's reader
// of the declared configuration: each is refused with the C++ reader's
// message (bp::GateConfigFromJson), to the letter.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { formatNumber, readDeclaredConfig, seedPairs } from "../declared.mjs";

const CASES = JSON.parse(readFileSync(new URL("../../../tests/conformance/declared.json", import.meta.url)));

for (const c of CASES.cases) {
  test(`refused with the C++ reader's message: ${c.name}`, () => {
    assert.throws(() => seedPairs(c.config), (e) => {
      assert.equal(e.message, c.error);
      return true;
    });
  });
}

test("a text is refused with the same message after its source", () => {
  const c = CASES.cases.find((x) => x.name === "a negative tenant weight");
  assert.throws(() => readDeclaredConfig(JSON.stringify(c.config)), (e) => {
    assert.equal(e.message, `declared configuration: ${c.error}`);
    return true;
  });
});

test("the version may be left out of an object", () => {
  // 1 request/s, burst 1 s; no max costs, classes or tuning: sent empty.
  assert.deepEqual(seedPairs({ caps: { requests_per_s: 1 } }).slice(0, 10), [
    "requests_per_s", "1", "tokens_per_s", "0", "burst_s", "1",
    "max_cost_requests", "", "max_cost_tokens", ""]);
});

test("numbers are written as bp::FormatNumber writes them", () => {
  for (const [value, text] of [[60, "60"], [0.5, "0.5"], [1e-6, "1e-06"], [1e6, "1e+06"],
    [8.64e7, "8.64e+07"], [1e-3 / 60, "1.6666666666666667e-05"], [1e9 / 60, "16666666.666666666"],
    [2 ** 53, "9007199254740992"], [123456789, "123456789"], [-2.5, "-2.5"]]) {
    assert.equal(formatNumber(value), text);
  }
});
