#include "sentencepiece_spec.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace tinygpt::data::detail {

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& problem) {
  throw std::invalid_argument(fmt::format("{} is not a SentencePiece model tinygpt can use: {}", where, problem));
}

// ---- protobuf's wire format: (field number, wire type) tags, then a varint, 8 or 4 bytes, or a
// length and that many bytes. Groups (wire types 3, 4) do not occur in SentencePiece's messages.

struct Field {
  uint32_t number = 0;
  int wire = 0;
  uint64_t varint = 0;     // wire 0
  std::string_view bytes;  // wire 2
};

class WireReader {
 public:
  WireReader(std::string_view bytes, const std::string& where, const char* message)
      : rest_(bytes), where_(where), message_(message) {}
  bool done() const { return rest_.empty(); }
  Field next() {
    const uint64_t tag = varint();
    Field f;
    f.number = static_cast<uint32_t>(tag >> 3), f.wire = static_cast<int>(tag & 7);
    if (f.number == 0 || (tag >> 3) > 0x1FFFFFFF) problem(fmt::format("a field numbered {}", tag >> 3));
    switch (f.wire) {
      case 0: f.varint = varint(); break;
      case 1: take(8); break;
      case 2: {
        const uint64_t n = varint();
        if (n > rest_.size()) problem(fmt::format("field {} of {} bytes, past its end", f.number, n));
        f.bytes = take(static_cast<size_t>(n));
        break;
      }
      case 5: take(4); break;
      default: problem(fmt::format("field {} of wire type {}", f.number, f.wire));
    }
    return f;
  }
  // The field as the wire type its definition has, or the error naming it.
  void expect(const Field& f, int wire, const char* name) const {
    if (f.wire != wire) problem(fmt::format("field {} ({}) has wire type {}, not {}", f.number, name, f.wire, wire));
  }

 private:
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty()) problem("a number cut short");
      const auto byte = static_cast<uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      v |= uint64_t{byte & 0x7Fu} << shift;
      if (!(byte & 0x80)) return v;
    }
    problem("a number longer than 10 bytes");
  }
  std::string_view take(size_t n) {
    if (n > rest_.size()) problem("a field cut short");
    const std::string_view out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return out;
  }
  [[noreturn]] void problem(const std::string& what) const { fail(where_, fmt::format("its {} holds {}", message_, what)); }

  std::string_view rest_;
  const std::string& where_;
  const char* message_;
};

// ---- the precompiled character map's darts-clone trie: 32-bit units; a unit's child for byte c
// is unit (base ^ c) when that unit's label is c, base = index ^ offset; a unit with a leaf has
// its value (the replacement's offset) in unit base.

