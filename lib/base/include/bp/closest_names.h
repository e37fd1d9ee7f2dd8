// "Did you mean" hints: the known names nearest to a mistyped one, by
// Levenshtein edit distance (insertions, deletions and substitutions of one
// byte each cost 1). Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bp {

// Edit distance between a and b, O(|a| * |b|) time, O(|b|) memory.
size_t EditDistance(std::string_view a, std::string_view b);

// Up to max_count of `names` within distance max(2, |word| / 3) of `word`,
// nearest first, ties in the order of `names`; `word` itself is never
// returned. Empty when none is that close.
std::vector<std::string> ClosestNames(std::string_view word, const std::vector<std::string>& names,
                                      size_t max_count = 3);

}  // namespace bp
