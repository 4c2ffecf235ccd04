#pragma once
// A small SentencePiece model trained by the SentencePiece library itself on a text written into a
// TempDir: the tests need no downloaded model.
#include <sentencepiece_trainer.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "temp_files.h"

namespace tinygpt::testing {

inline std::string sentencepiece_text() {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "Once upon a time, a little fox named Tom found " + std::to_string(i * 7) +
            " red apples. \"Look!\" he said, and ran home.\n나는 사과를 좋아해요.\n";
  return text;
}

// Writes the model to dir/<name>.model and returns its path. byte_fallback as Llama's tokenizer
// unless `extra` says otherwise; `extra`: more trainer flags, e.g.
// "--normalization_rule_name=identity" (Llama's normalizer) or "--byte_fallback=false".
inline std::string write_sentencepiece_model(const TempDir& dir, const std::string& name = "sp", int vocab = 400,
                                             const std::string& type = "bpe", const std::string& extra = "") {
  const std::string text_path = dir.write(name + "_corpus.txt", sentencepiece_text());
  std::string proto;
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + text_path + " --model_prefix= --vocab_size=" + std::to_string(vocab) + " --model_type=" + type +
          (extra.find("--byte_fallback") == std::string::npos ? " --byte_fallback=true" : "") +
          " --character_coverage=1.0 --minloglevel=2 " + extra,
      nullptr, &proto);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return dir.write(name + ".model", proto);
}

// A model's protobuf message as its fields, to edit one: (number, the whole field's bytes, and for a
// length-delimited field its payload).
struct ProtoField {
  uint32_t number = 0;
  std::string raw, payload;
};

inline uint64_t proto_varint(const std::string& bytes, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0; at < bytes.size(); shift += 7) {
    const auto b = static_cast<uint8_t>(bytes[at++]);
    v |= uint64_t{b & 0x7Fu} << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

inline std::vector<ProtoField> proto_fields(const std::string& message) {
  std::vector<ProtoField> fields;
  for (size_t at = 0; at < message.size();) {
    const size_t start = at;
    const uint64_t tag = proto_varint(message, at);
    ProtoField f;
    f.number = static_cast<uint32_t>(tag >> 3);
    switch (tag & 7) {
      case 0: proto_varint(message, at); break;
      case 1: at += 8; break;
      case 5: at += 4; break;
      case 2: {
        const uint64_t n = proto_varint(message, at);
        f.payload = message.substr(at, n);
        at += n;
        break;
      }
      default: FAIL("not a protobuf message the tests wrote");
    }
    f.raw = message.substr(start, at - start);
    fields.push_back(f);
  }
  return fields;
}

inline std::string proto_length_field(uint32_t number, const std::string& payload) {
  std::string out;
  for (uint64_t v : {uint64_t{number} << 3 | 2, uint64_t{payload.size()}}) {
    for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7F) | 0x80);
    out += static_cast<char>(v);
  }
  return out + payload;
}

// The model with its normalizer's precompiled character map replaced by change(the map).
template <class Change>
std::string with_charsmap(const std::string& model, Change change) {
  std::string out;
  bool found = false;
  for (const ProtoField& f : proto_fields(model)) {
    if (f.number != 3) {
      out += f.raw;
      continue;
    }
    std::string normalizer;
    for (const ProtoField& g : proto_fields(f.payload)) {
      if (g.number == 2) found = true;
      normalizer += g.number == 2 ? proto_length_field(2, change(g.payload)) : g.raw;
    }
    out += proto_length_field(3, normalizer);
  }
  REQUIRE(found);
  return out;
}

}  // namespace tinygpt::testing
