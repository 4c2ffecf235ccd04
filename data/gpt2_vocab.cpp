#include "gpt2_vocab.h"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "input_file.h"
#include "json.h"
#include "utf8.h"

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

// vocab: token text -> id, checked; ids below `limit` (a model's vocab_size, or any id's bound).
std::unordered_map<std::string, int32_t> read_vocab(const std::string& path, int64_t limit) {
  // An object of token -> id: one container, a value per token.
  const bool model_limit = limit < BpeTokenizer::kMaxSpecialId;
  const std::string why = model_limit ? fmt::format("the object and one per token: the model's vocab_size is {} "
                                                    "(config.json)", limit)
                                      : std::string("the object and one per token id");
  const json::Limits limits{.depth = 1, .values = std::min<int64_t>(limit, BpeTokenizer::kMaxSpecialId) + 1,
                            .why_values = why};
  const json::Value doc = json::parse(read_small_file(path, "vocabulary"), fmt::format("vocabulary '{}'", path), limits);
  if (doc.type != json::Value::Type::object)
    throw std::invalid_argument(fmt::format("vocabulary '{}' must be a JSON object of token -> id", path));
  std::unordered_map<std::string, int32_t> vocab;
  std::unordered_map<int32_t, const std::string*> by_id;
  for (const auto& [text, id] : *doc.object) {
    if (!id.is_integer() || id.number < 0 || id.number >= static_cast<double>(std::min<int64_t>(limit, BpeTokenizer::kMaxSpecialId)))
      throw std::invalid_argument(fmt::format(
          "vocabulary '{}': token {} has id {}, {}", path, json::quote(text),
          id.type == json::Value::Type::number ? id.text : id.type_name(),
          model_limit && id.is_integer() && id.number >= 0
              ? fmt::format("past the model's vocab_size {} (config.json)", limit)
              : fmt::format("not an integer in [0, {})", BpeTokenizer::kMaxSpecialId)));
    const auto n = static_cast<int32_t>(id.number);
    if (const auto [it, fresh] = by_id.emplace(n, &text); !fresh)
      throw std::invalid_argument(fmt::format("vocabulary '{}': tokens {} and {} both have id {}", path,
                                              json::quote(*it->second), json::quote(text), n));
    vocab.emplace(text, n);
  }
  return vocab;
}

// The special tokens a Hugging Face folder lists: tokenizer_config.json's *_token fields (a string,
// or an object with "content"), additional_special_tokens and added_tokens_decoder, and the same
// fields of special_tokens_map.json.
void add_listed_specials(const std::filesystem::path& path, std::vector<std::string>& out) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  const json::Limits limits{.depth = 8, .values = 1'000'000};
  const json::Value doc = json::parse(read_small_file(path.string(), "tokenizer settings"),
                                      fmt::format("tokenizer settings '{}'", path.string()), limits);
  if (doc.type != json::Value::Type::object) return;
  auto take = [&](const json::Value& v) {
    if (v.type == json::Value::Type::string) out.push_back(v.text);
    if (const json::Value* content = v.find("content"); content && content->type == json::Value::Type::string)
      out.push_back(content->text);
  };
  for (const auto& [key, v] : *doc.object) {
    if (key.ends_with("_token")) take(v);
    if (key == "additional_special_tokens" && v.type == json::Value::Type::array)
      for (const json::Value& t : *v.array) take(t);
    if (key == "added_tokens_decoder" && v.type == json::Value::Type::object)
      for (const auto& [id, t] : *v.object) take(t);
  }
}

bool special_form(std::string_view text) { return text.size() >= 4 && text.starts_with("<|") && text.ends_with("|>"); }

