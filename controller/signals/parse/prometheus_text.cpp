#include "signals/parse/prometheus_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace edgeshed::signals {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_metric_name_start(char c) { return is_alpha(c) || c == '_' || c == ':'; }
bool is_metric_name_char(char c) { return is_metric_name_start(c) || is_digit(c); }
bool is_label_name_start(char c) { return is_alpha(c) || c == '_'; }
bool is_label_name_char(char c) { return is_label_name_start(c) || is_digit(c); }

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

// Long garbage is cut so that one error stays one readable line.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 40;
  if (text.size() <= kMax) return std::string(text);
  return std::string(text.substr(0, kMax)) + "...";
}

}  // namespace

// Values as Go's strconv.ParseFloat reads them, which is what Prometheus
// itself accepts: decimal or scientific notation, and Inf/NaN spelled in any
// case with an optional sign.
Result<double> parse_prometheus_value(std::string_view token) {
  std::string_view body = token;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (equals_ignore_case(body, "inf") || equals_ignore_case(body, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (equals_ignore_case(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  const Error garbage = make_error("value '" + excerpt(token) + "' is not a number");
  // from_chars alone would also take "nan(...)" and leading signs after ours.
  if (body.empty() || !(is_digit(body[0]) || body[0] == '.')) return garbage;
  for (char c : body) {
    if (!is_digit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') return garbage;
  }
  double value = 0.0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return make_error("value '" + excerpt(token) + "' is out of range for a double");
  }
  if (ec != std::errc() || end != body.data() + body.size()) return garbage;
  return negative ? -value : value;
}

namespace {

Result<int64_t> parse_timestamp(std::string_view token) {
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), ms);
  if (ec == std::errc::result_out_of_range) {
    return make_error("timestamp '" + excerpt(token) + "' is out of range");
  }
  if (ec != std::errc() || end != token.data() + token.size()) {
    return make_error("timestamp '" + excerpt(token) + "' is not an integer (milliseconds)");
  }
  return ms;
}

// Indexed by MetricType.
constexpr std::array<std::string_view, 5> kTypeNames = {"untyped", "counter", "gauge", "histogram",
                                                        "summary"};
static_assert(static_cast<std::size_t>(MetricType::kSummary) + 1 == kTypeNames.size());

Result<MetricType> parse_type(std::string_view word) {
  std::string expected;
  for (std::size_t i = 0; i < kTypeNames.size(); ++i) {
    if (word == kTypeNames[i]) return static_cast<MetricType>(i);
    expected += i == 0 ? "" : i + 1 == kTypeNames.size() ? " or " : ", ";
    expected += kTypeNames[i];
  }
  return make_error("unknown metric type '" + excerpt(word) + "' (expected " + expected + ")");
}

// A cursor over one line, without its line break.
class Cursor {
 public:
  explicit Cursor(std::string_view line) : line_(line) {}

  bool at_end() const { return pos_ >= line_.size(); }
  char peek() const { return at_end() ? '\0' : line_[pos_]; }
  void advance() { ++pos_; }
  void skip_blanks() {
    while (!at_end() && is_blank(line_[pos_])) ++pos_;
  }
  // Up to the next blank (or end of line).
  std::string_view token() {
    std::size_t start = pos_;
    while (!at_end() && !is_blank(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }
  std::string_view rest() {
    std::string_view r = line_.substr(pos_);
    pos_ = line_.size();
    return r;
  }

  // A metric name; the error shows the offending token.
  Result<std::string> metric_name(std::string_view stop_chars) {
    std::size_t start = pos_;
    while (!at_end() && is_metric_name_char(line_[pos_])) ++pos_;
    bool clean_end =
        at_end() || is_blank(line_[pos_]) || stop_chars.find(line_[pos_]) != std::string_view::npos;
    if (pos_ == start || !is_metric_name_start(line_[start]) || !clean_end) {
      pos_ = start;
      std::size_t end = start;
      while (end < line_.size() && !is_blank(line_[end]) &&
             stop_chars.find(line_[end]) == std::string_view::npos) {
        ++end;
      }
      std::string_view bad = line_.substr(start, end - start);
      if (bad.empty()) return make_error("missing metric name");
      return make_error("bad metric name '" + excerpt(bad) +
                        "' (must match [a-zA-Z_:][a-zA-Z0-9_:]*)");
    }
    return std::string(line_.substr(start, pos_ - start));
  }

  // "{a=\"x\",b=\"y\"}", the cursor on the '{'.
  Result<Labels> label_set() {
    Labels labels;
    advance();  // '{'
    for (;;) {
      skip_blanks();
      if (at_end()) return make_error("unterminated label set: expected '}'");
      if (peek() == '}') {
        advance();
        return labels;
      }
      std::size_t start = pos_;
      while (!at_end() && is_label_name_char(line_[pos_])) ++pos_;
      std::string_view name = line_.substr(start, pos_ - start);
      const bool clean_end =
          at_end() || is_blank(peek()) || peek() == '=' || peek() == ',' || peek() == '}';
      if (name.empty() || !is_label_name_start(name[0]) || !clean_end) {
        std::size_t end = start;
        while (end < line_.size() && !is_blank(line_[end]) && line_[end] != '=' &&
               line_[end] != ',' && line_[end] != '}') {
          ++end;
        }
        return make_error("bad label name '" + excerpt(line_.substr(start, end - start)) +
                          "' (must match [a-zA-Z_][a-zA-Z0-9_]*)");
      }
      skip_blanks();
      if (peek() != '=') {
        return make_error("expected '=' after label name '" + std::string(name) + "'");
      }
      advance();
      skip_blanks();
      if (peek() != '"') {
        return make_error("expected '\"' to open the value of label '" + std::string(name) + "'");
      }
      advance();
      auto value = label_value(name);
      if (!value) return value.error();
      if (!labels.emplace(std::string(name), std::move(*value)).second) {
        return make_error("duplicate label name '" + std::string(name) + "'");
      }
      skip_blanks();
      if (peek() == ',') {
        advance();
      } else if (peek() != '}') {
        if (at_end()) return make_error("unterminated label set: expected '}'");
        return make_error("expected ',' or '}' after the value of label '" + std::string(name) +
                          "', found '" + std::string(1, peek()) + "'");
      }
    }
  }

 private:
  // After the opening quote, through the closing one.
  Result<std::string> label_value(std::string_view name) {
    std::string value;
    while (!at_end()) {
      char c = line_[pos_++];
      if (c == '"') return value;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (at_end()) break;
      char e = line_[pos_++];
      if (e == '\\') {
        value += '\\';
      } else if (e == '"') {
        value += '"';
      } else if (e == 'n') {
        value += '\n';
      } else {
        return make_error("bad escape '\\" + std::string(1, e) + "' in the value of label '" +
                          std::string(name) + R"(' (allowed: \\, \", \n))");
      }
    }
    return make_error("unterminated value of label '" + std::string(name) + "'");
  }

  std::string_view line_;
  std::size_t pos_ = 0;
};

// HELP text escapes only backslash and newline; anything else stays as written.
std::string unescape_help(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
      out += text[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

Status parse_comment(Cursor& cursor, Exposition& out) {
  cursor.advance();  // '#'
  cursor.skip_blanks();
  std::string_view keyword = cursor.token();
  if (keyword != "HELP" && keyword != "TYPE") return {};  // a plain comment
  cursor.skip_blanks();
  auto name = cursor.metric_name("");
  if (!name) return make_error(std::string(keyword) + " line: " + name.error().message);
  cursor.skip_blanks();
  if (keyword == "HELP") {
    if (!out.help.emplace(*name, unescape_help(cursor.rest())).second) {
      return make_error("second HELP line for '" + *name + "'");
    }
    return {};
  }
  std::string_view word = cursor.token();
  if (word.empty()) return make_error("TYPE line for '" + *name + "' names no type");
  auto type = parse_type(word);
  if (!type) return type.error();
  cursor.skip_blanks();
  if (!cursor.at_end()) {
    return make_error("unexpected '" + excerpt(cursor.rest()) + "' after the type of '" + *name +
                      "'");
  }
  if (!out.types.emplace(*name, *type).second) {
    return make_error("second TYPE line for '" + *name + "'");
  }
  return {};
}

Result<MetricSample> parse_sample(Cursor& cursor) {
  MetricSample sample;
  auto name = cursor.metric_name("{");
  if (!name) return name.error();
  sample.name = std::move(*name);
  if (cursor.peek() == '{') {
    auto labels = cursor.label_set();
    if (!labels) return labels.error();
    sample.labels = std::move(*labels);
  }
  cursor.skip_blanks();
  std::string_view value_token = cursor.token();
  if (value_token.empty()) return make_error("missing value for '" + sample.name + "'");
  auto value = parse_prometheus_value(value_token);
  if (!value) return value.error();
  sample.value = *value;
  cursor.skip_blanks();
  if (cursor.at_end()) return sample;
  auto timestamp = parse_timestamp(cursor.token());
  if (!timestamp) return timestamp.error();
  sample.timestamp_ms = *timestamp;
  cursor.skip_blanks();
  if (!cursor.at_end()) {
    return make_error("unexpected '" + excerpt(cursor.rest()) + "' after the timestamp");
  }
  return sample;
}

}  // namespace

std::string_view to_string(MetricType type) {
  const auto index = static_cast<std::size_t>(type);
  if (index >= kTypeNames.size()) return "unknown";
  return kTypeNames[index];
}

MetricType Exposition::type_of(std::string_view sample_name) const {
  if (auto it = types.find(sample_name); it != types.end()) return it->second;
  for (std::string_view suffix : {"_bucket", "_count", "_sum"}) {
    if (sample_name.size() <= suffix.size() || !sample_name.ends_with(suffix)) continue;
    auto it = types.find(sample_name.substr(0, sample_name.size() - suffix.size()));
    if (it == types.end()) continue;
    if (it->second == MetricType::kHistogram ||
        (it->second == MetricType::kSummary && suffix != "_bucket")) {
      return it->second;
    }
  }
  return MetricType::kUntyped;
}

bool labels_match(const Labels& labels, const Labels& match) {
  return std::all_of(match.begin(), match.end(), [&labels](const auto& entry) {
    auto it = labels.find(entry.first);
    return it != labels.end() && it->second == entry.second;
  });
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_series(std::string_view name, const Labels& labels) {
  std::string out(name);
  if (labels.empty()) return out;
  out += '{';
  bool first = true;
  for (const auto& [key, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += key + "=\"" + escape_label_value(value) + '"';
  }
  out += '}';
  return out;
}

Result<Exposition> parse_prometheus_text(std::string_view text) {
  Exposition out;
  // Indices into out.samples, ordered by series, to catch a series given
  // twice: which of the two values is meant cannot be known.
  auto series_less = [&out](std::size_t a, std::size_t b) {
    const MetricSample& x = out.samples[a];
    const MetricSample& y = out.samples[b];
    return x.name != y.name ? x.name < y.name : x.labels < y.labels;
  };
  std::set<std::size_t, decltype(series_less)> seen(series_less);

  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    while (!line.empty() && (is_blank(line.back()) || line.back() == '\r')) line.remove_suffix(1);

    Cursor cursor(line);
    cursor.skip_blanks();
    if (cursor.at_end()) continue;
    const std::string where = "line " + std::to_string(line_number) + ": ";
    if (cursor.peek() == '#') {
      if (auto s = parse_comment(cursor, out); !s) return make_error(where + s.error().message);
      continue;
    }
    auto sample = parse_sample(cursor);
    if (!sample) return make_error(where + sample.error().message);
    out.samples.push_back(std::move(*sample));
    if (!seen.insert(out.samples.size() - 1).second) {
      return make_error(where + "series " +
                        format_series(out.samples.back().name, out.samples.back().labels) +
                        " appears twice");
    }
  }
  return out;
}

}  // namespace edgeshed::signals
