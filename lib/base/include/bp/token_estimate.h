// The one token estimate every binary uses (SPEC section 2-3).
//
// Prompt tokens are estimated from text length as ceil(bytes / 4): the
// characters/4 rule of thumb that OpenAI documents and that LiteLLM's and the
// paper's mock upstream use (docs/providers.md). mockapi charges it, loadgen
// sizes prompts with it and the gate's callers estimate cost with it, so all
// three agree exactly. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bp {

inline constexpr int64_t kBytesPerToken = 4;

// ceil(text.size() / 4); 0 for empty text.
int64_t EstimateTokens(std::string_view text);

// A deterministic ASCII text whose estimate is exactly `tokens` tokens
// (4 * tokens bytes). Used by loadgen and tests to build prompts of a size.
std::string TextOfTokens(int64_t tokens);

}  // namespace bp
