#include "tokenizer_group.h"

#include <fmt/format.h>

#include <climits>
#include <string>
#include <vector>

#include "../data/sentencepiece_tokenizer.h"
#include "../data/tokenizer_record.h"
#include "sentencepiece_model.h"

namespace tinygpt::io {

int tokenizer_format_version(const data::Tokenizer& tokenizer) {
  const data::TokenizerRecord r = tokenizer.record();
  if (r.kind == data::TokenizerKind::sentencepiece) return kFormatVersionLlama;
  return !r.byte_ids.empty() || !r.specials.empty() ? kFormatVersionSpecials : kFormatVersion;
}

void write_tokenizer_group(const hdf5::GroupWriter& root, const data::Tokenizer& tokenizer) {
  const hdf5::GroupWriter g = root.group("tokenizer");
  const data::TokenizerRecord r = tokenizer.record();
  g.put("kind", std::string(data::name(r.kind)));
  g.put("digest", tokenizer.identity().hex());
  switch (r.kind) {
    case data::TokenizerKind::chars:
      g.put_ints("vocab", r.code_points, {r.code_points.size()});
      break;
    case data::TokenizerKind::bpe: {
      std::vector<int32_t> flat;
      for (auto [x, y] : r.merges) flat.push_back(x), flat.push_back(y);
      g.put_ints("merges", flat, {r.merges.size(), 2});
      g.put("split", std::string(data::split_name(r.split)));
      if (!r.byte_ids.empty()) g.put_ints("byte_ids", r.byte_ids, {256});
      if (!r.specials.empty()) {
        std::vector<int32_t> ids;
        std::vector<std::string> texts;
        for (const data::SpecialToken& s : r.specials) ids.push_back(s.id), texts.push_back(s.text);
        g.put_ints("special_ids", ids, {ids.size()});
        // An attribute as the layout's first form while it fits in 64 KiB (16 bytes a string), else a dataset.
        constexpr size_t kSpecialsInAttribute = 2048;
        if (texts.size() <= kSpecialsInAttribute) g.put_texts("special_tokens", texts);
        else g.put_text_dataset("special_tokens", texts);
      }
      break;
    }
    case data::TokenizerKind::sentencepiece:
      g.put_bytes("model_proto", r.model_proto);
      break;
  }
}

namespace {

// The record /tokenizer holds, every field checked against its shape and the file's version.
data::TokenizerRecord read_record(const hdf5::Reader& r, int64_t version) {
  const hdf5::Group& g = r.group("/tokenizer");
  const std::string kind = r.text(g, "/tokenizer", "kind");
  auto int32s = [&](const std::string& path, const Shape& shape) {
    std::vector<int32_t> out;
    for (int64_t v : r.integers(path, shape)) {
      if (v < INT32_MIN || v > INT32_MAX) r.fail(fmt::format("dataset {} holds {}, outside 32-bit integers", path, v));
      out.push_back(static_cast<int32_t>(v));
    }
    return out;
  };
  data::TokenizerRecord record;
  if (kind == "char") {
    const auto& dims = r.dataset("/tokenizer/vocab").shape;
    if (dims.size() != 1) r.fail("dataset /tokenizer/vocab must be one-dimensional");
    record.code_points = int32s("/tokenizer/vocab", {dims[0]});
    return record;
  }
  if (kind == "bpe") {
    record.kind = data::TokenizerKind::bpe;
    const auto& dims = r.dataset("/tokenizer/merges").shape;
    if (dims.size() != 2 || dims[1] != 2) r.fail("dataset /tokenizer/merges must have shape [n_merges, 2]");
    const std::vector<int32_t> flat = int32s("/tokenizer/merges", {dims[0], 2});
    for (size_t k = 0; k < flat.size() / 2; ++k) record.merges.push_back({flat[2 * k], flat[2 * k + 1]});
    const std::string split = r.text(g, "/tokenizer", "split");
    if (split != "gpt2" && split != "none") r.fail(fmt::format("unknown split '{}' in /tokenizer", split));
    record.split = data::split_from_name(split);
    if (version < kFormatVersionSpecials) {
      if (g.datasets.count("byte_ids") || g.datasets.count("special_ids"))
        r.fail(fmt::format("/tokenizer has format_version 2's fields in a version {} file", version));
      return record;
    }
    if (g.datasets.count("byte_ids")) record.byte_ids = int32s("/tokenizer/byte_ids", {256});
    if (g.datasets.count("special_ids") || g.attributes.count("special_tokens") || g.datasets.count("special_tokens")) {
      const auto& special_dims = r.dataset("/tokenizer/special_ids").shape;
      if (special_dims.size() != 1) r.fail("dataset /tokenizer/special_ids must be one-dimensional");
      if (g.datasets.count("special_tokens") && g.attributes.count("special_tokens"))
        r.fail("/tokenizer holds special_tokens both as an attribute and as a dataset");
      const std::vector<std::string> texts = g.datasets.count("special_tokens")
                                                 ? r.text_dataset("/tokenizer/special_tokens", special_dims[0])
                                                 : r.texts(g, "/tokenizer", "special_tokens");
      if (static_cast<int64_t>(texts.size()) != special_dims[0])
        r.fail(fmt::format("/tokenizer has {} special_ids but {} special_tokens", special_dims[0], texts.size()));
      const std::vector<int32_t> ids = int32s("/tokenizer/special_ids", {special_dims[0]});
      for (size_t k = 0; k < ids.size(); ++k) record.specials.push_back({texts[k], ids[k]});
    }
    return record;
  }
  if (kind == "sentencepiece") {
    if (version < kFormatVersionLlama)
      r.fail(fmt::format("/tokenizer kind 'sentencepiece' is format_version 3's, in a version {} file", version));
    record.kind = data::TokenizerKind::sentencepiece;
    record.model_proto = r.bytes("/tokenizer/model_proto", data::SentencePieceTokenizer::kMaxModelBytes);
    return record;
  }
  r.fail(fmt::format("unknown tokenizer kind '{}' in /tokenizer", kind));
}

}  // namespace

std::shared_ptr<const data::Tokenizer> read_tokenizer_group(const hdf5::Reader& r, int64_t version) {
  data::TokenizerRecord record = read_record(r, version);
  const std::shared_ptr<const data::Tokenizer> tokenizer =
      record.kind == data::TokenizerKind::sentencepiece
          ? load_sentencepiece(std::move(record.model_proto), "/tokenizer/model_proto")
          : data::make_tokenizer(std::move(record));
  const hdf5::Group& g = r.group("/tokenizer");
  if (g.attributes.count("digest")) {
    const std::string stored = r.text(g, "/tokenizer", "digest"), actual = tokenizer->identity().hex();
    if (stored != actual)
      r.fail(fmt::format("/tokenizer's digest {} is not that of the tokenizer it holds ({}): the file was edited",
                         stored.substr(0, 64), actual));
  }
  return tokenizer;
}

}  // namespace tinygpt::io
