#include "signals/parse/netstat.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "common/edit_distance.h"
#include "signals/parse/fields.h"

namespace edgeshed::signals {
namespace {

std::vector<std::string_view> split_blanks(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view f = next_field(text); !f.empty(); f = next_field(text)) out.push_back(f);
  return out;
}

std::size_t count_fields(std::string_view rest) {
  std::size_t n = 0;
  while (!next_field(rest).empty()) ++n;
  return n;
}

struct Line {
  std::size_t number = 0;
  std::string_view prefix;  // without the colon
  std::vector<std::string_view> fields;
};

Result<Line> split_line(std::string_view text, std::size_t number) {
  const std::string where = "line " + std::to_string(number) + ": ";
  std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      text.substr(0, colon).find_first_of(" \t") != std::string_view::npos) {
    return make_error(where + "expected '<Section>: ...', found '" +
                      std::string(text.substr(0, 40)) + "'");
  }
  return Line{number, text.substr(0, colon), split_blanks(text.substr(colon + 1))};
}

}  // namespace

Result<Netstat> parse_netstat(std::string_view text) {
  std::vector<Line> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    std::string_view row = next_line(text);
    if (std::string_view blank_probe = row; next_field(blank_probe).empty()) continue;
    auto line = split_line(row, number);
    if (!line) return line.error();
    lines.push_back(std::move(*line));
  }

  Netstat out;
  for (std::size_t i = 0; i < lines.size(); i += 2) {
    const Line& names = lines[i];
    const std::string section(names.prefix);
    if (i + 1 == lines.size()) {
      return make_error("line " + std::to_string(names.number) + ": " + section +
                        " names without a values line");
    }
    const Line& values = lines[i + 1];
    const std::string where = "line " + std::to_string(values.number) + ": ";
    if (values.prefix != names.prefix) {
      return make_error(where + "expected the values of " + section + ", found '" +
                        std::string(values.prefix) + ":'");
    }
    if (values.fields.size() != names.fields.size()) {
      return make_error(where + section + " has " + std::to_string(names.fields.size()) +
                        " names but " + std::to_string(values.fields.size()) + " values");
    }
    NetstatSection counters;
    for (std::size_t f = 0; f < names.fields.size(); ++f) {
      std::string_view value = values.fields[f];
      uint64_t parsed = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return make_error(where + section + "." + std::string(names.fields[f]) + " = '" +
                          std::string(value) + "' is not a whole number");
      }
      if (!counters.emplace(std::string(names.fields[f]), parsed).second) {
        return make_error("line " + std::to_string(names.number) + ": " + section + "." +
                          std::string(names.fields[f]) + " appears twice");
      }
    }
    if (!out.sections.emplace(section, std::move(counters)).second) {
      return make_error("line " + std::to_string(names.number) + ": section " + section +
                        " appears twice");
    }
  }
  return out;
}

bool for_each_quick_counter(
    std::string_view text, std::string_view section,
    const std::function<bool(std::string_view name, std::optional<uint64_t> value)>& visit) {
  // The names line: the first that starts "<section>:".
  std::string_view names, values;
  while (!text.empty()) {
    std::string_view row = next_line(text);
    if (row.size() > section.size() && row.substr(0, section.size()) == section &&
        row[section.size()] == ':') {
      if (names.empty()) {
        names = row.substr(section.size() + 1);
        continue;
      }
      values = row.substr(section.size() + 1);
      break;
    }
    if (!names.empty()) return false;  // the values line must follow
  }
  if (values.empty() || count_fields(names) != count_fields(values)) return false;
  for (std::string_view name = next_field(names); !name.empty(); name = next_field(names)) {
    const std::string_view value = next_field(values);
    uint64_t parsed = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    const bool whole = ec == std::errc() && end == value.data() + value.size();
    if (!visit(name, whole ? std::optional(parsed) : std::nullopt)) break;
  }
  return true;
}

std::optional<uint64_t> quick_counter(std::string_view text, std::string_view section,
                                      std::string_view counter) {
  std::optional<uint64_t> found;
  for_each_quick_counter(text, section, [&](std::string_view name, std::optional<uint64_t> value) {
    if (name != counter) return true;
    found = value;
    return false;
  });
  return found;
}

Result<uint64_t> find_counter(const Netstat& netstat, std::string_view section,
                              std::string_view counter) {
  auto s = netstat.sections.find(section);
  if (s == netstat.sections.end()) return make_error("no " + std::string(section) + " section");
  auto c = s->second.find(counter);
  if (c != s->second.end()) return c->second;
  std::string message = std::string(section) + " has no counter '" + std::string(counter) + "'";
  if (const std::string* closest =
          closest_name(counter, s->second, 3,
                       [](const auto& entry) -> const std::string& { return entry.first; });
      closest != nullptr)
    message += " (did you mean '" + *closest + "'?)";
  return make_error(message);
}

}  // namespace edgeshed::signals
