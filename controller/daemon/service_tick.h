// The tick of a service of its own (AttachedDataplane::services()): a
// namespace serving a port number that another namespace serves too (two
// pods on 8080) has a law of its own, fed from its own counts and latency,
// so that one pod's queue never sheds the other's connections. It runs the
// same Tick as service 0 over a view of the data plane for its service.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/attached_dataplane.h"
#include "daemon/dataplane_access.h"
#include "daemon/runtime_changes_keeper.h"
#include "daemon/tick.h"
#include "law/control_law.h"

namespace edgeshed::daemon {

// What a service's tick reads and writes: its groups' counts and its
// latency; its policies go out with service 0's publish. The mode, the
// counters (per class, every service's summed), the accept queues and the
// idle connections stay service 0's tick's.
class ServiceView final : public DataplaneAccess {
 public:
  ServiceView(AttachedDataplane& dataplane, uint32_t service)
      : dataplane_(dataplane), service_(service) {}

  size_t interface_count() const override { return dataplane_.interface_count(); }
  const std::string& interface_name(size_t i) const override {
    return dataplane_.interface_name(i);
  }
  Result<LiveCounts> take_live_counts(size_t i) const override {
    return dataplane_.take_service_counts(i, service_);
  }
  // The counters are per class, every service's summed: the law reads its
  // service's own sheds as its classes' sheds at the cap.
  Result<edgeshed_stats> read_stats(size_t i) const override;
  Result<std::vector<PortLatency>> read_latency(size_t i) const override {
    return dataplane_.read_service_latency(i, service_);
  }
  Result<edgeshed_config> read_config(size_t i) const override { return dataplane_.read_config(i); }
  Status write_config(size_t /*i*/, const edgeshed_config& /*cfg*/) const override { return {}; }
  Status publish(size_t /*i*/, const edgeshed_policy_set& set, uint64_t /*heartbeat_ns*/,
                 uint32_t /*salt*/) const override {
    dataplane_.set_service_policies(service_, set);
    return {};
  }
  Result<signals::QueueSnapshot> read_accept_queues() override { return signals::QueueSnapshot{}; }
  Result<std::vector<IdleConnection>> idle_connections(size_t /*i*/) override {
    return std::vector<IdleConnection>{};
  }
  Status reclaim(size_t /*i*/, const std::vector<uint64_t>& /*cookies*/) override { return {}; }

 private:
  AttachedDataplane& dataplane_;
  uint32_t service_;
};

// A service's decisions, in the log as its level changes and its limit
// binds or opens.
class ServiceLog final : public TickPublisher {
 public:
  ServiceLog(uint32_t service, std::string name) : service_(service), name_(std::move(name)) {}
  void publish(const TickOutcome& outcome) override;

 private:
  uint32_t service_;
  std::string name_;
  law::Level level_ = law::Level::kNormal;
  bool open_ = true;
};

// The law of a service of its own: the config's, on its own evidence. It
// reads no signal (those describe the host, or service 0's ports), so it
// holds its level and its limit does the work.
law::ControlLawConfig service_law_config(const config::Config& cfg);

struct ServiceTick {
  ServiceTick(AttachedDataplane& dataplane, uint32_t service, const config::Config& cfg,
              TickClocks clocks, RuntimeChangesKeeper& changes);
  ServiceTick(const ServiceTick&) = delete;
  ServiceTick& operator=(const ServiceTick&) = delete;

  ServiceView view;
  law::LevelControlLaw law;
  ServiceLog log;
  Tick tick;
};

}  // namespace edgeshed::daemon
