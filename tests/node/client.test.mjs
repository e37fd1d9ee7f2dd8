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
  await setLimits([{ dimension: 'requests', algorithm: 'fixed_window', limit: 1, window_s: 60 }]);
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
