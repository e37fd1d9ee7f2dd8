"""backpressure: the gate client for Python workers (docs/protocol.md,
docs/clients.md). admit() before an API call, release() after it."""

from .breaker import CircuitBreaker
from .declared import read_declared_config
from .gate import (CAUSE_COUNTERS, NOT_CONFIGURED, SERVER_ERROR, TIMED_OUT, UNREACHABLE, Admit,
                   Decision, Defer, Gate, RateLimits, Reject, Ticket, Upstream429)
from .headers import rate_limits_from_headers
from .rules import INVALID_REQUEST, TENANT_RULE, valid_tenant
from .scripts import PROTOCOL_VERSION, load_scripts

__all__ = ["Admit", "CAUSE_COUNTERS", "CircuitBreaker", "Decision", "Defer", "Gate",
           "INVALID_REQUEST", "NOT_CONFIGURED", "PROTOCOL_VERSION", "Reject", "SERVER_ERROR",
           "RateLimits", "TENANT_RULE", "TIMED_OUT", "Ticket", "UNREACHABLE", "Upstream429", "load_scripts",
           "rate_limits_from_headers", "read_declared_config", "valid_tenant"]
