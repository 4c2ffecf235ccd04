#pragma once
// The ids of a text a SentencePiece model may cut before spaces (SentencePieceTokenizer::
// cuts_at_spaces), a word at a time, each word's ids remembered: natural text repeats its words,
// so most are looked up instead of normalized and merged again. A word here is what lies between
// two cuts: the text is cut before every space between two ASCII letters or digits, and each part
// after a cut is encoded without that space (the model's dummy prefix stands for it), as
// docs/data-format.md's block rule cuts. For BPE, word and character models the ids are those of
// the whole text (SentencePieceTokenizer::cuts_change_nothing), once a run of unknown pieces across
// words is one unknown, as the library makes it; a unigram model's would be each word's best path
// (not its block's), so its blocks are encoded whole.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tinygpt::data {
class SentencePieceTokenizer;
}

namespace tinygpt::data::detail {

// What is remembered at most (about 20 MB a thread by default); past these, memory starts afresh.
struct WordMemoryBounds {
  size_t longest_word = 64;             // longer words are encoded, not remembered
  size_t most_words = size_t{1} << 17;  // Tiny Shakespeare has 46,717 different words
  size_t most_ids = size_t{1} << 20;
};

class WordMemory {
 public:
  explicit WordMemory(WordMemoryBounds bounds = {}) : bounds_(bounds) {}
  // Appends the ids of `text` (valid UTF-8, which `tokenizer` may cut before spaces) to `out`.
  // A text in which fewer than a quarter of the words were remembered is followed by a few texts
  // encoded whole (the library is quicker on a block than word by word): the same ids either way.
  void encode(const SentencePieceTokenizer& tokenizer, std::string_view text, std::vector<int32_t>& out,
              std::string_view where);

 private:
  struct Span {
    uint32_t first, count;  // in ids_
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  static constexpr int kWholeAfterNewWords = 15;  // texts encoded whole after one of mostly new words
  // Appends a word's ids to out; true when they were remembered.
  bool encode_word(const SentencePieceTokenizer& tokenizer, std::string_view word, std::vector<int32_t>& out,
                   std::string_view where);

  WordMemoryBounds bounds_;
  std::unordered_map<std::string, Span, Hash, std::equal_to<>> words_;
  std::vector<int32_t> ids_, word_ids_;
  int whole_texts_ = 0;  // texts still to encode whole
};

}  // namespace tinygpt::data::detail
