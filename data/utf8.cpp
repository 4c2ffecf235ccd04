#include "utf8.h"

#include <fmt/format.h>

namespace tinygpt::data {

int32_t next_code_point(std::string_view text, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return text[i++];
  int len;
  int32_t cp, min;
  if ((b0 & 0xE0) == 0xC0) len = 2, cp = b0 & 0x1F, min = 0x80;
  else if ((b0 & 0xF0) == 0xE0) len = 3, cp = b0 & 0x0F, min = 0x800;
  else if ((b0 & 0xF8) == 0xF0) len = 4, cp = b0 & 0x07, min = 0x10000;
  else return -1;
  if (i + len > text.size()) return -1;
  for (int k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += len;
  return cp;
}

void append_utf8(std::string& out, int32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t find_invalid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    if (next_code_point(text, i) < 0) return i;
  }
  return std::string_view::npos;
}

std::string sanitize_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t start = i;
    const int32_t cp = next_code_point(bytes, i);
    if (cp >= 0) {
      out.append(bytes.substr(start, i - start));
      continue;
    }
    // Skip the maximal subpart: a lead byte and the continuation bytes that could still follow it.
    ++i;
    while (i < bytes.size() && i - start < 4 && (static_cast<uint8_t>(bytes[i]) & 0xC0) == 0x80) ++i;
    out += "\xEF\xBF\xBD";  // U+FFFD
  }
  return out;
}

std::string printable(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t start = i;
    const int32_t cp = next_code_point(bytes, i);
    if (cp < 0) {
      out += fmt::format("\\x{:02X}", static_cast<uint8_t>(bytes[i++]));
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      out += fmt::format("\\x{:02X}", cp);
    } else if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
      out += fmt::format("\\u{{{:04X}}}", cp);
    } else {
      out.append(bytes.substr(start, i - start));
    }
  }
  return out;
}

std::string describe_code_point(int32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return fmt::format("U+{:04X}", cp);
  std::string ch;
  append_utf8(ch, cp);
  return fmt::format("'{}' (U+{:04X})", ch, cp);
}

}  // namespace tinygpt::data
