// Maps: the age of the requests in service, and the queue gate's evidence.
#include <algorithm>
#include <chrono>
#include <optional>

#include "dataplane/map_io.h"
#include "dataplane/maps.h"

namespace edgeshed {

namespace {
// An entry time read apart from its count (a request entering or leaving
// service between the two reads) makes an age sum off by about the clock:
// a mean age over this is such a torn read, and the read is tried again.
constexpr uint64_t kMaxMeanAgeNs =
    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::hours(24)).count();
constexpr int kReadTries = 4;
}  // namespace

namespace {

// count x now - since, modulo 2^64 as the data plane sums (abi.h); empty
// when it is a torn read.
std::optional<uint64_t> age_sum(uint64_t count, uint64_t since, uint64_t now) {
  const uint64_t ages = count * now - since;
  if (ages / std::max<uint64_t>(count, 1) > kMaxMeanAgeNs) return std::nullopt;
  return ages;
}

}  // namespace

Result<ClassCounts> Maps::read_inflight_ages(const ClassCounts& inflight, uint32_t service) const {
  ClassCounts counts = inflight;
  for (int attempt = 0; attempt < kReadTries; ++attempt) {
    ClassCounts since{};
    for (uint32_t c = 0; c < since.size(); ++c) {
      auto sum =
          map_io::lookup_percpu_sum(since_cls_, edgeshed_group(service, c), "in-service age map");
      if (!sum) return sum.error();
      since[c] = *sum;
    }
    const uint64_t now = monotonic_ns();
    ClassCounts ages{};
    bool torn = false;
    for (size_t c = 0; c < ages.size(); ++c) {
      const std::optional<uint64_t> sum = age_sum(counts[c], since[c], now);
      torn = torn || !sum;
      ages[c] = sum.value_or(0);
    }
    if (!torn) return ages;
    auto again = read_inflight_classes(service);
    if (!again) return again.error();
    counts = *again;
  }
  // Requests entering and leaving all the while: no age this time.
  return ClassCounts{};
}

Result<uint64_t> Maps::read_inflight_age_port(uint16_t port) const {
  const uint32_t key = port;
  for (int attempt = 0; attempt < kReadTries; ++attempt) {
    auto count = read_inflight_port(port);
    if (!count) return count.error();
    auto since = map_io::lookup_percpu_sum(since_, key, "in-service age map");
    if (!since) return since.error();
    if (const auto sum = age_sum(*count, *since, monotonic_ns())) return *sum;
  }
  return uint64_t{0};
}

Result<std::array<bool, EDGESHED_NUM_CLASSES>> Maps::read_queue_evidence(uint32_t service) const {
  std::array<bool, EDGESHED_NUM_CLASSES> queued{};
  auto policy = read_active_policy();
  if (!policy) return policy.error();
  const uint64_t now = monotonic_ns();
  for (uint32_t c = 0; c < EDGESHED_NUM_CLASSES; ++c) {
    const uint32_t group = edgeshed_group(service, c);
    const uint64_t age = uint64_t{policy->cls[group].queue_age_us} * 1000;
    if (age == 0 || now <= age) continue;
    uint64_t slice = edgeshed_cohort_due(now, age);
    uint32_t arrived = 0;
    int32_t open = 0;
    for (int i = 0; i < 2; ++i, --slice) {
      const uint32_t key = group * EDGESHED_COHORT_SLICES +
                           static_cast<uint32_t>(slice & (EDGESHED_COHORT_SLICES - 1));
      edgeshed_cohort cohort{};
      if (auto s = map_io::lookup(cohorts_, &key, &cohort, "cohort map"); !s) return s.error();
      if (cohort.slice != slice) continue;
      arrived += cohort.arrived;
      open += cohort.open;
    }
    queued[c] = edgeshed_cohorts_queued(arrived, open) != 0;
  }
  return queued;
}

}  // namespace edgeshed
