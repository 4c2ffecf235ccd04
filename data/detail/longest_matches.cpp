#include "longest_matches.h"

#include <algorithm>
#include <cstddef>
#include <numeric>

namespace tinygpt::data {

namespace {
uint64_t key(int32_t node, uint8_t byte) { return static_cast<uint64_t>(node) << 8 | byte; }
}  // namespace

LongestMatches::LongestMatches(const std::vector<std::string>& texts) {
  // The trie of the reversed texts, built in their sorted order: a new node only ever branches
  // off the path of the text before, so that path (a stack) is all the building needs.
  std::vector<std::string> reversed;
  for (const std::string& t : texts) reversed.emplace_back(t.rbegin(), t.rend());
  std::vector<int32_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return reversed[a] < reversed[b]; });
  output_.push_back(-1);  // node 0: the root
  std::vector<int32_t> path{0};
  const std::string* previous = nullptr;
  for (const int32_t t : order) {
    const std::string& r = reversed[t];
    size_t shared = 0;
    if (previous)
      while (shared < r.size() && shared < previous->size() && r[shared] == (*previous)[shared]) ++shared;
    path.resize(shared + 1);
    for (size_t i = shared; i < r.size(); ++i) {
      const auto node = static_cast<int32_t>(output_.size());
      output_.push_back(-1);
      edge_keys_.push_back(key(path.back(), static_cast<uint8_t>(r[i])));
      edge_to_.push_back(node);
      path.push_back(node);
    }
    output_[path.back()] = t;
    ends_text_[static_cast<uint8_t>(r.front())] = true;
    previous = &r;
  }
  std::vector<size_t> by_key(edge_keys_.size());
  std::iota(by_key.begin(), by_key.end(), 0);
  std::sort(by_key.begin(), by_key.end(), [&](size_t a, size_t b) { return edge_keys_[a] < edge_keys_[b]; });
  std::vector<uint64_t> keys;
  std::vector<int32_t> to;
  for (const size_t e : by_key) keys.push_back(edge_keys_[e]), to.push_back(edge_to_[e]);
  edge_keys_ = std::move(keys), edge_to_ = std::move(to);
  // Failure links breadth first, so that every shorter node's link and output come first.
  fail_.assign(output_.size(), 0);
  std::vector<int32_t> queue{0};
  for (size_t q = 0; q < queue.size(); ++q) {
    const int32_t node = queue[q];
    auto e = std::lower_bound(edge_keys_.begin(), edge_keys_.end(), key(node, 0)) - edge_keys_.begin();
    for (; e < static_cast<std::ptrdiff_t>(edge_keys_.size()) && (edge_keys_[e] >> 8) == static_cast<uint64_t>(node); ++e) {
      const auto byte = static_cast<uint8_t>(edge_keys_[e] & 0xFF);
      const int32_t next = edge_to_[e];
      if (node != 0) {
        int32_t f = fail_[node];
        while (f != 0 && child(f, byte) < 0) f = fail_[f];
        fail_[next] = std::max(child(f, byte), 0);
      }
      if (output_[next] < 0) output_[next] = output_[fail_[next]];  // a node's own text is its longest
      queue.push_back(next);
    }
  }
}

int32_t LongestMatches::child(int32_t node, uint8_t byte) const {
  const auto it = std::lower_bound(edge_keys_.begin(), edge_keys_.end(), key(node, byte));
  return it != edge_keys_.end() && *it == key(node, byte) ? edge_to_[it - edge_keys_.begin()] : -1;
}

std::vector<std::pair<size_t, int32_t>> LongestMatches::starts(std::string_view text) const {
  std::vector<std::pair<size_t, int32_t>> found;
  if (edge_keys_.empty()) return found;
  int32_t state = 0;
  for (size_t i = text.size(); i-- > 0;) {
    const auto byte = static_cast<uint8_t>(text[i]);
    if (state == 0 && !ends_text_[byte]) continue;  // ordinary text: one table lookup a byte
    int32_t next = child(state, byte);
    while (next < 0 && state != 0) state = fail_[state], next = child(state, byte);
    state = std::max(next, 0);
    if (output_[state] >= 0) found.emplace_back(i, output_[state]);
  }
  std::reverse(found.begin(), found.end());
  return found;
}

}  // namespace tinygpt::data
