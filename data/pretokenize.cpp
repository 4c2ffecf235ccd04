#include "pretokenize.h"

#include <fmt/format.h>

#include <stdexcept>

#include "detail/unicode.h"
#include "utf8.h"

namespace tinygpt::data {

namespace {

// A cursor over code points that can look ahead without consuming.
struct Cursor {
  std::string_view text;
  size_t pos;
  int32_t peek(size_t at) const {  // code point at byte offset `at`, or -1 at the end
    if (at >= text.size()) return -1;
    size_t i = at;
    return next_code_point(text, i);
  }
  size_t after(size_t at) const {  // byte offset just past the code point at `at`
    size_t i = at;
    next_code_point(text, i);
    return i;
  }
};

bool is_other(int32_t cp) { return cp >= 0 && !is_space(cp) && !is_letter(cp) && !is_number(cp); }

// Length in bytes of the GPT-2 match starting at c.pos (always at least one code point).
size_t gpt2_match(const Cursor& c) {
  const std::string_view rest = c.text.substr(c.pos);
  if (rest[0] == '\'') {  // contractions, matched before punctuation
    for (std::string_view s : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"})
      if (rest.substr(0, s.size()) == s) return s.size();
  }
  // ` ?X+` for the classes letter, number, other: an optional single space, then a run of X.
  const size_t body = rest[0] == ' ' ? c.pos + 1 : c.pos;
  for (bool (*in_class)(int32_t) : {&is_letter, &is_number, &is_other}) {
    if (!in_class(c.peek(body))) continue;
    size_t end = body;
    while (in_class(c.peek(end))) end = c.after(end);
    return end - c.pos;
  }
  // Whitespace: `\s+(?!\S)` leaves the last space of a run that precedes a non-space to the
  // next chunk (as its optional leading space); a lone space before a non-space is `\s+`.
  size_t end = c.pos, last = c.pos;
  while (is_space(c.peek(end))) last = end, end = c.after(end);
  if (end < c.text.size() && last > c.pos) return last - c.pos;
  return end - c.pos;
}

}  // namespace

std::vector<std::string_view> split_chunks(std::string_view text, Split split) {
  std::vector<std::string_view> chunks;
  if (text.empty()) return chunks;
  if (split == Split::none) return {text};
  for (Cursor c{text, 0}; c.pos < text.size();) {
    const size_t n = gpt2_match(c);
    chunks.push_back(text.substr(c.pos, n));
    c.pos += n;
  }
  return chunks;
}

const char* split_name(Split split) { return split == Split::none ? "none" : "gpt2"; }

Split split_from_name(std::string_view name) {
  if (name == "none") return Split::none;
  if (name == "gpt2") return Split::gpt2;
  throw std::invalid_argument(fmt::format("tokenizer: unknown split '{}' (expected none or gpt2)", name));
}

}  // namespace tinygpt::data
