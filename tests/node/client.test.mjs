// The official openai npm client (pinned in package-lock.json) against a
// running mockapi at $MOCKAPI_URL (tests/node/run.sh starts one). Each test
// first replaces the limits through PUT /admin/config, which also resets them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.env.MOCKAPI_URL;
assert.ok(base, 'MOCKAPI_URL must point at a running mockapi');
const model = 'gpt-4o-mini';
const messages = [{ role: 'user', content: 'Hello from the official client.' }];

async function setLimits(limits) {
  const res = await fetch(`${base}/admin/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ limits }),
  });
  assert.equal(res.status, 200, await res.text());
}

async function stats() {
  return (await fetch(`${base}/stats`)).json();
}

// A fetch that records when each attempt started and what it was told.
function recordingFetch(log) {
  return async (url, init) => {
    const started = performance.now();
    const res = await fetch(url, init);
    log.push({ started, ended: performance.now(), status: res.status,
               retryAfterMs: res.headers.get('retry-after-ms') });
    return res;
  };
}

test('a 429 is a RateLimitError with status 429 and the rate-limit headers', async () => {
  // A token bucket of one request a minute: a fixed window's edge is on the
  // wall clock's minute and could fall between the calls.
  await setLimits([{ dimension: 'requests', algorithm: 'token_bucket', limit: 1, window_s: 60 }]);
  const client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 0 });
  const ok = await client.chat.completions.create({ model, messages });
  assert.equal(ok.object, 'chat.completion');
  assert.equal(ok.usage.total_tokens, ok.usage.prompt_tokens + ok.usage.completion_tokens);
  await assert.rejects(client.chat.completions.create({ model, messages }), (err) => {
    assert.ok(err instanceof OpenAI.RateLimitError, `got ${err}`);
    assert.equal(err.status, 429);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.type, 'requests');
    assert.equal(err.headers.get('x-ratelimit-limit-requests'), '1');
    assert.equal(err.headers.get('x-ratelimit-remaining-requests'), '0');
    const retryMs = Number(err.headers.get('retry-after-ms'));
    assert.ok(retryMs > 0 && retryMs <= 60000, `retry-after-ms ${retryMs}`);
    assert.equal(Number(err.headers.get('retry-after')), Math.ceil(retryMs / 1000));
    return true;
  });
});

test('with maxRetries > 0 it waits the advertised retry-after-ms, then succeeds', async () => {
  // One request per 2 s, continuously refilled: the second call must wait.
  await setLimits([{ dimension: 'requests', algorithm: 'token_bucket', limit: 1, window_s: 2 }]);
  const log = [];
  const client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 2,
                              fetch: recordingFetch(log) });
  await client.chat.completions.create({ model, messages });
  const before = await stats();
  const reply = await client.chat.completions.create({ model, messages });
  assert.equal(reply.object, 'chat.completion');
  assert.deepEqual(log.map((a) => a.status), [200, 429, 200]);
  const advertised = Number(log[1].retryAfterMs);
  assert.ok(advertised > 0 && advertised <= 2000, `retry-after-ms ${advertised}`);
  // The client slept at least the advertised time between the 429 and its retry.
  assert.ok(log[2].started - log[1].ended >= advertised - 1,
            `waited ${log[2].started - log[1].ended} ms, advertised ${advertised} ms`);
  const after = await stats();
  assert.equal(after.responses['429'] - before.responses['429'], 1);
  assert.equal(after.admitted - before.admitted, 1);
});

test('a streamed completion works, with usage in the last chunk', async () => {
  await setLimits([]);
  // Paced: events 1 ms x tokens apart, sent as chunks.
  const latency = await fetch(`${base}/admin/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ latency: { min_ms: 5, max_ms: 10, per_output_token_ms: 1 } }),
  });
  assert.equal(latency.status, 200);
  const client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 0 });
  const stream = await client.chat.completions.create({
    model, messages, stream: true, stream_options: { include_usage: true }, max_tokens: 7,
  });
  let text = '';
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    if (chunk.choices.length > 0) {
      text += chunk.choices[0].delta.content ?? '';
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, 'tok '.repeat(7));  // 20 completion tokens clamped to max_tokens 7
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 7);
  assert.equal(usage.prompt_tokens, Math.ceil(messages[0].content.length / 4));
});

