#pragma once
// UTF-8: strict decoding (so that bad input is reported where it is) and lossless encoding.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tinygpt::data {

// Decodes the code point starting at text[i] and advances i past it. Returns -1 (and leaves i)
// when the bytes there are not valid UTF-8 (bad lead or continuation byte, overlong form,
// surrogate, beyond U+10FFFF, or cut short by the end of the text).
int32_t next_code_point(std::string_view text, size_t& i);

// Appends the UTF-8 bytes of code point cp.
void append_utf8(std::string& out, int32_t cp);

// Byte offset of the first invalid sequence, or npos when the whole text is valid UTF-8.
size_t find_invalid_utf8(std::string_view text);

// Valid UTF-8 from arbitrary bytes: each maximal invalid subsequence becomes U+FFFD.
std::string sanitize_utf8(std::string_view bytes);

// Text for a terminal from bytes a file supplied (a token, a path): valid UTF-8 as it is, but
// control characters (C0, DEL, C1), the bidirectional overrides and isolates (U+202A..U+202E,
// U+2066..U+2069) and invalid bytes written as escapes: "\x1B", "\u{202E}", so that no file can
// move the cursor, retitle the window or reorder what is shown.
std::string printable(std::string_view bytes);

// Human-readable name of a character for error messages: 'x' (U+0078), or U+0008 for controls.
std::string describe_code_point(int32_t cp);

}  // namespace tinygpt::data
