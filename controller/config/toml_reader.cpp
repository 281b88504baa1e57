#include "config/toml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/duration.h"
#include "common/edit_distance.h"

namespace edgeshed::config {

std::string escape_control_chars(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if ((u < 0x20 && c != '\t') || u == 0x7f) {
      out += {'\\', 'x', kHex[u >> 4], kHex[u & 15]};
    } else {
      out += c;
    }
  }
  return out;
}

void ConfigErrors::add(const toml::source_region& region, const std::string& message) {
  lines_.push_back(where(region) + ": " + escape_control_chars(message));
}

std::string ConfigErrors::where(const toml::source_region& region) const {
  return source_name_ + ":" + std::to_string(region.begin.line) + ":" +
         std::to_string(region.begin.column);
}

std::string ConfigErrors::joined() const {
  std::string text;
  for (const std::string& line : lines_) {
    if (!text.empty()) text += '\n';
    text += line;
  }
  return text;
}

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest text that reads back as the same double: 1.4, not 1.3999999999999999.
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, error == std::errc() ? end : buffer);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // a float looks like one
  return text;
}

std::string describe_value(const toml::node& node) {
  if (node.is_table()) return "(a table)";
  if (node.is_array()) return "(an array)";
  if (node.is_floating_point()) return format_number(node.as_floating_point()->get());
  if (node.is_string()) {
    // As the user most likely wrote it, with double quotes.
    std::string text = "\"";
    for (char c : node.as_string()->get()) {
      if (c == '"' || c == '\\') text += '\\';
      text += c;
    }
    return text + "\"";
  }
  std::ostringstream out;
  node.visit([&out](const auto& value) { out << value; });
  return out.str();
}

namespace {

// Empty for the whole real line, where only "is a finite number" is asked.
std::string range_text(double min, double max, Bounds bounds) {
  if (min == -std::numeric_limits<double>::infinity() &&
      max == std::numeric_limits<double>::infinity()) {
    return "";
  }
  const bool open_min = bounds == Bounds::kOpenMin || bounds == Bounds::kOpen;
  const bool open_max = bounds == Bounds::kOpenMax || bounds == Bounds::kOpen;
  if (max == std::numeric_limits<double>::infinity()) {
    return std::string("must be ") + (open_min ? "> " : ">= ") + format_number(min);
  }
  return std::string("must be in ") + (open_min ? "(" : "[") + format_number(min) + ", " +
         format_number(max) + (open_max ? ")" : "]");
}

}  // namespace

TableReader::TableReader(ConfigErrors& errors, const toml::table& table, std::string path)
    : errors_(errors), table_(table), path_(std::move(path)) {}

std::string TableReader::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const toml::node* TableReader::get(std::string_view key) {
  known_.emplace(key);
  return table_.get(key);
}

void TableReader::invalid(std::string_view key, const std::string& problem) {
  auto entry = table_.find(key);
  if (entry == table_.end()) {
    errors_.add(table_.source(), path_of(key) + ": " + problem);
    return;
  }
  // At the key, where an editor should put the cursor to fix the line.
  errors_.add(entry->first.source(),
              path_of(key) + " = " + describe_value(entry->second) + ": " + problem);
}

void TableReader::missing(std::string_view key) {
  const std::string where = path_.empty() ? std::string("top level") : path_;
  errors_.add(table_.source(), where + ": missing required key \"" + std::string(key) + "\"");
}

bool TableReader::require(std::string_view key) {
  if (table_.contains(key)) return false;
  missing(key);
  return true;
}

bool TableReader::duration(std::string_view key, std::chrono::nanoseconds& out,
                           std::chrono::nanoseconds min, std::chrono::nanoseconds max,
                           bool zero_allowed) {
  const toml::node* node = get(key);
  if (node == nullptr) return false;
  const std::string range = (zero_allowed ? "must be 0 or between " : "must be between ") +
                            format_duration(min) + " and " + format_duration(max);
  if (!node->is_string()) {
    invalid(key, "must be a duration string like \"100ms\", " + range);
    return false;
  }
  Result<std::chrono::nanoseconds> parsed = parse_duration(node->as_string()->get());
  if (!parsed) {
    invalid(key, parsed.error().message);
    return false;
  }
  const std::chrono::nanoseconds value = parsed.value();
  if (!(value == std::chrono::nanoseconds(0) && zero_allowed) && (value < min || value > max)) {
    invalid(key, range);
    return false;
  }
  out = value;
  return true;
}

