#include "signals/signal_kinds.h"

#include <algorithm>
#include <vector>

#include "signals/accept_queue_signal.h"
#include "signals/dataplane_rate_signal.h"
#include "signals/file_signal.h"
#include "signals/inflight_signal.h"
#include "signals/kernel_latency_signal.h"
#include "signals/limit_signal.h"
#include "signals/netstat_signal.h"
#include "signals/probe_signal.h"
#include "signals/prometheus_signal.h"
#include "signals/psi_signal.h"
#include "signals/synthetic_signal.h"

namespace edgeshed::signals {
namespace {

// One line per kind. The order is the one the config's error for an unknown
// kind lists, and the README's table.
const SignalKindEntry kSignalKinds[] = {
    {"inflight", kInflightKind},
    {"accept_queue", kAcceptQueueKind},
    {"dataplane", kDataplaneRateKind},
    {"netstat", kNetstatKind},
    {"psi", kPsiKind},
    {"prometheus", kPrometheusKind},
    {"probe", kProbeKind},
    {"synthetic", kSyntheticKind},
    {"file", kFileKind},
    {"kernel_latency", kKernelLatencyKind},
    {"limit", kLimitKind},
};

}  // namespace

std::span<const SignalKindEntry> signal_kinds() { return kSignalKinds; }

const SignalKindDescriptor* find_signal_kind(std::string_view name) {
  const auto* found = std::find_if(std::begin(kSignalKinds), std::end(kSignalKinds),
                                   [&](const SignalKindEntry& e) { return e.name == name; });
  return found == std::end(kSignalKinds) ? nullptr : &found->kind;
}

config::SignalKinds config_signal_kinds() {
  static const std::vector<config::SignalKindRule> kRules = [] {
    std::vector<config::SignalKindRule> rules;
    for (const SignalKindEntry& e : kSignalKinds) rules.push_back({e.name});
    return rules;
  }();
  return kRules;
}

Result<config::Config> parse_config(std::string_view text, std::string_view source_name) {
  return config::parse_config(text, source_name, config_signal_kinds());
}

Result<config::Config> load_config(const std::string& path) {
  return config::load_config(path, config_signal_kinds());
}

}  // namespace edgeshed::signals