// The merge list's text, refused when a line ends with a lone CR (neither LF nor CRLF).
void check_line_ends(std::string_view text, const std::string& path) {
  for (size_t at = text.find('\r'); at != std::string_view::npos; at = text.find('\r', at + 1))
    if (at + 1 == text.size() || text[at + 1] != '\n')
      throw std::invalid_argument(fmt::format("merge list '{}': a line ends with a lone CR (byte {}); LF or CRLF line "
                                              "ends are read", path, at));
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

Gpt2TokenizerFiles find_gpt2_tokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  std::error_code ec;
  std::vector<std::string> partial;
  for (const auto& [vocab, merges] : {std::pair{"vocab.json", "merges.txt"}, std::pair{"encoder.json", "vocab.bpe"}}) {
    const bool has_vocab = fs::exists(d / vocab, ec), has_merges = fs::exists(d / merges, ec);
    if (has_vocab && has_merges) {
      Gpt2TokenizerFiles files{(d / vocab).string(), (d / merges).string(), fmt::format("{} + {}", vocab, merges), {}};
      add_listed_specials(d / "tokenizer_config.json", files.listed_specials);
      add_listed_specials(d / "special_tokens_map.json", files.listed_specials);
      return files;
    }
    if (has_vocab || has_merges)
      partial.push_back(fmt::format("{} without {}", has_vocab ? vocab : merges, has_vocab ? merges : vocab));
  }
  if (partial.empty())
    throw std::invalid_argument(fmt::format(
        "'{}' holds no GPT-2 tokenizer files (vocab.json + merges.txt, or encoder.json + vocab.bpe)", dir));
  throw std::invalid_argument(fmt::format("'{}' holds no complete GPT-2 tokenizer: {}", dir, fmt::join(partial, "; ")));
}

BpeTokenizer read_gpt2_tokenizer(const std::string& dir, int64_t vocab_limit) {
  return read_gpt2_tokenizer(find_gpt2_tokenizer(dir), vocab_limit);
}

BpeTokenizer read_gpt2_tokenizer(const Gpt2TokenizerFiles& files, int64_t vocab_limit) {
  const std::string &vocab_path = files.vocab, &merges_path = files.merges;
  const std::unordered_map<std::string, int32_t> vocab = read_vocab(vocab_path, vocab_limit);
  const std::string merges_text = read_small_file(merges_path, "merge list");
  check_line_ends(merges_text, merges_path);
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
    auto fail = [&](const std::string& why) {
      throw std::invalid_argument(fmt::format("merge list '{}' line {}: {}", merges_path, line_no, why));
    };
    if (line_no == 1 && line.starts_with("#")) {
      if (line != "#version: 0.2") fail(fmt::format("{} is not the header \"#version: 0.2\"", json::quote(line)));
      continue;
    }
    if (line.empty()) continue;
    const size_t space = line.find(' ');
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
  // The entries that are neither bytes nor merges: special tokens, when of a special token's form.
  const std::set<std::string_view> listed(files.listed_specials.begin(), files.listed_specials.end());
  std::vector<SpecialToken> specials, unplaced;
  for (const auto& [text, id] : vocab)
    if (static_cast<size_t>(id) >= used.size() || !used[id])
      (special_form(text) || listed.count(text) ? specials : unplaced).push_back({text, id});
  auto by_id = [](const auto& x, const auto& y) { return x.id < y.id; };
  std::sort(specials.begin(), specials.end(), by_id);
  std::sort(unplaced.begin(), unplaced.end(), by_id);
  if (!unplaced.empty()) {
    std::vector<std::string> shown;
    for (size_t k = 0; k < std::min<size_t>(5, unplaced.size()); ++k)
      shown.push_back(fmt::format("{} ({})", json::quote(unplaced[k].text), unplaced[k].id));
    const auto made = static_cast<int64_t>(256 + merges.size());
    throw std::invalid_argument(fmt::format(
        "vocabulary '{}': {} entr{} neither a byte, a merge's result nor a special token (<|...|>, or listed in "
        "tokenizer_config.json): {}{}{}", vocab_path, unplaced.size(), unplaced.size() == 1 ? "y is" : "ies are",
        fmt::join(shown, ", "), unplaced.size() > shown.size() ? ", ..." : "",
        unplaced.back().id >= made ? fmt::format("; the merge list '{}' makes tokens up to id {} only: is it cut short?",
                                                 merges_path, made - 1)
                                   : ""));
  }
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
