// A hand-made RunRecords with round numbers, shared by the metrics and
// report tests. Speedup 2 (paper time = 2 x real time), cap 60 req/s.
//   tenant a: P1, w 1, omega 0.6, 3 activities, finishes at 1.0 s real (2 s paper)
//   tenant b: P2, w 1, omega 0.4, 3 activities (one given up), finishes at 1.5 s real
// Contention window: [0, 1.0 s real) = 2 paper s.
#pragma once

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

}  // namespace bp::loadgen::testing
