#include "detail/unicode.h"

#include <algorithm>
#include <iterator>

namespace tinygpt::data {

namespace {
struct CodePointRange {
  int32_t first, last;
};
#include "unicode_tables.inc"

template <size_t N>
bool in_ranges(const CodePointRange (&ranges)[N], int32_t cp) {
  const auto it = std::upper_bound(std::begin(ranges), std::end(ranges), cp,
                                   [](int32_t c, const CodePointRange& r) { return c < r.first; });
  return it != std::begin(ranges) && cp <= std::prev(it)->last;
}
}  // namespace

bool is_letter(int32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return in_ranges(kLetterRanges, cp);
}
bool is_number(int32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return in_ranges(kNumberRanges, cp);
}
bool is_space(int32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  return in_ranges(kSpaceRanges, cp);
}

}  // namespace tinygpt::data
