#include "tinygpt/data/gpt2_vocab.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include "tinygpt/data/input_file.h"
#include "tinygpt/data/json.h"
#include "tinygpt/data/utf8.h"

namespace tinygpt::data {

namespace {

constexpr int64_t kMaxFileBytes = int64_t{256} << 20;

std::string read_small_file(const std::string& path, const char* what) {
  InputFile file(path, what);
  FileBytes bytes = file.read_all(kMaxFileBytes);
  return std::string(bytes.view());
}

// Token text in GPT-2's alphabet -> the bytes it stands for; false if a character is not in it.
bool to_bytes(std::string_view spelled, std::string& bytes) {
  static const std::unordered_map<int32_t, char> byte_of = [] {
    std::unordered_map<int32_t, char> m;
    for (int b = 0; b < 256; ++b) m[byte_alphabet()[b]] = static_cast<char>(b);
    return m;
  }();
  bytes.clear();
  for (size_t i = 0; i < spelled.size();) {
    const auto it = byte_of.find(next_code_point(spelled, i));
    if (it == byte_of.end()) return false;
    bytes += it->second;
  }
  return true;
}

std::string spell(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) append_utf8(out, byte_alphabet()[static_cast<uint8_t>(c)]);
  return out;
}

// vocab: token text -> id, checked.
std::unordered_map<std::string, int32_t> read_vocab(const std::string& path) {
  const json::Value doc = json::parse(read_small_file(path, "vocabulary"), fmt::format("vocabulary '{}'", path));
  if (doc.type != json::Value::Type::object)
    throw std::invalid_argument(fmt::format("vocabulary '{}' must be a JSON object of token -> id", path));
  std::unordered_map<std::string, int32_t> vocab;
  std::unordered_map<int32_t, const std::string*> by_id;
  for (const auto& [text, id] : *doc.object) {
    if (!id.is_integer() || id.number < 0 || id.number >= BpeTokenizer::kMaxSpecialId)
      throw std::invalid_argument(fmt::format("vocabulary '{}': token {} has id {}, not an integer in [0, {})", path,
                                              json::quote(text), id.type == json::Value::Type::number ? id.text
                                                                                                     : id.type_name(),
                                              BpeTokenizer::kMaxSpecialId));
    const auto n = static_cast<int32_t>(id.number);
    if (const auto [it, fresh] = by_id.emplace(n, &text); !fresh)
      throw std::invalid_argument(fmt::format("vocabulary '{}': tokens {} and {} both have id {}", path,
                                              json::quote(*it->second), json::quote(text), n));
    vocab.emplace(text, n);
  }
  return vocab;
}

}  // namespace

const std::array<int32_t, 256>& byte_alphabet() {
  static const std::array<int32_t, 256> table = [] {
    std::array<int32_t, 256> t{};
    int32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool visible = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = visible ? b : next++;
    }
    return t;
  }();
  return table;
}

BpeTokenizer read_gpt2_tokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  for (const auto& [vocab, merges] : {std::pair{"vocab.json", "merges.txt"}, std::pair{"encoder.json", "vocab.bpe"}})
    if (fs::exists(d / vocab) || fs::exists(d / merges)) return read_gpt2_tokenizer(d / vocab, d / merges);
  throw std::invalid_argument(fmt::format(
      "'{}' holds no GPT-2 tokenizer files (vocab.json + merges.txt, or encoder.json + vocab.bpe)", dir));
}

