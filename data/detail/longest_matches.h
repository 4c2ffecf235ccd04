#pragma once
// Where texts from a fixed set (a tokenizer's special tokens) start in a text, the longest where
// several start at one byte, in time linear in the text whatever the set: Aho-Corasick over the
// reversed texts, the text scanned from its end. The automaton's state at a byte is the longest
// prefix of what follows the byte that is a text's beginning (a node of the reversed trie), so its
// output, the longest text that is a suffix of that node's string, is the longest text starting
// at the byte.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinygpt::data {

class LongestMatches {
 public:
  LongestMatches() = default;
  explicit LongestMatches(const std::vector<std::string>& texts);  // none empty, none twice

  // (offset, index into `texts`) of the longest text starting at each offset where one starts,
  // in increasing offset order.
  std::vector<std::pair<size_t, int32_t>> starts(std::string_view text) const;

 private:
  int32_t child(int32_t node, uint8_t byte) const;  // -1: none
  // The trie's edges, sorted by (node << 8 | byte), and where each leads: 12 bytes an edge.
  std::vector<uint64_t> edge_keys_;
  std::vector<int32_t> edge_to_;
  std::vector<int32_t> fail_;    // the node of the longest proper suffix that is in the trie
  std::vector<int32_t> output_;  // the longest text that is a suffix of the node's string, or -1
  std::array<bool, 256> ends_text_{};  // the last bytes of the texts: the root's only way out
};

}  // namespace tinygpt::data
