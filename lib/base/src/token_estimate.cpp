#include "bp/token_estimate.h"

namespace bp {

int64_t EstimateTokens(std::string_view text) {
  const auto n = static_cast<int64_t>(text.size());
  return (n + kBytesPerToken - 1) / kBytesPerToken;
}

std::string TextOfTokens(int64_t tokens) {
  if (tokens <= 0) return {};
  static constexpr std::string_view kWord = "tok ";  // 4 bytes = 1 token
  std::string out;
  out.reserve(static_cast<size_t>(tokens) * kWord.size());
  for (int64_t i = 0; i < tokens; ++i) out.append(kWord);
  return out;
}

}  // namespace bp