BpeTokenizer read_gpt2_tokenizer(const std::string& vocab_path, const std::string& merges_path) {
  const std::unordered_map<std::string, int32_t> vocab = read_vocab(vocab_path);
  const std::string merges_text = read_small_file(merges_path, "merge list");
  std::vector<bool> used(vocab.size() + 1, false);  // ids below vocab.size() that bytes or merges claim
  auto claim = [&](int32_t id) {
    if (static_cast<size_t>(id) < used.size()) used[id] = true;
  };
  std::vector<int32_t> byte_ids(256);
  for (int b = 0; b < 256; ++b) {
    std::string spelled;
    append_utf8(spelled, byte_alphabet()[b]);
    const auto it = vocab.find(spelled);
    if (it == vocab.end() || it->second > 255)
      throw std::invalid_argument(fmt::format("vocabulary '{}': byte {} (token {}) {}", vocab_path, b,
                                              json::quote(spelled), it == vocab.end() ? "is missing" : "has an id above 255"));
    byte_ids[b] = it->second;
    claim(it->second);
  }
  std::vector<Merge> merges;
  std::string_view rest = merges_text;
  std::string bytes;
  for (int64_t line_no = 1; !rest.empty(); ++line_no) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    const size_t space = line.find(' ');
    auto fail = [&](const std::string& why) {
      throw std::invalid_argument(fmt::format("merge list '{}' line {}: {}", merges_path, line_no, why));
    };
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos)
      fail("expected two tokens separated by one space");
    const std::string left(line.substr(0, space)), right(line.substr(space + 1));
    const auto a = vocab.find(left), b = vocab.find(right), joined = vocab.find(left + right);
    if (a == vocab.end() || b == vocab.end() || joined == vocab.end())
      fail(fmt::format("token {} is not in the vocabulary",
                       json::quote(a == vocab.end() ? left : b == vocab.end() ? right : left + right)));
    if (!to_bytes(left + right, bytes)) fail("a token is not spelled in GPT-2's byte alphabet");
    const auto expected = static_cast<int64_t>(256 + merges.size());
    if (joined->second != expected)
      fail(fmt::format("the merge makes {}, which the vocabulary numbers {}, not {}", json::quote(left + right),
                       joined->second, expected));
    if (expected >= BpeTokenizer::kMaxMerges) fail("too many merges");
    merges.push_back({a->second, b->second});
    claim(joined->second);
  }
  bool identity = true;  // byte b is token b: stored as no byte_ids (format_version 1 where no specials)
  for (int b = 0; b < 256; ++b) identity = identity && byte_ids[b] == b;
  if (identity) byte_ids.clear();
  std::vector<SpecialToken> specials;  // the entries that are neither bytes nor merges
  for (const auto& [text, id] : vocab)
    if (static_cast<size_t>(id) >= used.size() || !used[id]) specials.push_back({text, id});
  std::sort(specials.begin(), specials.end(), [](const auto& x, const auto& y) { return x.id < y.id; });
  try {
    return BpeTokenizer(std::move(merges), Split::gpt2, std::move(byte_ids), std::move(specials));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("tokenizer files '{}' and '{}': {}", vocab_path, merges_path, e.what()));
  }
}

Gpt2Files gpt2_files(const BpeTokenizer& tokenizer) {
  if (tokenizer.split() != Split::gpt2)
    throw std::invalid_argument(fmt::format("a bpe tokenizer with split '{}' has no Hugging Face equivalent "
                                            "(GPT-2's tokenizer cuts text with the gpt2 split)",
                                            split_name(tokenizer.split())));
  std::vector<std::string> text(tokenizer.vocab_size());
  std::vector<bool> present(tokenizer.vocab_size(), false);
  const auto n_regular = static_cast<int32_t>(256 + tokenizer.merges().size());
  for (int32_t id = 0; id < n_regular; ++id) text[id] = spell(tokenizer.token_bytes(id)), present[id] = true;
  for (const SpecialToken& s : tokenizer.specials()) text[s.id] = s.text, present[s.id] = true;
  std::unordered_map<std::string_view, int32_t> seen;
  Gpt2Files out;
  out.vocab_json = "{";
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (!present[id]) continue;
    if (const auto [it, fresh] = seen.emplace(text[id], id); !fresh)
      throw std::invalid_argument(fmt::format("tokens {} and {} both stand for {}: a vocab.json cannot hold both",
                                              it->second, id, json::quote(sanitize_utf8(tokenizer.token_bytes(id)))));
    out.vocab_json += fmt::format("{}{}: {}", id == 0 ? "" : ", ", json::quote(text[id]), id);
  }
  out.vocab_json += "}\n";
  out.merges_txt = "#version: 0.2\n";
  for (const auto& [a, b] : tokenizer.merges()) out.merges_txt += text[a] + " " + text[b] + "\n";
  return out;
}

}  // namespace tinygpt::data