bool TableReader::number(std::string_view key, double& out, double min, double max, Bounds bounds) {
  const toml::node* node = get(key);
  if (node == nullptr) return false;
  double value = 0.0;
  if (node->is_floating_point()) {
    value = node->as_floating_point()->get();
  } else if (node->is_integer()) {
    value = static_cast<double>(node->as_integer()->get());
  } else {
    const std::string range = range_text(min, max, bounds);
    invalid(key, "must be a number" + (range.empty() ? "" : ", " + range));
    return false;
  }
  const bool open_min = bounds == Bounds::kOpenMin || bounds == Bounds::kOpen;
  const bool open_max = bounds == Bounds::kOpenMax || bounds == Bounds::kOpen;
  const bool above_min = open_min ? value > min : value >= min;
  const bool below_max = open_max ? value < max : value <= max;
  // Written so that NaN fails, and an infinite max still rejects inf.
  if (!(above_min && below_max && std::isfinite(value))) {
    const std::string range = range_text(min, max, bounds);
    invalid(key, range.empty() ? "must be a finite number" : range);
    return false;
  }
  out = value;
  return true;
}

std::optional<int64_t> TableReader::integer_in(std::string_view key, int64_t min, int64_t max) {
  const toml::node* node = get(key);
  if (node == nullptr) return std::nullopt;
  const std::string range =
      "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!node->is_integer() || node->as_integer()->get() < min || node->as_integer()->get() > max) {
    invalid(key, range);
    return std::nullopt;
  }
  return node->as_integer()->get();
}

bool TableReader::integer(std::string_view key, uint32_t& out, uint64_t min, uint64_t max) {
  const auto value = integer_in(key, static_cast<int64_t>(min), static_cast<int64_t>(max));
  if (value) out = static_cast<uint32_t>(*value);
  return value.has_value();
}

bool TableReader::signed_integer(std::string_view key, int32_t& out, int32_t min, int32_t max) {
  const auto value = integer_in(key, min, max);
  if (value) out = static_cast<int32_t>(*value);
  return value.has_value();
}

bool TableReader::boolean(std::string_view key, bool& out) {
  const toml::node* node = get(key);
  if (node == nullptr) return false;
  if (!node->is_boolean()) {
    invalid(key, "must be true or false");
    return false;
  }
  out = node->as_boolean()->get();
  return true;
}

bool TableReader::string(std::string_view key, std::string& out) {
  const toml::node* node = get(key);
  if (node == nullptr) return false;
  if (!node->is_string()) {
    invalid(key, "must be a string");
    return false;
  }
  out = node->as_string()->get();
  return true;
}

bool TableReader::strings(std::string_view key, std::vector<std::string>& out) {
  const toml::node* node = get(key);
  if (node == nullptr) return false;
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    invalid(key, "must be an array of strings");
    return false;
  }
  std::vector<std::string> read;
  for (const toml::node& element : *array) {
    if (!element.is_string()) {
      invalid(key, "must be an array of strings");
      return false;
    }
    read.push_back(element.as_string()->get());
  }
  out = std::move(read);
  return true;
}

std::optional<std::size_t> TableReader::choice_index(std::string_view key,
                                                     std::span<const std::string_view> names) {
  std::string text;
  if (!string(key, text)) return std::nullopt;
  std::string listed;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return i;
    listed += listed.empty() ? "" : ", ";
    listed += "\"" + std::string(names[i]) + "\"";
  }
  invalid(key, "must be one of " + listed);
  return std::nullopt;
}

std::string TableReader::where(std::string_view key) const {
  const toml::node* node = table_.get(key);
  return errors_.where(node != nullptr ? node->source() : table_.source());
}

const toml::table* TableReader::table(std::string_view key) {
  const toml::node* node = get(key);
  if (node == nullptr) return nullptr;
  if (!node->is_table()) {
    invalid(key, "must be a table ([" + path_of(key) + "])");
    return nullptr;
  }
  return node->as_table();
}

const toml::array* TableReader::array_of_tables(std::string_view key) {
  const toml::node* node = get(key);
  if (node == nullptr) return nullptr;
  if (!node->is_array_of_tables()) {
    invalid(key, "must be an array of tables ([[" + path_of(key) + "]])");
    return nullptr;
  }
  return node->as_array();
}

void TableReader::reject_unknown_keys() {
  for (const auto& [key, node] : table_) {
    if (known_.contains(key.str())) continue;
    std::string message =
        (path_.empty() ? "unknown section \"" : "unknown key \"") + path_of(key.str()) + "\"";
    if (const std::string* closest = closest_name(key.str(), known_); closest != nullptr)
      message += "; did you mean \"" + path_of(*closest) + "\"?";
    // At the top, every key is a section: name them all, since a section
    // misremembered is seldom a near miss ("[limits]" for "[limit]" is,
    // "[shedding]" for "[policy]" is not).
    if (path_.empty()) {
      std::string sections;
      for (const std::string& known : known_) sections += (sections.empty() ? "" : ", ") + known;
      message += " (the sections are " + sections + ")";
    }
    errors_.add(key.source(), message);
  }
}

}  // namespace edgeshed::config
