// fuzz_plan_args: devmesh-plan's command line, in-process.
//
// The input is split at NUL bytes into argv[1..] and handed to run_plan
// (tools/plan/main.cpp, compiled with DEVMESH_PLAN_NO_MAIN). The tool must
// exit 0 or 2, with a message on stderr when it is 2, and with --json its
// stdout must be one JSON document (the result, or an error object naming
// one of the five model statuses). Crashes, sanitizer reports, escaping
// exceptions and hangs are findings.
//
// The tool writes --svg FILE to disk: every --svg value is replaced by '-'
// (stdout), so that fuzzed file names never reach the file system (and
// fuzz/run-fuzzers.sh runs the targets in a scratch directory besides).
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan.hpp"
#include "expect.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"devmesh-plan"};
  std::string arg;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(std::move(arg));
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  if (size > 0) args.push_back(std::move(arg));

  bool json = false, negated = false, help = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--svg" && i + 1 < args.size()) args[i + 1] = "-";
    if (args[i].rfind("--svg=", 0) == 0) args[i] = "--svg=-";
    json = json || args[i] == "--json";
    negated = negated || args[i].rfind("--json=", 0) == 0;  // --json=false and the like
    // CLI11 reads "-hx" as -h -x, and help wins over --json.
    const std::string& a = args[i];
    help = help || a.rfind("--help", 0) == 0 ||
           (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('h') != std::string::npos);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::ostringstream out, err;
  const int rc = run_plan(static_cast<int>(args.size()), argv.data(), out, err);

  FUZZ_EXPECT(rc == 0 || rc == 2, "exit status " << rc);
  if (rc == 2) FUZZ_EXPECT(!err.str().empty(), "exit status 2 without a message");
  if (json && !negated && !help) {
    const nlohmann::json doc = nlohmann::json::parse(out.str(), nullptr, false);
    FUZZ_EXPECT(!doc.is_discarded(), "--json printed no JSON: " << out.str().substr(0, 200));
    if (rc == 2) {
      FUZZ_EXPECT(doc.is_object() && doc.contains("error") && doc["error"].is_string(),
                  "error JSON " << out.str().substr(0, 200));
      const std::string status = doc["error"];
      FUZZ_EXPECT(status == "invalid_argument" || status == "shape_mismatch" || status == "unknown_dim" ||
                      status == "duplicate_name" || status == "overlap",
                  "error status " << status);
    }
  }
  return 0;
}
