#include "word_memory.h"

#include <span>

#include "../sentencepiece_tokenizer.h"
#include "../text_files.h"

namespace tinygpt::data::detail {

void WordMemory::encode(const SentencePieceTokenizer& tokenizer, std::string_view text, std::vector<int32_t>& out,
                        std::string_view where) {
  if (whole_texts_ > 0) {
    --whole_texts_;
    return tokenizer.encode(text, out, where);
  }
  size_t start = 0, words = 0, remembered = 0;
  for (size_t p = text.find(' ', 1); p != std::string_view::npos; p = text.find(' ', p + 1))
    if (space_cut_at(text, p)) {
      remembered += encode_word(tokenizer, text.substr(start, p - start), out, where);
      ++words;
      start = p + 1;  // the space: the next word's dummy prefix
    }
  remembered += encode_word(tokenizer, text.substr(start), out, where);
  if (4 * remembered < ++words) whole_texts_ = kWholeAfterNewWords;
}

bool WordMemory::encode_word(const SentencePieceTokenizer& tokenizer, std::string_view word, std::vector<int32_t>& out,
                             std::string_view where) {
  std::span<const int32_t> ids;
  const auto found = word.size() > bounds_.longest_word ? words_.end() : words_.find(word);
  const bool remembered = found != words_.end();
  if (remembered) {
    ids = std::span<const int32_t>(ids_).subspan(found->second.first, found->second.count);
  } else {
    word_ids_.clear();
    tokenizer.encode(word, word_ids_, where);
    ids = word_ids_;
    if (word.size() <= bounds_.longest_word) {
      if (words_.size() >= bounds_.most_words || ids_.size() + ids.size() > bounds_.most_ids) words_.clear(), ids_.clear();
      words_.emplace(word, Span{static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(ids.size())});
      ids_.insert(ids_.end(), ids.begin(), ids.end());
    }
  }
  // The library makes a run of unknown pieces one: an unknown word after an unknown end is no new id.
  const int32_t unknown = tokenizer.unk_id();
  if (!ids.empty() && !out.empty() && out.back() == unknown && ids.front() == unknown) ids = ids.subspan(1);
  out.insert(out.end(), ids.begin(), ids.end());
  return remembered;
}

}  // namespace tinygpt::data::detail
