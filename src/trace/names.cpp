#include "trace/names.hpp"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

namespace ds {

namespace {

bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
  const auto n = static_cast<std::int32_t>(s.size());
  for (std::int32_t i = 0; i < n;) {
    UChar32 c = 0;
    U8_NEXT(p, i, n, c);
    if (c < 0) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> fold_name(std::string_view name) {
  if (!valid_utf8(name)) return std::nullopt;
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* fold = icu::Normalizer2::getNFKCCasefoldInstance(status);
  if (U_FAILURE(status) || !fold) return std::string(name);  // no ICU data: exact names
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(
      icu::StringPiece(name.data(), static_cast<int32_t>(name.size())));
  icu::UnicodeString folded = fold->normalize(text, status);
  if (U_FAILURE(status)) return std::string(name);
  folded.trim();
  std::string out;
  folded.toUTF8String(out);
  return out;
}

bool has_outer_space(std::string_view name) {
  if (name.empty()) return false;
  const auto* p = reinterpret_cast<const std::uint8_t*>(name.data());
  const auto n = static_cast<std::int32_t>(name.size());
  std::int32_t i = 0;
  UChar32 first = 0, last = 0;
  U8_NEXT(p, i, n, first);
  std::int32_t j = n;
  U8_PREV(p, 0, j, last);
  return (first >= 0 && u_isUWhiteSpace(first)) || (last >= 0 && u_isUWhiteSpace(last));
}

}  // namespace ds
