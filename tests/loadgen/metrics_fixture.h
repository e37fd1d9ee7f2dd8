// A hand-made RunRecords with round numbers, shared by the metrics and
// report tests. Speedup 2 (paper time = 2 x real time), cap 60 req/s.
//   tenant a: P1, w 1, omega 0.6, 3 activities, finishes at 1.0 s real (2 s paper)
//   tenant b: P2, w 1, omega 0.4, 3 activities (one given up), finishes at 1.5 s real
// Contention window: [0, 1.0 s real) = 2 paper s.
#pragma once

#include <string>

#include "bp/loadgen/records.h"

namespace bp::loadgen::testing {

inline ActivityRecord Activity(int64_t id, int64_t wf, int tenant, int64_t sched, int64_t first,
                               int64_t final, int64_t done, bool ok, int64_t prompt,
                               int64_t completion) {
  ActivityRecord a;
  a.id = id;
  a.workflow_id = wf;
  a.tenant_index = tenant;
  a.scheduled_us = sched;
  a.first_send_us = first;
  a.final_answer_us = final;
  a.completed_us = done;
  a.ok = ok;
  a.in_activity_us = ok ? final - first + 10'000 : 0;
  a.executions = 1;
  a.http_attempts = 1;
  a.prompt_tokens = prompt;
  a.completion_tokens = completion;
  return a;
}

inline AttemptRecord Attempt(int64_t activity, int tenant, int64_t send, int status,
                             std::string bound = "", bool proxy_local = false) {
  AttemptRecord a;
  a.activity_id = activity;
  a.tenant_index = tenant;
  a.send_us = send;
  a.done_us = send + 50'000;
  a.status = status;
  a.bound = std::move(bound);
  a.proxy_local = proxy_local;
  return a;
}

inline RunRecords HandMadeRun() {
  RunRecords r;
  r.workload = "cross-priority";
  r.configuration = "bp";
  r.repeat = 0;
  r.speedup = 2;
  r.cap_requests_per_s = 60;
  r.slots = 4;
  r.end_us = 1'600'000;
  r.tenants = {{"a", 1, 1.0, 0.6, 3, 0, 1'000'000}, {"b", 2, 1.0, 0.4, 3, 0, 1'500'000}};
  r.activities = {
      Activity(1, 1, 0, 0, 10'000, 60'000, 70'000, true, 100, 20),
      Activity(2, 1, 0, 0, 100'000, 400'000, 410'000, true, 100, 20),
      Activity(3, 1, 0, 500'000, 900'000, 950'000, 1'000'000, true, 100, 20),
      Activity(4, 2, 1, 0, 20'000, 520'000, 530'000, true, 1000, 200),
      Activity(5, 2, 1, 600'000, 1'200'000, 1'400'000, 1'500'000, true, 1000, 200),
      Activity(6, 3, 1, 0, 30'000, 700'000, 800'000, false, 1000, 0),
  };
  r.activities[2].deferrals = 2;
  r.attempts = {
      Attempt(1, 0, 10'000, 200),
      Attempt(2, 0, 100'000, 429, "requests"),
      Attempt(2, 0, 200'000, 429, "requests"),
      Attempt(2, 0, 350'000, 200),
      Attempt(3, 0, 900'000, 200),
      Attempt(4, 1, 20'000, 429, "tokens"),
      Attempt(4, 1, 470'000, 200),
      Attempt(5, 1, 1'200'000, 200),
      Attempt(6, 1, 30'000, 429),
      Attempt(6, 1, 600'000, 0),
      Attempt(6, 1, 650'000, 429, "", true),
  };
  // Slot time: a 450 ms real = 900 paper ms, b 300 ms real = 600 paper ms.
  r.slots_held = {{1, 0, 0, 100'000},
                  {2, 0, 100'000, 350'000},
                  {3, 0, 900'000, 1'000'000},
                  {4, 1, 0, 100'000},
                  {5, 1, 1'200'000, 1'400'000}};
  r.workflows = {{1, 0, 0, 1'000'000}, {2, 1, 0, 1'500'000}, {3, 1, 0, -1}};
  return r;
}

inline AttemptRecord Streamed(int64_t activity, int tenant, int64_t send, int stream, int64_t ttft,
                              int64_t itl, int status = 200) {
  AttemptRecord a;
  a.activity_id = activity;
  a.tenant_index = tenant;
  a.send_us = send;
  a.done_us = send + 100'000;
  a.status = status;
  a.stream = stream;
  a.ttft_us = ttft;
  a.itl_us = itl;
  return a;
}

// Streamed answers with exact timings, for the stream metrics and reports.
// Speedup 2 (paper ms = 2 x real ms). Tenant a (P1) has two streamed
// answers, tenant b (P2) one. Every first token comes ttft_factor times later
// than in the base run; inter-token gaps stay.
//   a: scheduled 0, sent 100 ms, first token 30 ms later: TTFT 130 real = 260 paper ms (base)
//   a: scheduled 50 ms, a 429 at 60 ms (not a stream answer), then a stream
//      cut short, sent 300 ms, first token 10 ms later: TTFT 260 real = 520 paper ms (base)
//   b: scheduled 0, sent 0, first token 5 ms later: TTFT 5 real = 10 paper ms (base);
//      with plain_answer, also a plain 200, which is no stream sample.
inline RunRecords StreamRun(const std::string& config = "", int repeat = 0,
                            int64_t ttft_factor = 1, bool plain_answer = false) {
  RunRecords r;
  r.workload = "token-bound-streaming";
  r.configuration = config;
  r.repeat = repeat;
  r.speedup = 2;
  r.cap_requests_per_s = 60;
  r.slots = 2;
  r.end_us = 1'000'000;
  r.tenants = {{"a", 1, 1.0, 0.6, 2, 0, 500'000}, {"b", 2, 1.0, 0.4, 1, 0, 500'000}};
  r.workflows = {{0, 0}, {1, 1}};
  for (int64_t id = 0; id < 3; ++id) {
    ActivityRecord a;
    a.id = id;
    a.workflow_id = id < 2 ? 0 : 1;
    a.tenant_index = id < 2 ? 0 : 1;
    a.scheduled_us = id == 1 ? 50'000 : 0;
    a.ok = true;
    a.completed_us = 400'000;
    r.activities.push_back(a);
  }
  r.attempts = {
      Streamed(0, 0, 100'000, 1, 30'000 * ttft_factor, 2'000),
      Streamed(1, 0, 60'000, 1, -1, -1, 429),
      Streamed(1, 0, 300'000, 2, 10'000 * ttft_factor, -1),
      Streamed(2, 1, 0, 1, 5'000 * ttft_factor, 1'000),
  };
  if (plain_answer) r.attempts.push_back(Streamed(2, 1, 0, 0, -1, -1));
  return r;
}

}  // namespace bp::loadgen::testing
