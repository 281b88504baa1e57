// config_check FILE: the checks `edgeshed run` makes on a configuration before
// it touches the kernel (parse, ranges, every signal's own keys), without
// attaching anything. Used to hold configurations shipped outside examples/
// (the Kubernetes ConfigMap) to the parser they will meet.
// Exit 0 and "ok" when valid; 1 and the daemon's own error otherwise.
#include <iostream>

#include "config/config.h"
#include "signals/signal_kinds.h"
#include "signals/signal_set.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: config_check FILE\n";
    return 2;
  }
  const std::string path = argv[1];
  auto cfg = edgeshed::signals::load_config(path);
  if (!cfg) {
    std::cerr << cfg.error().message << "\n";
    return 1;
  }
  // What the host decides (does the interface exist?) is not checked here.
  if (auto s = edgeshed::config::check_protects_something(*cfg, path); !s) {
    std::cerr << s.error().message << "\n";
    return 1;
  }
  // Building the sources checks their keys; nothing is sampled, so the
  // data-plane readers (none here) are never called.
  auto signals = edgeshed::signals::SignalSet::build(cfg->signals, {});
  if (!signals) {
    std::cerr << signals.error().message << "\n";
    return 1;
  }
  std::cout << "ok: " << path << ": " << cfg->interfaces.size() << " interface(s), "
            << cfg->ports.size() << " port(s), " << cfg->signals.size() << " signal(s)\n";
  return 0;
}
