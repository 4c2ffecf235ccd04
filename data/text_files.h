#pragma once
// Reading UTF-8 text files in blocks, with errors that name the file and the place.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tinygpt::data {

// How a file may be cut into blocks that are tokenized on their own.
enum class BlockCut {
  anywhere,      // at any character boundary (character tokenizer); lines preferred
  chunk_safe,    // only after a newline followed by a visible ASCII byte (a GPT-2 chunk boundary)
  whole_file,    // never: the file is one block
};

// Calls block(text, byte_offset, line_offset) for consecutive blocks of about `block_bytes` that
// cover the file. Throws, naming the file, when it cannot be read, is empty, or is not valid UTF-8
// (with the byte offset). Control characters are valid text.
void for_each_block(const std::string& path, BlockCut cut,
                    const std::function<void(std::string_view text, int64_t byte_offset, int64_t line_offset)>& block,
                    size_t block_bytes = size_t{8} << 20);

// The bytes of the regular files among `files` (others count 0: they fail with their reason when read).
int64_t regular_file_bytes(const std::vector<std::string>& files);

// The whole file, checked as above.
std::string read_text_file(const std::string& path);

}  // namespace tinygpt::data
