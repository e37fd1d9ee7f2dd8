// One call through the gate, as the example worker (worker.mjs) makes it:
// admit; on defer free the slot and come back after deltaMs (a sleep here; in
// a workflow engine a durable timer); on reject give up; on admit wait its
// startInMs (0 unless aheadMs lets the gate admit a call ahead of the
// bucket's refill; the slot is held meanwhile), call the OpenAI-compatible
// API with the official openai SDK, then release with the usage the answer
// reports; on a 429 release with the upstream report, wait its retry-after
// and ask again (docs/clients.md).
import { rateLimitsFromHeaders } from "../gate.mjs";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// w: {gate, openai (an OpenAI client), tenant, priority, model, prompt,
// maxTokens, estimate (the tokens admitted: prompt + completion bound),
// aheadMs (0: never admitted ahead), totals {ok, throttled, defers, rejects,
// errors, tokens}, admitted {admits, admitted_tokens}, okPerS (unix second ->
// [OK answers, their tokens]), wait (ms => Promise: every wait; tests pass a
// recorder)}. Resolves when the call was served, refused or failed.
export async function oneCall(w) {
  const { gate, totals, estimate, wait = sleep } = w;
  for (;;) {
    const d = await gate.admit(w.tenant, w.priority, { requests: 1, tokens: estimate, aheadMs: w.aheadMs ?? 0 });
    if (d.kind === "defer") { totals.defers++; await wait(d.deltaMs); continue; }  // a durable timer in a workflow engine
    if (d.kind === "reject") { totals.rejects++; return; }
    // Admitted ahead: the bucket is debited for a refill still to come;
    // calling before it would send the provider a burst above its cap.
    if (d.startInMs > 0) await wait(d.startInMs);
    if (!d.failOpen) { w.admitted.admits++; w.admitted.admitted_tokens += estimate; }
    const sentMs = Date.now();  // Anthropic's reset instants are read against the send
    try {
      const { data: r, response } = await w.openai.chat.completions.create({ model: w.model,
        max_tokens: w.maxTokens, messages: [{ role: "user", content: w.prompt }] }).withResponse();
      const used = r.usage?.total_tokens ?? estimate;
      totals.ok++; totals.tokens += used;
      const cell = (w.okPerS[Math.floor(Date.now() / 1000)] ??= [0, 0]);
      cell[0]++; cell[1] += used;
      await gate.release(d.ticket, used, { rateLimits: rateLimitsFromHeaders(response.headers, sentMs) });
      return;
    } catch (e) {
      if (e?.status !== 429) { totals.errors++; await gate.release(d.ticket, 0); return; }
      totals.throttled++;
      const h = e.headers;
      const bound = h.get("x-mockapi-bound") ?? e.error?.type ?? "";
      const retryMs = Number(h.get("retry-after-ms") ?? 1000 * Number(h.get("retry-after") ?? 1));
      await gate.release(d.ticket, estimate, { upstream429: {
        bound: ["requests", "tokens"].includes(bound) ? bound : "", retryAfterMs: retryMs,
        ...rateLimitsFromHeaders(h, sentMs) } });
      if (h.get("x-should-retry") === "false") return;  // "Request too large": it can never pass
      await wait(retryMs);
    }
  }
}
