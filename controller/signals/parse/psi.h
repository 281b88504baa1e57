// Parsing of pressure stall information (/proc/pressure/<resource>, or a
// cgroup v2 directory's <resource>.pressure). Pure: signals/psi_signal.h
// reads the file and hands the text here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"

namespace edgeshed::signals {

struct PsiLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;
  uint64_t total_us = 0;
};

struct PsiStats {
  PsiLine some;
  std::optional<PsiLine> full;  // absent for cpu on older kernels
};

// Parses the two-line PSI format; rejects anything else with the reason.
Result<PsiStats> parse_psi(std::string_view text);

}  // namespace edgeshed::signals