uint32_t offset_of(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
bool has_leaf(uint32_t u) { return (u >> 8) & 1u; }
uint32_t label_of(uint32_t u) { return u & (0x80000000u | 0xFFu); }
uint32_t value_of(uint32_t u) { return u & 0x7FFFFFFFu; }

class CharsMapCheck {
 public:
  CharsMapCheck(std::string_view blob, const std::string& where, const char* name) : where_(where), name_(name) {
    if (blob.size() > kMaxCharsMapBytes) problem(fmt::format("is {} bytes, more than {} MB", blob.size(), kMaxCharsMapBytes >> 20));
    uint32_t trie_bytes = 0;
    if (blob.size() < 4) problem("is shorter than its 4-byte trie size");
    std::memcpy(&trie_bytes, blob.data(), 4);  // little-endian, as the machines tinygpt builds for
    if (trie_bytes == 0 || trie_bytes % 4 != 0 || trie_bytes > blob.size() - 4)
      problem(fmt::format("says its trie is {} bytes, but {} follow", trie_bytes, blob.size() - 4));
    units_.resize(trie_bytes / 4);
    std::memcpy(units_.data(), blob.data() + 4, trie_bytes);
    strings_ = blob.substr(4 + trie_bytes);
    state_.assign(units_.size(), State{});
    const uint32_t root_base = offset_of(units_[0]);
    in_array(root_base, "the root");
    walk(root_base, 0, 0);
  }
  // No key holds a space (no match reaches across one, and a space passes through unchanged), and
  // every key that ends with an ASCII letter or digit is replaced by text that ends with neither a
  // space nor "▁": text up to such a character normalizes to the same output alone as before a space.
  bool leaves_spaces_alone() const { return !space_in_key_ && !alnum_key_ends_in_space_; }

 private:
  struct State {
    bool done = false, on_path = false;
    int height = 0, prefixes = 0;  // below this node: the longest key's bytes, the most leaves on a path
  };

  void in_array(uint32_t base, const char* what) const {
    if ((uint64_t{base} | 0xFFu) >= units_.size())
      problem(fmt::format("has {} at unit {} of its trie, whose children lie past its {} units", what, base,
                          units_.size()));
  }

  // The node whose children start at `base`, reached after `depth` bytes with `prefixes` keys on the
  // way; returns its (height, prefixes) below, having checked every node and value under it.
  std::pair<int, int> walk(uint32_t base, int depth, int prefixes) {
    int height = 0, most = 0;
    for (uint32_t c = 0; c < 256; ++c) {
      const uint32_t child = base ^ c, unit = units_[child];
      if (label_of(unit) != c) continue;
      if (c == ' ') space_in_key_ = true;
      const uint32_t child_base = child ^ offset_of(unit);
      in_array(child_base, "a node");
      const int leaf = has_leaf(unit) ? 1 : 0;
      if (leaf) {
        const std::string_view replacement = check_replacement(value_of(units_[child_base]));
        const bool alnum = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
        if (alnum && (replacement.empty() || replacement.back() == ' ' || replacement.ends_with("\xE2\x96\x81")))
          alnum_key_ends_in_space_ = true;
      }
      if (depth + 1 > kMaxKeyBytes) problem(fmt::format("has a key longer than {} bytes (or a cycle)", kMaxKeyBytes));
      if (prefixes + leaf > kMaxKeyPrefixes)
        problem(fmt::format("has a key with more than {} keys among its prefixes", kMaxKeyPrefixes));
      State& s = state_[child];
      if (s.on_path) problem("has a cycle in its trie");
      if (!s.done) {
        s.on_path = true;
        const auto [h, p] = walk(child_base, depth + 1, prefixes + leaf);
        s = State{true, false, h, p};
      }
      if (depth + 1 + s.height > kMaxKeyBytes) problem(fmt::format("has a key longer than {} bytes", kMaxKeyBytes));
      if (prefixes + leaf + s.prefixes > kMaxKeyPrefixes)
        problem(fmt::format("has a key with more than {} keys among its prefixes", kMaxKeyPrefixes));
      height = std::max(height, 1 + s.height), most = std::max(most, leaf + s.prefixes);
    }
    return {height, most};
  }

  std::string_view check_replacement(uint32_t at) const {
    if (at >= strings_.size())
      problem(fmt::format("has a replacement at byte {} of its {} bytes of strings", at, strings_.size()));
    const size_t end = strings_.find('\0', at);
    if (end == std::string_view::npos || end - at > static_cast<size_t>(kMaxReplacementBytes))
      problem(fmt::format("has a replacement at byte {} that does not end (NUL) within {} bytes", at,
                          kMaxReplacementBytes));
    return strings_.substr(at, end - at);
  }

  [[noreturn]] void problem(const std::string& what) const { fail(where_, fmt::format("its {} {}", name_, what)); }

  const std::string& where_;
  const char* name_;
  std::vector<uint32_t> units_;
  std::string_view strings_;
  std::vector<State> state_;
  bool space_in_key_ = false, alnum_key_ends_in_space_ = false;
};

// ---- the messages

struct Normalizer {
  std::string_view charsmap;
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
};

// Reads a NormalizerSpec's fields into `n`: a message given twice merges, its later fields winning.
void read_normalizer(std::string_view bytes, const std::string& where, const char* message, Normalizer& n) {
  for (WireReader r(bytes, where, message); !r.done();) {
    const Field f = r.next();
    switch (f.number) {
      case 2: r.expect(f, 2, "precompiled_charsmap"), n.charsmap = f.bytes; break;
      case 3: r.expect(f, 0, "add_dummy_prefix"), n.add_dummy_prefix = f.varint != 0; break;
      case 4: r.expect(f, 0, "remove_extra_whitespaces"), n.remove_extra_whitespaces = f.varint != 0; break;
      case 5: r.expect(f, 0, "escape_whitespaces"), n.escape_whitespaces = f.varint != 0; break;
      default: break;
    }
  }
}

// Whether a piece may join text on both sides of a space that follows another character: it holds
// a space, or "▁" (U+2581, the escaped space) right after a character that is not one.
bool reaches_across_space(std::string_view piece) {
  constexpr std::string_view kSpace = "\xE2\x96\x81";
  if (piece.find(' ') != std::string_view::npos) return true;
  for (size_t at = piece.find(kSpace, 1); at != std::string_view::npos; at = piece.find(kSpace, at + 1))
    if (at < kSpace.size() || piece.substr(at - kSpace.size(), kSpace.size()) != kSpace) return true;
  return false;
}

}  // namespace

