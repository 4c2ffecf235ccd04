#include "llama2c.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "../data/input_file.h"
#include "output_files.h"
#include "weight_map.h"

namespace tinygpt::io {

namespace {

static_assert(std::endian::native == std::endian::little, "llama2.c's files are little-endian");

constexpr size_t kRunHeaderInts = 7;

// RoPE's cos (real) or sin (imaginary) table as llama2.c's export writes it: [seq_len, hs / 2].
std::vector<float> run_rope_table(const nn::GPTConfig& c, bool sine) {
  const Tensor angles = rope_angles(c.block_size, c.head_size(), c.rope_theta);  // [T, hs]: cos, sin pairs
  std::vector<float> out;
  for (int64_t i = 0; i < angles.numel(); i += 2) out.push_back(angles.data()[i + (sine ? 1 : 0)]);
  return out;
}

}  // namespace

void check_llama2c_exportable(const nn::GPT& model) {
  const nn::GPTConfig& c = model.config();
  std::vector<std::string> problems;
  if (c.norm != nn::NormKind::rmsnorm || c.norm_eps != 1e-5f)
    problems.push_back(fmt::format("norm {} with eps {} (run.c: rmsnorm, 1e-5)", nn::name(c.norm), c.norm_eps));
  if (c.position != nn::PositionKind::rope || c.rope_theta != 10000.0f)
    problems.push_back(fmt::format("position {} (run.c: rope with theta 10000)",
                                   c.position == nn::PositionKind::rope ? fmt::format("rope with theta {}", c.rope_theta)
                                                                        : std::string(nn::name(c.position))));
  if (c.mlp != nn::MlpKind::swiglu) problems.push_back(fmt::format("mlp {} (run.c: swiglu)", nn::name(c.mlp)));
  if (c.bias) problems.push_back("biases (run.c has none)");
  if (!problems.empty())
    throw std::invalid_argument(fmt::format("llama2.c's run.c computes another model than this one: {}; train with "
                                            "--arch llama (and its defaults for these) to export it",
                                            fmt::join(problems, "; ")));
}

void export_llama2c(const nn::GPT& model, const std::string& path) {
  check_llama2c_exportable(model);
  const nn::GPTConfig& c = model.config();
  const std::array<int32_t, kRunHeaderInts> header = {
      static_cast<int32_t>(c.n_embd),   static_cast<int32_t>(c.hidden()),     static_cast<int32_t>(c.n_layer),
      static_cast<int32_t>(c.n_head),   static_cast<int32_t>(c.kv_heads()),
      static_cast<int32_t>(c.tie_embeddings ? c.vocab_size : -c.vocab_size), static_cast<int32_t>(c.block_size)};
  AtomicFile out(path, "llama2.c model");
  out.write(header.data(), sizeof header);
  for (const FileTensor& t : llama2c_weights(c)) {
    const std::vector<float> values = t.parameter.empty() ? run_rope_table(c, t.name == "freq_cis_imag") : pack(t, model);
    out.write(values.data(), values.size() * sizeof(float));
  }
  out.commit();
}

void export_llama2c_tokenizer(const data::SentencePieceTokenizer& tokenizer, const std::string& path) {
  std::vector<std::string> pieces;
  uint32_t longest = 0;
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    std::string piece = id == tokenizer.bos_id()   ? "\n<s>\n"
                        : id == tokenizer.eos_id() ? "\n</s>\n"
                                                   : data::SentencePieceTokenizer::with_spaces(tokenizer.piece(id));
    longest = std::max(longest, static_cast<uint32_t>(piece.size()));
    pieces.push_back(std::move(piece));
  }
  AtomicFile out(path, "llama2.c tokenizer");
  out.write(&longest, sizeof longest);
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    const float score = tokenizer.score(id);
    const auto length = static_cast<uint32_t>(pieces[static_cast<size_t>(id)].size());
    out.write(&score, sizeof score);
    out.write(&length, sizeof length);
    out.write(pieces[static_cast<size_t>(id)].data(), length);
  }
  out.commit();
}

namespace {

using RunHeader = std::array<int32_t, kRunHeaderInts>;

std::string header_text(const RunHeader& h) {
  const auto [dim, hidden, layers, heads, kv_heads, vocab, seq_len] = h;
  return fmt::format("dim {}, hidden_dim {}, n_layers {}, n_heads {}, n_kv_heads {}, vocab_size {}, seq_len {}", dim,
                     hidden, layers, heads, kv_heads, vocab, seq_len);
}

// The model a header describes; throws std::invalid_argument with the reason when it describes none.
nn::GPTConfig header_config(const RunHeader& h) {
  const auto [dim, hidden, layers, heads, kv_heads, vocab, seq_len] = h;
  if (dim <= 0 || hidden <= 0 || layers <= 0 || heads <= 0 || kv_heads <= 0 || vocab == 0 || seq_len <= 0 ||
      vocab == INT32_MIN)
    throw std::invalid_argument(fmt::format("is not a llama2.c model: its header says {}", header_text(h)));
  nn::GPTConfig c = nn::llama_style({.vocab_size = std::abs(vocab), .block_size = seq_len, .n_layer = layers,
                                     .n_head = heads, .n_embd = dim});
  c.ffn_hidden = hidden, c.n_kv_head = kv_heads, c.tie_embeddings = vocab > 0;
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("holds a model tinygpt cannot build ({}): {}", header_text(h), e.what()));
  }
  return c;
}

