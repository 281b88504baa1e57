// The frame `edgeshed top` draws: pure formatting, tested without a terminal.
#pragma once

#include <array>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "edgeshed/abi.h"

namespace edgeshed {

// One block character (U+2581..U+2588) per value, scaled to the largest
// value shown or to floor, whichever is larger; the last width values.
std::string sparkline(const std::deque<double>& values, size_t width, double floor = 0);

// The last minute of what top plots.
class TopHistory {
 public:
  static constexpr size_t kPoints = 60;

  // Takes pressure (null without a daemon) and the shed rates of a status.
  void add(const nlohmann::ordered_json& status);
  const std::deque<double>& pressure() const { return pressure_; }
  const std::deque<double>& shed_rate(size_t class_id) const { return shed_[class_id]; }

 private:
  std::deque<double> pressure_;
  std::array<std::deque<double>, EDGESHED_NUM_CLASSES> shed_;
};

// Fits 80 columns (the status as status_summary() prints it) unless
// verbose (status_lines()).
std::vector<std::string> top_frame(const nlohmann::ordered_json& status, const TopHistory& history,
                                   const std::string& clock, double interval_s,
                                   bool verbose = false);

// The values squeezed into width points, each the largest of those it
// stands for: a minute of samples in the columns an 80-column screen has.
std::deque<double> squeeze(const std::deque<double>& values, size_t width);

}  // namespace edgeshed
