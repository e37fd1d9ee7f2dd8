#!/usr/bin/env python3
"""CPU share per request stage from `perf script -F tid,ip,sym` call stacks.

Used by bench/mockapi_profile.sh. Reads perf script output on stdin; each
sample is a block of frames, leaf first. A sample belongs to the stage of its
innermost frame that matches a stage rule (so malloc called by the JSON parser
counts as JSON parse, a send syscall's TCP work as write); samples with no
matching frame are "other". Prints one row per stage: samples, share of all
samples, the user-space part of that share, and, when --us-per-request is
given, the share times that figure (the CPU microseconds per request measured
without perf).

  perf script -i perf.data -F tid,ip,sym | bench/perf_stages.py --us-per-request 21
"""
import argparse
import collections
import re
import sys

# (stage, regex on the frame's symbol); within one frame the first rule wins.
RULES = [
    ("logging", r"spdlog|fmt::v\d|basic_ostream|std::operator<<|__libc_write\b|ksys_write"),
    ("token estimate", r"EstimateTokens"),
    ("limiter", r"bp::LimiterSet::|bp::\(anonymous namespace\)::\w+Limiter::|bp::Limiter::"),
    ("JSON parse (request)",
     r"nlohmann.*(parser|lexer|input_adapter|json_sax|~basic_json|json_value::destroy)"
     r"|internal::Parse|internal::\(anonymous namespace\)::(Parse|AppendContent|KnownRole)"
     r"|ChatCall::~ChatCall|FastReadChat|internal::\(anonymous namespace\)::(Reader|Content|Message|MaxTokens|Unescape)\b"),
    ("JSON build (body + provider headers)",
     r"SetCompletionBody|OpenAIBody|OpenAIStream|AnthropicBody|AnthropicStream|OpenAIUsage"
     r"|AddRateLimitHeaders|SetRateLimited|SetError|SetOverloaded|RequestId|GoDuration"
     r"|Rfc3339|AddRequestId|TextOfTokens|AppendJsonString|AppendId|LimitPhrase|HttpResponse"
     r"|ResponseWriter|AppendHeader"),
    ("service (route, cost, stats)",
     r"Service::Handle|Service::Impl::(Route|Chat)|internal::Stats::|Session::OnRead\b"
     r"|Service::connection_limits|Limits::For"),
    ("HTTP serialize (status line, headers)", r"Session::Respond|AppendNextEvent|obsolete_reason"),
    ("HTTP parse (request)",
     r"beast::http::basic_parser|beast::http::parser<|basic_fields|beast::http::detail::"
     r"|beast::http::header<|beast::http::message<|Session::ParseBuffered|HttpParser|llhttp"),
    ("write (send + TCP)",
     r"sendmsg|sys_sendto|__libc_send\b|tcp_sendmsg|writev|reactive_socket_send_op|write_op<"
     r"|Session::DoWrite|Session::OnWrite|ngx_http_write_filter|ngx_linux_sendfile|sendfile"),
    ("read (recv + TCP)",
     r"recvmsg|sys_recvfrom|__libc_recv\b|tcp_recvmsg|\breadv?\b|reactive_socket_recv_op|read_some_op"
     r"|read_op<|Session::DoRead|Session::OnFirstBytes|basic_flat_buffer|ngx_unix_recv"),
    ("accept + close",
     r"accept|Server::Impl::DoAccept|Session::Session|Session::DoClose|Session::~Session"
     r"|__sys_shutdown|tcp_close|__x64_sys_close|sock_close"),
    ("timeouts (timers)",
     r"expires_after|expires_never|timer_queue|basic_waitable_timer|steady_timer|timer_op"
     r"|timeout_handler|deadline|timerfd|update_timeout|ngx_event_add_timer|ngx_rbtree"),
    ("event loop + executor (epoll, strand, handlers)",
     r"epoll|scheduler::|strand|any_executor|executor_function|handler_work|work_dispatcher"
     r"|executor_op|thread_info_base|ngx_process_events|ngx_epoll"),
]
COMPILED = [(stage, re.compile(rx)) for stage, rx in RULES]
ORDER = [stage for stage, _ in RULES] + ["other"]


def frames(stream):
    """Yields each sample's list of (symbol, is_kernel), leaf first."""
    block = []
    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if block:
                yield block
            block = []
            continue
        if not line.startswith(("\t", " ")):  # a sample's header line (tid)
            if block:
                yield block
            block = []
            continue
        parts = line.strip().split(" ", 1)
        if len(parts) < 2:
            continue
        addr, sym = parts
        block.append((sym, addr.startswith("ffffffff")))
    if block:
        yield block


def classify(block):
    for sym, _ in block:
        for stage, rx in COMPILED:
            if rx.search(sym):
                return stage
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--us-per-request", type=float, default=0.0)
    args = ap.parse_args()
    total = collections.Counter()
    user = collections.Counter()
    n = 0
    for block in frames(sys.stdin):
        stage = classify(block)
        total[stage] += 1
        if not block[0][1]:
            user[stage] += 1
        n += 1
    if n == 0:
        sys.exit("perf_stages: no samples")
    us = args.us_per_request
    head = f"{'stage':<50} {'samples':>8} {'share':>7} {'user':>7}"
    print(head + (f" {'us/req':>7}" if us else ""))
    for stage in ORDER:
        if total[stage] == 0:
            continue
        share = total[stage] / n
        row = f"{stage:<50} {total[stage]:>8} {100 * share:6.1f}% {100 * user[stage] / n:6.1f}%"
        print(row + (f" {share * us:7.2f}" if us else ""))
    kernel = n - sum(user.values())
    print(f"{'all (kernel part ' + format(100 * kernel / n, '.1f') + '%)':<50} {n:>8} {100.0:6.1f}%"
          f" {100 * sum(user.values()) / n:6.1f}%" + (f" {us:7.2f}" if us else ""))


if __name__ == "__main__":
    main()
