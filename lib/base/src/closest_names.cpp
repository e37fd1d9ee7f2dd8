// Edit distance and nearest names (closest_names.h).
#include "bp/closest_names.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace bp {

size_t EditDistance(std::string_view a, std::string_view b) {
  // One row of the dynamic programme: row[j] = distance(a[0..i), b[0..j)).
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];  // distance(a[0..i-1), b[0..j-1))
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> ClosestNames(std::string_view word, const std::vector<std::string>& names,
                                      size_t max_count) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::vector<std::pair<size_t, size_t>> near;  // (distance, index in names)
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == word) continue;
    const size_t d = EditDistance(word, names[i]);
    if (d <= limit) near.emplace_back(d, i);
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t k = 0; k < near.size() && k < max_count; ++k) out.push_back(names[near[k].second]);
  return out;
}

}  // namespace bp
