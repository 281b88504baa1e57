#include "signals/signal_params.h"

#include <algorithm>
#include <cmath>

#include "common/duration.h"
#include "config/toml_reader.h"

namespace edgeshed::signals {

ParamReader::ParamReader(const config::SignalConfig& cfg,
                         std::initializer_list<std::string_view> allowed)
    : cfg_(cfg) {
  std::string list;
  for (std::string_view key : allowed) list += (list.empty() ? "" : ", ") + std::string(key);
  for (const auto& [key, node] : config::signal_keys(cfg)) {
    if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
      errors_.push_back(cfg.locate(key.str()) + ": unknown key for kind " + cfg.kind +
                        " (allowed: " + list + ")");
    }
  }
}

void ParamReader::invalid(std::string_view key, std::string_view message) {
  const toml::node* node = keys().get(key);
  errors_.push_back(cfg_.locate(key) +
                    (node == nullptr ? "" : " = " + config::describe_value(*node)) + ": " +
                    std::string(message));
}

void ParamReader::missing(std::string_view key) {
  // An absent key has no position; "file:0:0" would send the reader looking.
  errors_.push_back(cfg_.source_name + ": " + cfg_.path + "." + std::string(key) +
                    ": required for kind " + cfg_.kind);
}

std::optional<std::string> ParamReader::string(std::string_view key, bool required) {
  const toml::node* node = keys().get(key);
  if (node == nullptr) {
    if (required) missing(key);
    return std::nullopt;
  }
  if (!node->is_string()) {
    invalid(key, "must be a string");
    return std::nullopt;
  }
  return node->value<std::string>();
}

std::chrono::nanoseconds ParamReader::duration(std::string_view key,
                                               std::chrono::nanoseconds fallback,
                                               std::chrono::nanoseconds min,
                                               std::chrono::nanoseconds max) {
  const toml::node* node = keys().get(key);
  if (node == nullptr) return fallback;
  if (!node->is_string()) {
    invalid(key, "must be a duration string such as \"100ms\"");
    return fallback;
  }
  auto parsed = parse_duration(*node->value<std::string>());
  if (!parsed) {
    invalid(key, parsed.error().message);
    return fallback;
  }
  if (*parsed < min || *parsed > max) {
    invalid(key, "must be " + format_duration(min) + ".." + format_duration(max));
    return fallback;
  }
  return *parsed;
}

int64_t ParamReader::integer(std::string_view key, int64_t fallback, int64_t min, int64_t max,
                             bool required) {
  const toml::node* node = keys().get(key);
  if (node == nullptr) {
    if (required) missing(key);
    return fallback;
  }
  if (!node->is_integer()) {
    invalid(key, "must be an integer");
    return fallback;
  }
  int64_t value = *node->value<int64_t>();
  if (value < min || value > max) {
    invalid(key, "must be " + std::to_string(min) + ".." + std::to_string(max));
    return fallback;
  }
  return value;
}

std::optional<double> ParamReader::number(std::string_view key, double min, double max) {
  const toml::node* node = keys().get(key);
  if (node == nullptr) return std::nullopt;
  if (!node->is_number()) {
    invalid(key, "must be a number");
    return std::nullopt;
  }
  double value = *node->value<double>();
  if (!std::isfinite(value)) {
    invalid(key, "must be a finite number");
    return std::nullopt;
  }
  if (value < min || value > max) {
    invalid(key, "must be " + config::format_number(min) + ".." + config::format_number(max));
    return std::nullopt;
  }
  return value;
}

const toml::table* ParamReader::table(std::string_view key) {
  const toml::node* node = keys().get(key);
  if (node == nullptr) return nullptr;
  if (!node->is_table()) {
    invalid(key, "must be a table, e.g. { key = \"value\" }");
    return nullptr;
  }
  return node->as_table();
}

std::optional<std::size_t> ParamReader::choice_index(std::string_view key,
                                                     std::span<const std::string_view> names,
                                                     bool required) {
  auto value = string(key, required);
  if (!value) return std::nullopt;
  const auto found = std::find(names.begin(), names.end(), *value);
  if (found != names.end()) return static_cast<std::size_t>(found - names.begin());
  std::string list;
  for (std::string_view c : names) list += (list.empty() ? "\"" : ", \"") + std::string(c) + "\"";
  invalid(key, "must be one of " + list);
  return std::nullopt;
}

void ParamReader::periodic(std::chrono::nanoseconds& interval, std::chrono::nanoseconds& timeout) {
  using std::chrono::milliseconds;
  interval = duration("interval", interval, milliseconds(10), std::chrono::hours(1));
  timeout = duration("timeout", timeout, milliseconds(1), std::chrono::minutes(1));
  if (!has("timeout")) {
    timeout = std::min(timeout, interval);
  } else if (timeout > interval) {
    invalid("timeout", "must not exceed interval (" + format_duration(interval) + ")");
  }
  if (ok()) check_stale_after(interval, timeout);
}

void ParamReader::check_stale_after(std::chrono::nanoseconds interval,
                                    std::chrono::nanoseconds timeout) {
  if (cfg_.stale_after >= interval + timeout) return;
  errors_.push_back(cfg_.source_name + ": " + cfg_.path + ".stale_after = \"" +
                    format_duration(cfg_.stale_after) +
                    "\": must be at least interval + timeout (" +
                    format_duration(interval + timeout) + ") for kind " + cfg_.kind +
                    ", or each sample goes stale before the next one can arrive");
}

Status ParamReader::finish() const {
  if (errors_.empty()) return {};
  std::string message;
  // One line per error: a value quoted in it may hold a newline.
  for (const std::string& e : errors_) {
    message += (message.empty() ? "" : "\n") + config::escape_control_chars(e);
  }
  return make_error(message);
}

}  // namespace edgeshed::signals
