// The checks a client makes before sending: the tenant rule (its owner is
// lib/gate/lua/prelude.lua, mirrored in C++ by bp::ValidTenantName), priority
// >= 1, costs >= 0 and aheadMs >= 0 (integers), with the C++ client's message
// (bp::Gate::Admit). The conformance cases (tests/conformance/cases.json)
// hold invalid requests and this message, so the three clients are checked
// against one definition.
export const TENANT_RULE = "[A-Za-z0-9_.-]{1,128}";
export const INVALID_REQUEST =
  "invalid request: tenant must match [A-Za-z0-9_.-]{1,128}, priority >= 1, costs >= 0, ahead_ms >= 0";

// The tenant rule of prelude.lua: 1-128 bytes of [A-Za-z0-9_.-].
export function validTenant(t) {
  return typeof t === "string" && /^[A-Za-z0-9_.-]{1,128}$/.test(t);
}
export const isCount = (x) => Number.isSafeInteger(x) && x >= 0;

export function validRequest(tenant, priority, requests, tokens, maxTokens, aheadMs = 0) {
  return validTenant(tenant) && Number.isSafeInteger(priority) && priority >= 1 &&
    isCount(requests) && isCount(tokens) && isCount(maxTokens) && isCount(aheadMs);
}
