// libFuzzer target: the PSI parser (signals::parse_psi), fed the text of
// /proc/pressure/<resource> or a cgroup's <resource>.pressure. A parsed
// reading turns into a stall percentage that must stay within 0..100 for
// any pair of totals and any elapsed time.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "signals/parse/psi.h"
#include "signals/psi_signal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using edgeshed::signals::PsiSignal;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto stats = edgeshed::signals::parse_psi(text);
  if (!stats) {
    FUZZ_CHECK(!stats.error().message.empty(), "empty error message");
    return 0;
  }
  // The previous total and the elapsed time come from the input's first
  // bytes, so the fuzzer explores them too.
  uint64_t prev = 0;
  int64_t elapsed = 0;
  std::memcpy(&prev, data, std::min(size, sizeof(prev)));
  if (size > sizeof(prev))
    std::memcpy(&elapsed, data + sizeof(prev), std::min(size - sizeof(prev), sizeof(elapsed)));
  for (const auto* line : {&stats->some, stats->full ? &*stats->full : nullptr}) {
    if (line == nullptr) continue;
    for (uint64_t p : {prev, uint64_t{0}, line->total_us}) {
      for (int64_t e : {elapsed, int64_t{100000000}, int64_t{1}}) {
        const double pct = PsiSignal::stall_percent(line->total_us, p, std::chrono::nanoseconds(e));
        FUZZ_CHECK(pct >= 0.0 && pct <= 100.0, "stall percentage " + std::to_string(pct));
      }
    }
  }
  return 0;
}
