#include "unicode_categories.h"

#include <algorithm>

namespace engine {

CodepointClass classify_code_point(uint32_t cp) {
  // The White_Space property: few enough to list.
  if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
      (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000) {
    return CodepointClass::kWhitespace;
  }
  const CodepointRange* end = kCodepointRanges + kCodepointRangeCount;
  const CodepointRange* it =
      std::upper_bound(kCodepointRanges, end, cp, [](uint32_t c, const CodepointRange& r) { return c < r.first; });
  if (it == kCodepointRanges) return CodepointClass::kOther;
  --it;
  return cp <= it->last ? it->kind : CodepointClass::kOther;
}

}  // namespace engine
