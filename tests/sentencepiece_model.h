#pragma once
// A small SentencePiece model trained by the SentencePiece library itself on a text written into a
// TempDir: the tests need no downloaded model.
#include <sentencepiece_trainer.h>

#include <catch2/catch.hpp>

#include <string>

#include "temp_files.h"

namespace tinygpt::testing {

inline std::string sentencepiece_text() {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "Once upon a time, a little fox named Tom found " + std::to_string(i * 7) +
            " red apples. \"Look!\" he said, and ran home.\n나는 사과를 좋아해요.\n";
  return text;
}

// Writes the model to dir/<name>.model and returns its path. byte_fallback as Llama's tokenizer.
inline std::string write_sentencepiece_model(const TempDir& dir, const std::string& name = "sp", int vocab = 400,
                                             const std::string& type = "bpe") {
  const std::string text_path = dir.write(name + "_corpus.txt", sentencepiece_text());
  std::string proto;
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + text_path + " --model_prefix= --vocab_size=" + std::to_string(vocab) + " --model_type=" + type +
          " --byte_fallback=true --character_coverage=1.0 --minloglevel=2",
      nullptr, &proto);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return dir.write(name + ".model", proto);
}

}  // namespace tinygpt::testing
