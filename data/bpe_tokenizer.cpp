#include "bpe_tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <queue>
#include <set>
#include <unordered_map>

#include "detail/longest_matches.h"
#include "json.h"
#include "tokenizer_record.h"
#include "utf8.h"

namespace tinygpt::data {

namespace {
uint64_t pair_key(int32_t a, int32_t b) { return static_cast<uint64_t>(a) << 32 | static_cast<uint32_t>(b); }
constexpr uint64_t kNoPair = ~uint64_t{0};  // token ids are below 2^24: no pair has this key
size_t pair_slot(uint64_t key, size_t mask) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 17) & mask; }
}  // namespace

// ---- training ----------------------------------------------------------------------------------

void BpeTrainer::add(std::string_view text) {
  for (std::string_view chunk : split_chunks(text, split_)) {
    auto it = chunk_counts_.find(chunk);
    if (it == chunk_counts_.end()) chunk_counts_.emplace(std::string(chunk), 1);
    else ++it->second;
  }
}

std::vector<Merge> BpeTrainer::train(int64_t vocab_size, const std::function<void(int64_t, int64_t)>& progress) const {
  if (vocab_size < 256)
    throw std::invalid_argument(fmt::format("bpe tokenizer: vocab size {} is below 256 (the byte tokens)", vocab_size));
  // Every distinct chunk is a doubly linked list of symbols in one arena, weighted by its count.
  struct Symbol {
    int32_t token, prev, next;  // prev/next: arena indices, -1 at the chunk's ends
    int64_t weight;             // how often the chunk occurs
  };
  std::vector<Symbol> arena;
  std::unordered_map<uint64_t, int64_t> count;                  // pair -> weighted occurrences
  std::unordered_map<uint64_t, std::vector<int32_t>> where;     // pair -> left symbols (may be stale)
  for (const auto& [chunk, n] : chunk_counts_) {
    for (size_t i = 0; i < chunk.size(); ++i) {
      const auto self = static_cast<int32_t>(arena.size());
      arena.push_back({static_cast<uint8_t>(chunk[i]), i ? self - 1 : -1,
                       i + 1 < chunk.size() ? self + 1 : -1, n});
      if (i) {
        const uint64_t key = pair_key(arena[self - 1].token, arena[self].token);
        count[key] += n;
        where[key].push_back(self - 1);
      }
    }
  }
  // Highest count first; among equals, the smallest pair.
  using Entry = std::pair<int64_t, uint64_t>;
  auto worse = [](const Entry& x, const Entry& y) { return x.first != y.first ? x.first < y.first : x.second > y.second; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> heap(worse);
  for (const auto& [key, n] : count) heap.push({n, key});

  std::vector<Merge> merges;
  const int64_t wanted = vocab_size - 256;
  std::vector<uint64_t> touched;
  while (static_cast<int64_t>(merges.size()) < wanted) {
    if (progress && merges.size() % 64 == 0) progress(static_cast<int64_t>(merges.size()), wanted);
    while (!heap.empty() && count[heap.top().second] != heap.top().first) heap.pop();  // stale entries
    if (heap.empty() || heap.top().first < 2)
      throw std::invalid_argument(fmt::format(
          "bpe tokenizer: vocab size {} is larger than the corpus allows: after {} merges no pair occurs twice, "
          "so at most {} tokens",
          vocab_size, merges.size(), 256 + merges.size()));
    const uint64_t key = heap.top().second;
    heap.pop();
    const int32_t a = static_cast<int32_t>(key >> 32), b = static_cast<int32_t>(key & 0xffffffff);
    const int32_t token = 256 + static_cast<int32_t>(merges.size());
    merges.push_back({a, b});
    std::vector<int32_t> sites = std::move(where[key]);
    where.erase(key);
    std::sort(sites.begin(), sites.end());  // arena order is text order: merge leftmost first
    touched.clear();
    auto add = [&](int32_t left, int64_t n) {
      const uint64_t k = pair_key(arena[left].token, arena[arena[left].next].token);
      count[k] += n;
      touched.push_back(k);
      if (n > 0) where[k].push_back(left);
    };
    for (int32_t left : sites) {
      Symbol& s = arena[left];
      if (s.token != a || s.next < 0 || arena[s.next].token != b) continue;  // changed since recorded
      const int32_t right = s.next, before = s.prev, after = arena[right].next;
      if (before >= 0) add(before, -s.weight);
      if (after >= 0) add(right, -s.weight);
      count[key] -= s.weight;
      s.token = token;  // s absorbs its right neighbour
      s.next = after;
      if (after >= 0) arena[after].prev = left;
      arena[right].token = -1;
      if (before >= 0) add(before, s.weight);
      if (after >= 0) add(left, s.weight);
    }
    for (uint64_t k : touched)
      if (count[k] > 0) heap.push({count[k], k});
  }
  if (progress) progress(wanted, wanted);
  return merges;
}

// ---- the tokenizer -------------------------------------------------------------------------------

BpeTokenizer::BpeTokenizer(std::vector<Merge> merges, Split split, std::vector<int32_t> byte_ids,
                           std::vector<SpecialToken> specials)
    : merges_(std::move(merges)), split_(split), byte_ids_(std::move(byte_ids)), specials_(std::move(specials)) {
  if (merges_.size() > static_cast<size_t>(kMaxMerges))
    throw std::invalid_argument(fmt::format("bpe tokenizer: {} merges, more than {}", merges_.size(), kMaxMerges));
  set_byte_tokens();
  size_t total = 256;  // bytes of all tokens' text: merges of merges could double it each time
  for (size_t k = 0; k < merges_.size(); ++k) {
    const auto [a, b] = merges_[k];
    const auto next = static_cast<int32_t>(256 + k);
    if (a < 0 || b < 0 || a >= next || b >= next)
      throw std::invalid_argument(fmt::format("bpe tokenizer: merge {} joins ({}, {}), which are not tokens yet", k,
                                              a, b));
    total += bytes_[a].size() + bytes_[b].size();
    if (total > kMaxTokenBytes)
      throw std::invalid_argument(fmt::format("bpe tokenizer: by merge {} the tokens' text exceeds {} MiB", k,
                                              kMaxTokenBytes >> 20));
    bytes_.push_back(bytes_[a] + bytes_[b]);
  }
  set_ranks();
  set_special_tokens();
}

void BpeTokenizer::set_ranks() {
  size_t slots = 16;  // a power of two, at most half full
  while (slots < 2 * merges_.size()) slots *= 2;
  ranks_.assign(slots, RankSlot{kNoPair, -1});
  for (size_t k = 0; k < merges_.size(); ++k) {
    const uint64_t key = pair_key(merges_[k].first, merges_[k].second);
    size_t at = pair_slot(key, slots - 1);
    while (ranks_[at].pair != kNoPair && ranks_[at].pair != key) at = (at + 1) & (slots - 1);
    if (ranks_[at].pair == kNoPair) ranks_[at] = {key, static_cast<int32_t>(k)};  // a repeated pair keeps its first rank
  }
}

void BpeTokenizer::set_byte_tokens() {
  bytes_.resize(256);
  if (byte_ids_.empty()) {
    for (int b = 0; b < 256; ++b) byte_token_[b] = b;
  } else {
    if (byte_ids_.size() != 256)
      throw std::invalid_argument(fmt::format("bpe tokenizer: {} byte ids, expected 256", byte_ids_.size()));
    std::array<bool, 256> taken{};
    for (int b = 0; b < 256; ++b) {
      const int32_t id = byte_ids_[b];
      if (id < 0 || id > 255 || taken[id])
        throw std::invalid_argument(fmt::format("bpe tokenizer: byte ids are not a permutation of 0..255 (byte {} -> {})",
                                                b, id));
      taken[id] = true;
      byte_token_[b] = id;
    }
  }
  for (int b = 0; b < 256; ++b) bytes_[byte_token_[b]] = std::string(1, static_cast<char>(b));
}

void BpeTokenizer::set_special_tokens() {
  if (specials_.size() > kMaxSpecials)
    throw std::invalid_argument(fmt::format("bpe tokenizer: {} special tokens, more than {}", specials_.size(),
                                            kMaxSpecials));
  const auto first = static_cast<int64_t>(bytes_.size());
  std::set<std::string_view> texts;
  std::set<int32_t> ids;
  for (const SpecialToken& s : specials_) {
    const std::string shown = sanitize_utf8(s.text.substr(0, 64));
    if (s.text.empty() || s.text.size() > kMaxSpecialBytes || s.text.find('\n') != std::string::npos ||
        s.text.find('\0') != std::string::npos || find_invalid_utf8(s.text) != std::string_view::npos)
      throw std::invalid_argument(fmt::format("bpe tokenizer: special token {} must be 1 to {} bytes of UTF-8 "
                                              "without a newline or a NUL byte", json::quote(shown), kMaxSpecialBytes));
    if (s.id < first || s.id >= kMaxSpecialId)
      throw std::invalid_argument(fmt::format("bpe tokenizer: special token '{}' has id {}, outside [{}, {})", shown,
                                              s.id, first, kMaxSpecialId));
    if (!texts.insert(s.text).second || !ids.insert(s.id).second)
      throw std::invalid_argument(fmt::format("bpe tokenizer: special token '{}' (id {}) is listed twice", shown, s.id));
  }
  size_t total = 0;
  for (const SpecialToken& s : specials_) total += s.text.size();
  if (total > kMaxSpecialTotalBytes)
    throw std::invalid_argument(fmt::format("bpe tokenizer: its {} special tokens hold {} bytes, more than {} in all",
                                            specials_.size(), total, kMaxSpecialTotalBytes));
  if (!ids.empty()) bytes_.resize(static_cast<size_t>(*ids.rbegin()) + 1);
  std::vector<std::string> special_texts;
  for (const SpecialToken& s : specials_) bytes_[s.id] = s.text, special_texts.push_back(s.text);
  special_matches_ = std::make_shared<const LongestMatches>(special_texts);
}

BpeTokenizer BpeTokenizer::train(std::string_view text, int64_t vocab_size, Split split) {
  BpeTrainer trainer(split);
  trainer.add(text);
  return BpeTokenizer(trainer.train(vocab_size), split);
}

int32_t BpeTokenizer::rank(int32_t a, int32_t b) const {
  const uint64_t key = pair_key(a, b);
  const size_t mask = ranks_.size() - 1;
  for (size_t at = pair_slot(key, mask);; at = (at + 1) & mask) {
    if (ranks_[at].pair == key) return ranks_[at].rank;
    if (ranks_[at].pair == kNoPair) return -1;
  }
}

// Symbols in a linked list and a min-heap of (merge index, position): each pop is the lowest
// merge index present, leftmost first; stale entries are skipped. O(n log n) for any chunk length.
void BpeTokenizer::encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const {
  const auto n = static_cast<int32_t>(chunk.size());
  std::vector<int32_t> token(n), next(n), prev(n);
  using Entry = std::pair<int32_t, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (int32_t i = 0; i < n; ++i) {
    token[i] = byte_token_[static_cast<uint8_t>(chunk[i])];
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  for (int32_t i = 0; i + 1 < n; ++i)
    if (int32_t r = rank(token[i], token[i + 1]); r >= 0) heap.push({r, i});
  while (!heap.empty()) {
    const auto [r, i] = heap.top();
    heap.pop();
    if (token[i] < 0 || next[i] < 0 || rank(token[i], token[next[i]]) != r) continue;
    const int32_t right = next[i];
    token[i] = 256 + r;
    token[right] = -1;
    next[i] = next[right];
    if (next[i] >= 0) prev[next[i]] = i;
    if (prev[i] >= 0)
      if (int32_t r2 = rank(token[prev[i]], token[i]); r2 >= 0) heap.push({r2, prev[i]});
    if (next[i] >= 0)
      if (int32_t r3 = rank(token[i], token[next[i]]); r3 >= 0) heap.push({r3, i});
  }
  for (int32_t i = 0; i >= 0 && i < n; i = next[i]) out.push_back(token[i]);
}

void BpeTokenizer::encode(std::string_view text, std::vector<int32_t>& out, std::string_view where) const {
  if (size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
    throw std::invalid_argument(fmt::format("{} is not valid UTF-8 at byte offset {}", where, bad));
  // Special tokens first, at the leftmost place one starts (the longest where two start at one
  // byte); the text between them is ordinary text. Finding them is linear in the text.
  size_t done = 0;
  if (special_matches_)
    for (const auto& [at, s] : special_matches_->starts(text)) {
      if (at < done) continue;  // inside the special token just taken
      encode_ordinary(text.substr(done, at - done), out);
      out.push_back(specials_[s].id);
      done = at + specials_[s].text.size();
    }
  encode_ordinary(text.substr(done), out);
}

void BpeTokenizer::encode_ordinary(std::string_view text, std::vector<int32_t>& out) const {
  // Words repeat (Zipf): encode each distinct chunk once.
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> cache;  // chunk -> span in out
  for (std::string_view chunk : split_chunks(text, split_)) {
    const auto it = cache.find(chunk);
    if (it != cache.end()) {
      const auto [start, len] = it->second;
      for (size_t k = 0; k < len; ++k) out.push_back(out[start + k]);
      continue;
    }
    const size_t start = out.size();
    encode_chunk(chunk, out);
    cache.emplace(chunk, std::make_pair(start, out.size() - start));
  }
}

std::string BpeTokenizer::decode(std::span<const int32_t> ids) const {
  std::string raw;
  for (int32_t id : ids) raw += token_bytes(id);
  return sanitize_utf8(raw);
}

std::optional<int32_t> BpeTokenizer::document_token() const {
  for (const SpecialToken& s : specials_)
    if (s.text == "<|endoftext|>") return s.id;
  return std::nullopt;
}

void BpeTokenizer::append_definition(std::string& out) const {
  auto number = [&out](int64_t n) {  // GPT-2's 100,000 numbers, each without a formatted string
    char text[24];
    out.append(text, std::to_chars(text, text + sizeof text, n).ptr);
  };
  out += fmt::format("split {}\nmerges {}\n", split_name(split_), merges_.size());
  for (const auto& [a, b] : merges_) number(a), out += ' ', number(b), out += '\n';
  out += "bytes";
  for (int32_t id : byte_token_) out += ' ', number(id);
  std::vector<SpecialToken> by_id = specials_;
  std::sort(by_id.begin(), by_id.end(), [](const SpecialToken& x, const SpecialToken& y) { return x.id < y.id; });
  out += fmt::format("\nspecials {}\n", by_id.size());
  for (const SpecialToken& s : by_id) out += fmt::format("{} {} {}\n", s.id, s.text.size(), s.text);
}

std::string BpeTokenizer::token_bytes(int32_t id) const {
  check_id(id);
  return bytes_[id];
}

TokenizerRecord BpeTokenizer::record() const {
  return {.kind = kind(), .merges = merges_, .split = split_, .byte_ids = byte_ids_, .specials = specials_};
}

}  // namespace tinygpt::data