// Provider profiles and overload answers (docs/provider-profiles.md): what the
// official client does with each. Every test sets its profile and overload and
// puts the defaults back at the end.
async function putConfig(patch) {
  const res = await fetch(`${base}/admin/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(patch),
  });
  assert.equal(res.status, 200, await res.text());
}
const defaults = { profile: 'openai', overload: { share: 0 } };

function recordingFetchAll(log) {
  return async (url, init) => {
    const started = performance.now();
    const res = await fetch(url, init);
    log.push({ started, ended: performance.now(), status: res.status, headers: res.headers });
    return res;
  };
}
const gap = (log, i) => log[i].started - log[i - 1].ended;

test('azure profile: remaining headers only, and the client waits retry-after-ms', async () => {
  await putConfig({ profile: 'azure',
    limits: [{ dimension: 'requests', algorithm: 'token_bucket', limit: 1, window_s: 2 }] });
  try {
    const log = [];
    const client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 2,
                                fetch: recordingFetchAll(log) });
    await client.chat.completions.create({ model, messages });
    await client.chat.completions.create({ model, messages });
    assert.deepEqual(log.map((a) => a.status), [200, 429, 200]);
    const h = log[1].headers;
    assert.equal(h.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(h.get('x-ratelimit-limit-requests'), null);
    assert.equal(h.get('x-ratelimit-reset-requests'), null);
    const advertised = Number(h.get('retry-after-ms'));
    assert.ok(advertised > 0 && advertised <= 2000, `retry-after-ms ${advertised}`);
    assert.ok(gap(log, 2) >= advertised - 1, `waited ${gap(log, 2)} ms, advertised ${advertised}`);
  } finally {
    await putConfig(defaults);
  }
});

test('bare profile: no headers, the client backs off 0.5 s then 1 s (x 0.75-1) and gives up',
     async () => {
  // A token bucket: a fixed window's minute edge could fall inside the retries.
  await putConfig({ profile: 'bare',
    limits: [{ dimension: 'requests', algorithm: 'token_bucket', limit: 1, window_s: 60 }] });
  try {
    const log = [];
    const client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 2,
                                fetch: recordingFetchAll(log) });
    await client.chat.completions.create({ model, messages });
    await assert.rejects(client.chat.completions.create({ model, messages }), (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError, `got ${err}`);
      assert.match(err.message, /Please try again in [0-9.]+m?s\./);
      return true;
    });
    assert.deepEqual(log.map((a) => a.status), [200, 429, 429, 429]);
    for (const a of log.slice(1)) {
      assert.equal(a.headers.get('retry-after'), null);
      assert.equal(a.headers.get('retry-after-ms'), null);
      assert.equal(a.headers.get('x-ratelimit-remaining-requests'), null);
    }
    assert.ok(gap(log, 2) >= 375 - 1 && gap(log, 2) < 3000, `first backoff ${gap(log, 2)} ms`);
    assert.ok(gap(log, 3) >= 750 - 1 && gap(log, 3) < 4000, `second backoff ${gap(log, 3)} ms`);
  } finally {
    await putConfig(defaults);
  }
});

test('overloads: 503 with retry-after-ms is waited, 529 without a hint is backed off',
     async () => {
  await putConfig({ limits: [], overload: { share: 1, status: 503, retry_after_ms: 300 } });
  try {
    let log = [];
    let client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 2,
                              fetch: recordingFetchAll(log) });
    await assert.rejects(client.chat.completions.create({ model, messages }), (err) => {
      assert.ok(err instanceof OpenAI.InternalServerError, `got ${err}`);
      assert.equal(err.status, 503);
      return true;
    });
    assert.deepEqual(log.map((a) => a.status), [503, 503, 503]);
    assert.ok(gap(log, 1) >= 299 && gap(log, 2) >= 299, `${gap(log, 1)}, ${gap(log, 2)}`);
    await putConfig({ profile: 'anthropic', overload: { share: 1, status: 529 } });
    log = [];
    client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 2,
                          fetch: recordingFetchAll(log) });
    await assert.rejects(client.chat.completions.create({ model, messages }), (err) => {
      assert.equal(err.status, 529);
      assert.equal(err.error.type, 'overloaded_error');
      return true;
    });
    assert.deepEqual(log.map((a) => a.status), [529, 529, 529]);
    assert.ok(gap(log, 1) >= 375 - 1 && gap(log, 2) >= 750 - 1, `${gap(log, 1)}, ${gap(log, 2)}`);
  } finally {
    await putConfig(defaults);
  }
});

test('x-should-retry: false (a call that can never fit) is not retried', async () => {
  await putConfig({ limits: [{ dimension: 'tokens', algorithm: 'fixed_window', limit: 5,
                               window_s: 60 }] });
  try {
    const log = [];
    const client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 2,
                                fetch: recordingFetchAll(log) });
    await assert.rejects(client.chat.completions.create({ model, messages }), (err) => {
      assert.equal(err.status, 429);
      return true;
    });
    assert.deepEqual(log.map((a) => a.status), [429]);
    assert.equal(log[0].headers.get('x-should-retry'), 'false');
  } finally {
    await putConfig(defaults);
  }
});
