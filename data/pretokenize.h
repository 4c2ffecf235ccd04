#pragma once
// Cutting text into chunks before BPE, so that merges never cross a chunk boundary.
#include <string_view>
#include <vector>

namespace tinygpt::data {

enum class Split { none, gpt2 };

// "none": the whole text is one chunk. "gpt2": GPT-2's pattern, Unicode-aware,
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// The text must be valid UTF-8. The chunks cover the text exactly, in order.
std::vector<std::string_view> split_chunks(std::string_view text, Split split);

const char* split_name(Split split);
Split split_from_name(std::string_view name);  // throws on an unknown name

}  // namespace tinygpt::data
