// Typed, range-checked reads from a toml++ table that collect errors with
// their source position instead of stopping at the first one.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

namespace edgeshed::config {

// Collects "<source>:<line>:<column>: <message>" lines.
class ConfigErrors {
 public:
  explicit ConfigErrors(std::string_view source_name) : source_name_(source_name) {}

  void add(const toml::source_region& region, const std::string& message);
  bool empty() const { return lines_.empty(); }
  // All errors, one per line, in the order found.
  std::string joined() const;
  // "<source>:<line>:<column>" of a place in the file.
  std::string where(const toml::source_region& region) const;

 private:
  std::string source_name_;
  std::vector<std::string> lines_;
};

// The text with its control characters (a newline, say, inside a quoted
// value or in what the TOML parser saw) written as escapes, so that one
// error stays one line. Tabs are kept.
std::string escape_control_chars(std::string_view text);

// How a number range's ends are written in messages and checked.
enum class Bounds { kClosed, kOpenMin, kOpenMax, kOpen };

// Renders a number as a config writer would: 1.0, 0.25, 1e+20.
std::string format_number(double value);

// Reads the keys of one table. Every key read is marked known; unknown_keys()
// then reports the rest, suggesting the closest known key.
class TableReader {
 public:
  // path is the dotted key of the table ("levels.high", "port[2]"); empty for the root.
  TableReader(ConfigErrors& errors, const toml::table& table, std::string path);

  // Returns the node (or null when absent) and marks the key known.
  const toml::node* get(std::string_view key);
  // Marks a key known without reading it (e.g. a key handled elsewhere).
  void allow(std::string_view key) { known_.emplace(key); }

  // Each reader leaves `out` untouched and returns false when the key is
  // absent or invalid (after recording an error for the latter).
  bool duration(std::string_view key, std::chrono::nanoseconds& out, std::chrono::nanoseconds min,
                std::chrono::nanoseconds max, bool zero_allowed = false);
  bool number(std::string_view key, double& out, double min, double max, Bounds bounds);
  bool integer(std::string_view key, uint32_t& out, uint64_t min, uint64_t max);
  bool signed_integer(std::string_view key, int32_t& out, int32_t min, int32_t max);
  bool boolean(std::string_view key, bool& out);
  bool string(std::string_view key, std::string& out);
  // An array of strings; an element of another type is an error.
  bool strings(std::string_view key, std::vector<std::string>& out);

  // A choice among the names of a table indexed by the enum's values
  // (common/names.h), from index `first` on.
  template <class Enum, std::size_t N>
  bool choice(std::string_view key, Enum& out, const std::array<std::string_view, N>& names,
              std::size_t first = 0) {
    const std::optional<std::size_t> index =
        choice_index(key, std::span<const std::string_view>(names).subspan(first));
    if (!index) return false;
    out = static_cast<Enum>(*index + first);
    return true;
  }

  // The index of the key's value among `names`; otherwise an error is
  // recorded (nothing when the key is absent).
  std::optional<std::size_t> choice_index(std::string_view key,
                                          std::span<const std::string_view> names);

  // A sub-table, or null when absent or not a table (error recorded).
  const toml::table* table(std::string_view key);
  // An array of tables ([[key]]), or null when absent or another type.
  const toml::array* array_of_tables(std::string_view key);

  // Records "<path> = <value>: <problem>" at the key.
  void invalid(std::string_view key, const std::string& problem);
  // Records "<table>: missing required key "<key>"" at the table.
  void missing(std::string_view key);
  // True and an error recorded when the key is absent.
  bool require(std::string_view key);

  // Records an error for every key of the table that was not read or allowed.
  void reject_unknown_keys();

  std::string path_of(std::string_view key) const;
  // "<source>:<line>:<column>" of the key's value, or of the table when absent.
  std::string where(std::string_view key) const;
  const std::string& path() const { return path_; }
  const toml::table& source_table() const { return table_; }
  ConfigErrors& errors() { return errors_; }

 private:
  // The key's integer value if it is one within [min, max]; otherwise an
  // error is recorded (nothing when the key is absent).
  std::optional<int64_t> integer_in(std::string_view key, int64_t min, int64_t max);

  ConfigErrors& errors_;
  const toml::table& table_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
};

// "<path> = <value>" of a node as written, for messages.
std::string describe_value(const toml::node& node);

}  // namespace edgeshed::config
