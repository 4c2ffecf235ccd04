#pragma once
// What tinygpt reads and checks in a SentencePiece model's bytes before the SentencePiece library
// uses them: the fields that decide how text is normalized and split (read with a small, bounded
// reader of protobuf's wire format), and the normalizers' precompiled character maps, whose trie
// and strings the library follows without bounds checks.
//
// A character map is <uint32 trie bytes><darts-clone double-array trie><NUL-terminated strings>:
// the trie maps a prefix of the text to the offset of its replacement among the strings. It is
// accepted when every trie node any text can reach lies inside the array (with its 256 possible
// children), no key is longer than kMaxKeyBytes or a prefix of more than kMaxKeyPrefixes keys (the
// library keeps 32 matches on its stack), the trie has no cycle, and every replacement starts inside
// the strings and ends with a NUL within kMaxReplacementBytes (so one character never becomes
// thousands of tokens).
#include <cstdint>
#include <string>
#include <string_view>

namespace tinygpt::data::detail {

struct SentencePieceSpec {  // protobuf's defaults, for fields a file leaves out
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
  bool treat_whitespace_as_suffix = false;
  int64_t model_type = 1;  // the trainer's: kUnigramModel, 2 BPE, 3 word, 4 character
  // Whether text may be cut before a space between two ASCII letters or digits, and each part
  // encoded on its own (the part after the cut without that space, which the dummy prefix stands
  // for), no path of the model crossing the cut: read_sentencepiece_spec says when.
  bool cuts_at_spaces = false;
};

inline constexpr int64_t kUnigramModel = 1;
inline constexpr int kMaxKeyBytes = 1024;          // NFKC's longest keys are tens of bytes
inline constexpr int kMaxKeyPrefixes = 32;         // the library's kMaxTrieResultsSize
inline constexpr int kMaxReplacementBytes = 64;    // NFKC's longest replacement (U+FDFA) is 33 bytes
inline constexpr size_t kMaxCharsMapBytes = size_t{8} << 20;  // nmt_nfkc's is about 240 KB

// Throws std::invalid_argument, "<where>: <problem>", for bytes that are not a model this reader
// and the checks above accept.
SentencePieceSpec read_sentencepiece_spec(std::string_view model_proto, const std::string& where);

}  // namespace tinygpt::data::detail
