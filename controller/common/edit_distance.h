// Levenshtein distance: the fewest single-character insertions, deletions
// and substitutions that turn a into b. Used to suggest the name an unknown
// one was probably meant to be (a config key, a netstat counter).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace edgeshed {

inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The name in `names` nearest to `word`, when nearer than `max_distance`
// (a near miss), else null: what "did you mean" offers. `name_of` gives an
// entry's name (a map's key, say).
template <class Names, class NameOf = std::identity>
const std::string* closest_name(std::string_view word, const Names& names,
                                std::size_t max_distance = 3, NameOf name_of = {}) {
  const std::string* closest = nullptr;
  for (const auto& entry : names) {
    const std::string& name = name_of(entry);
    // The lengths' difference is a lower bound of the distance: a name it
    // already rules out costs no table, which a long unknown word (a
    // garbled config key) would make |word| x |name| cells for every name.
    const std::size_t length_gap =
        word.size() > name.size() ? word.size() - name.size() : name.size() - word.size();
    if (length_gap >= max_distance) continue;
    if (const std::size_t d = edit_distance(word, name); d < max_distance) {
      max_distance = d;
      closest = &name;
    }
  }
  return closest;
}

}  // namespace edgeshed
