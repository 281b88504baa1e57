#include "signals/parse/psi.h"

#include <charconv>
#include <string>

#include "signals/parse/fields.h"

namespace edgeshed::signals {
namespace {

Result<double> parse_double(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return make_error("'" + std::string(text) + "' is not a number");
  }
  return v;
}

// "avg10=0.00 avg60=0.00 avg300=0.00 total=0"
Result<PsiLine> parse_fields(std::string_view rest) {
  PsiLine line;
  int seen = 0;
  for (std::string_view field = next_field(rest); !field.empty(); field = next_field(rest)) {
    auto eq = field.find('=');
    if (eq == std::string_view::npos) {
      return make_error("field '" + std::string(field) + "' has no '='");
    }
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "total") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), line.total_us);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return make_error("total '" + std::string(value) + "' is not a whole number");
      }
      seen |= 8;
      continue;
    }
    auto v = parse_double(value);
    if (!v) return v.error();
    if (key == "avg10")
      line.avg10 = *v, seen |= 1;
    else if (key == "avg60")
      line.avg60 = *v, seen |= 2;
    else if (key == "avg300")
      line.avg300 = *v, seen |= 4;
  }
  if (seen != 15) return make_error("expected avg10, avg60, avg300 and total");
  return line;
}

}  // namespace

Result<PsiStats> parse_psi(std::string_view text) {
  PsiStats stats;
  bool has_some = false;
  while (!text.empty()) {
    const std::string_view row = next_line(text);
    if (row.empty()) continue;
    auto space = row.find(' ');
    std::string_view kind = row.substr(0, space);
    if (space == std::string_view::npos) {
      return make_error("line '" + std::string(row) + "' has no fields");
    }
    auto line = parse_fields(row.substr(space + 1));
    if (!line) return make_error("PSI line '" + std::string(row) + "': " + line.error().message);
    if (kind == "some")
      stats.some = *line, has_some = true;
    else if (kind == "full")
      stats.full = *line;
    else
      return make_error("PSI line '" + std::string(row) + "': expected 'some' or 'full'");
  }
  if (!has_some) return make_error("no 'some' line in PSI data");
  return stats;
}

}  // namespace edgeshed::signals
