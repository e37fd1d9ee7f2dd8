"""backpressure: the gate client for Python workers (docs/protocol.md,
docs/clients.md). admit() before an API call, release() after it."""

from .gate import (INVALID_REQUEST, TENANT_RULE, Admit, Decision, Defer, Gate, Reject, Ticket,
                   Upstream429, valid_tenant)
from .scripts import PROTOCOL_VERSION, load_scripts

__all__ = ["Admit", "Decision", "Defer", "Gate", "INVALID_REQUEST", "PROTOCOL_VERSION", "Reject",
           "TENANT_RULE", "Ticket", "Upstream429", "load_scripts", "valid_tenant"]
