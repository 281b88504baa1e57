// edgeshed check --config FILE: every check `edgeshed run` makes before it
// touches the kernel (the parse, the interfaces and ports, the signals'
// keys, the process's capabilities), and what the daemon would then do,
// without doing any of it: no start record, no lock, no pin, no program.
// A config refused here is refused by `run` for the same reason.
#pragma once

#include <string>
#include <vector>

namespace edgeshed::daemon {

struct ConfigCheck {
  std::vector<std::string> plan;      // what the daemon would do, one line each
  std::vector<std::string> problems;  // why `run` would refuse it; empty: it would start
};

// run_dir: the --run-dir given, which wins over the config's daemon.run_dir;
// empty when none was.
ConfigCheck check_config(const std::string& config_path, const std::string& run_dir);

}  // namespace edgeshed::daemon