SentencePieceSpec read_sentencepiece_spec(std::string_view model_proto, const std::string& where) {
  SentencePieceSpec spec;
  Normalizer normalizer, denormalizer;
  bool pieces_reach_across = false;
  for (WireReader r(model_proto, where, "model"); !r.done();) {
    const Field f = r.next();
    if (f.number == 1) {  // a piece
      r.expect(f, 2, "pieces");
      for (WireReader p(f.bytes, where, "piece"); !p.done();) {
        const Field pf = p.next();
        if (pf.number == 1) p.expect(pf, 2, "piece"), pieces_reach_across |= reaches_across_space(pf.bytes);
      }
    } else if (f.number == 2) {  // the trainer's settings
      r.expect(f, 2, "trainer_spec");
      for (WireReader t(f.bytes, where, "trainer_spec"); !t.done();) {
        const Field tf = t.next();
        if (tf.number == 24) t.expect(tf, 0, "treat_whitespace_as_suffix"), spec.treat_whitespace_as_suffix = tf.varint != 0;
        if (tf.number == 3) t.expect(tf, 0, "model_type"), spec.model_type = static_cast<int64_t>(tf.varint);
      }
    } else if (f.number == 3) {
      r.expect(f, 2, "normalizer_spec");
      read_normalizer(f.bytes, where, "normalizer_spec", normalizer);
    } else if (f.number == 5) {
      r.expect(f, 2, "denormalizer_spec");
      read_normalizer(f.bytes, where, "denormalizer_spec", denormalizer);
    }
  }
  if (!denormalizer.charsmap.empty()) CharsMapCheck(denormalizer.charsmap, where, "denormalizer's character map");
  spec.add_dummy_prefix = normalizer.add_dummy_prefix;
  spec.remove_extra_whitespaces = normalizer.remove_extra_whitespaces;
  spec.escape_whitespaces = normalizer.escape_whitespaces;
  const bool spaces_pass = normalizer.charsmap.empty() ||
                           CharsMapCheck(normalizer.charsmap, where, "normalizer's character map").leaves_spaces_alone();
  // No merge, word, character or unigram path crosses a space no piece reaches across.
  spec.cuts_at_spaces = spec.add_dummy_prefix && spec.escape_whitespaces && !spec.treat_whitespace_as_suffix &&
                        spaces_pass && !pieces_reach_across;
  return spec;
}

}  // namespace tinygpt::data::detail
