#pragma once
// The Unicode classes GPT-2's pre-tokenization needs (tables generated from the Unicode database).
#include <cstdint>

namespace tinygpt::data {

bool is_letter(int32_t cp);  // \p{L}
bool is_number(int32_t cp);  // \p{N}
bool is_space(int32_t cp);   // \s

}  // namespace tinygpt::data
