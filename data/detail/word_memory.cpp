#include "tinygpt/data/detail/word_memory.h"

#include "tinygpt/data/text_files.h"
#include "tinygpt/data/tokenizer.h"

namespace tinygpt::data::detail {

void WordMemory::encode(const Tokenizer& tokenizer, std::string_view text, std::vector<int32_t>& out,
                        std::string_view where) {
  size_t start = 0;
  for (size_t p = text.find(' ', 1); p != std::string_view::npos; p = text.find(' ', p + 1))
    if (space_cut_at(text, p)) {
      encode_word(tokenizer, text.substr(start, p - start), out, where);
      start = p + 1;  // the space: the next word's dummy prefix
    }
  encode_word(tokenizer, text.substr(start), out, where);
}

void WordMemory::encode_word(const Tokenizer& tokenizer, std::string_view word, std::vector<int32_t>& out,
                             std::string_view where) {
  if (word.size() > bounds_.longest_word) return tokenizer.encode(word, out, where);
  if (const auto it = words_.find(word); it != words_.end()) {
    const auto first = ids_.begin() + it->second.first;
    out.insert(out.end(), first, first + it->second.count);
    return;
  }
  const size_t before = out.size();
  tokenizer.encode(word, out, where);
  const size_t count = out.size() - before;
  if (words_.size() >= bounds_.most_words || ids_.size() + count > bounds_.most_ids) words_.clear(), ids_.clear();
  words_.emplace(word, Span{static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(count)});
  ids_.insert(ids_.end(), out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
}

}  // namespace tinygpt::data::detail
