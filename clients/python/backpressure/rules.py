"""The checks a client makes before sending: the tenant rule (its owner is
lib/gate/lua/prelude.lua, mirrored in C++ by bp::ValidTenantName), priority
>= 1, costs >= 0 and ahead_ms >= 0 (integers, not bools), with the C++
client's message (bp::Gate::Admit). The conformance cases
(tests/conformance/cases.json) hold invalid requests and this message, so
the three clients are checked against one definition."""

import re

TENANT_RULE = "[A-Za-z0-9_.-]{1,128}"
_TENANT = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
INVALID_REQUEST = ("invalid request: tenant must match [A-Za-z0-9_.-]{1,128}, priority >= 1, "
                   "costs >= 0, ahead_ms >= 0")


def valid_tenant(name):
    """The tenant rule of prelude.lua: 1-128 bytes of [A-Za-z0-9_.-]."""
    return isinstance(name, str) and _TENANT.fullmatch(name) is not None


def count(x):
    """An integer >= 0 (not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def valid_request(tenant, priority, requests, tokens, max_tokens, ahead_ms=0):
    return (valid_tenant(tenant) and isinstance(priority, int) and not isinstance(priority, bool)
            and priority >= 1 and count(requests) and count(tokens) and count(max_tokens)
            and count(ahead_ms))