// The length of run.c's file of that model (validate bounds each size, so no sum overflows).
int64_t model_file_bytes(const nn::GPTConfig& c) {
  int64_t floats = 0;
  for (const FileTensor& t : llama2c_weights(c)) floats += numel(file_shape(t, c));
  return static_cast<int64_t>(sizeof(RunHeader)) + 4 * floats;
}

// llama2.c's tokenizer file: the longest length, then records (score, length, bytes) to the end.
bool is_tokenizer_file(std::string_view bytes) {
  constexpr size_t kRecordHead = 8;
  if (bytes.size() < 4 + kRecordHead) return false;
  uint32_t longest = 0;
  std::memcpy(&longest, bytes.data(), 4);
  if (longest == 0 || longest > (1u << 20)) return false;
  size_t at = 4, records = 0;
  while (at + kRecordHead <= bytes.size()) {
    float score = 0;
    uint32_t length = 0;
    std::memcpy(&score, bytes.data() + at, 4);
    std::memcpy(&length, bytes.data() + at + 4, 4);
    if (!std::isfinite(score) || length > longest || bytes.size() - at - kRecordHead < length) return false;
    at += kRecordHead + length, ++records;
  }
  return at == bytes.size() && records > 0;
}

// llama2.c's export.py --version 1 and 2 files begin with the magic "ak42" and their version.
constexpr int32_t kVersionedMagic = 0x616b3432;

}  // namespace

Llama2cFile llama2c_file_kind(const std::string& path) {
  try {
    data::InputFile in(path);
    RunHeader h{};
    if (in.size() >= static_cast<int64_t>(sizeof h) && in.read(h.data(), sizeof h) == sizeof h) {
      try {
        if (in.size() == model_file_bytes(header_config(h))) return Llama2cFile::model;
      } catch (const std::invalid_argument&) {  // not a model's header: perhaps a tokenizer
      }
    }
    constexpr int64_t kMaxTokenizerBytes = int64_t{64} << 20;  // a vocabulary of millions of pieces
    if (in.size() > kMaxTokenizerBytes) return Llama2cFile::neither;
    data::InputFile again(path);
    const data::FileBytes bytes = again.read_all(kMaxTokenizerBytes);
    return is_tokenizer_file(bytes.view()) ? Llama2cFile::tokenizer : Llama2cFile::neither;
  } catch (const std::exception&) {  // unreadable: not one to replace
    return Llama2cFile::neither;
  }
}

std::shared_ptr<nn::GPT> import_llama2c(const std::string& path) {
  data::InputFile in(path, "llama2.c model");
  RunHeader h{};
  if (in.size() < static_cast<int64_t>(sizeof h) || in.read(h.data(), sizeof h) != sizeof h)
    in.fail("is shorter than llama2.c's header (7 int32)");
  if (h[0] == kVersionedMagic)
    in.fail(fmt::format("is llama2.c's version-{} layout (export.py --version {}{}); tinygpt reads run.c's legacy "
                        "layout (export.py --version 0)",
                        h[1], h[1], h[1] == 2 ? ", int8-quantized" : ""));
  nn::GPTConfig c;
  try {
    c = header_config(h);
  } catch (const std::invalid_argument& e) {
    in.fail(e.what());
  }
  // The length the header implies, checked before the weights are allocated.
  const int64_t expected = model_file_bytes(c);
  if (in.size() != expected)
    in.fail(fmt::format("holds {} bytes, but a llama2.c model of {} holds {}", in.size(), header_text(h), expected));
  auto model = nn::GPT::unwritten(c);  // every weight is read below
  const TensorReader read = [&in](const FileTensor& t, const Shape&, std::span<float> values) {
    if (in.read(values.data(), values.size_bytes()) != values.size_bytes()) in.fail(fmt::format("ends inside {}", t.name));
    if (t.parameter.empty()) return;  // run.c's RoPE tables: ours are computed
    for (size_t i = 0; i < values.size(); ++i)
      if (!std::isfinite(values[i])) in.fail(fmt::format("tensor {} holds {} at element {}", t.name, values[i], i));
  };
  read_weights(llama2c_weights(c), read, *model);
  return model;
}

}  // namespace tinygpt::io
