#pragma once
// Reading UTF-8 text files in blocks, with errors that name the file and the place.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "input_file.h"

namespace tinygpt::data {

// How a file may be cut into blocks that are tokenized on their own.
enum class BlockCut {
  anywhere,      // at any character boundary (character tokenizer); lines preferred
  chunk_safe,    // only after a newline followed by a visible ASCII byte (a GPT-2 chunk boundary)
  before_space,  // only before a space between two ASCII letters or digits (SentencePiece's cut)
  whole_file,    // never: the file is one block
};

// Whether text[p] is a space between two ASCII letters or digits: where BlockCut::before_space
// may cut (the part after the cut encoded without that space).
inline bool space_cut_at(std::string_view text, size_t p) {
  const auto alnum = [](char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); };
  return p > 0 && p + 1 < text.size() && text[p] == ' ' && alnum(text[p - 1]) && alnum(text[p + 1]);
}

// A block of a text file: valid UTF-8, cut where the BlockCut allows.
struct TextBlock {
  std::string text;
  int64_t byte_offset = 0, line_offset = 0;  // where it starts in its file
};

// The blocks of one file, read on demand (a pipeline pulls them one at a time).
class TextBlocks {
 public:
  TextBlocks(const std::string& path, BlockCut cut, size_t block_bytes = size_t{8} << 20);
  // Fills `block` with the next block (reusing its memory) and returns true; false after the last.
  // Throws, naming the file, when it cannot be read, is empty, or is not valid UTF-8 (with the byte
  // offset). Control characters are valid text.
  bool next(TextBlock& block);

 private:
  InputFile in_;
  std::string path_, buf_;
  BlockCut cut_;
  size_t block_bytes_;
  int64_t offset_ = 0, lines_ = 0;
  bool eof_ = false;
};

// Calls block(text, byte_offset, line_offset) for consecutive blocks of about `block_bytes` that
// cover the file, with TextBlocks' checks.
void for_each_block(const std::string& path, BlockCut cut,
                    const std::function<void(std::string_view text, int64_t byte_offset, int64_t line_offset)>& block,
                    size_t block_bytes = size_t{8} << 20);

// The bytes of the regular files among `files` (others count 0: they fail with their reason when read).
int64_t regular_file_bytes(const std::vector<std::string>& files);

// The whole file, checked as above.
std::string read_text_file(const std::string& path);

}  // namespace tinygpt::data
