// admit_one URL TARGET: one admission through the installed gate client
// (bp/gate.h) on a configured target, released at once with its actual cost.
// Prints the verdict; exit 0 on ADMIT and a successful release, 1 otherwise,
// 2 on bad usage.
#include <bp/gate.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: admit_one URL TARGET\n";
    return 2;
  }
  bp::GateOptions options;
  options.url = argv[1];
  options.target = argv[2];
  options.connect_timeout_ms = 2000;
  options.command_timeout_ms = 2000;
  bp::Gate gate(options);
  if (bp::Status s = gate.Ping(); !s.ok()) {
    std::cerr << "admit_one: " << s.ToString() << "\n";
    return 1;
  }
  bp::AdmitRequest request;
  request.tenant = "consumer";
  request.cost = {1, 10};  // one request, 10 prompt tokens
  const bp::Decision d = gate.Admit(request);
  std::cout << bp::VerdictName(d.verdict) << (d.reason.empty() ? "" : " " + d.reason) << "\n";
  if (d.verdict != bp::Verdict::kAdmit) return 1;
  if (bp::Status s = gate.Release(d.ticket, {1, 15}); !s.ok()) {
    std::cerr << "admit_one: release: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}
