#pragma once
// SentencePiece models from files people share: the SentencePiece library parses the bytes with
// its own code, so a model is first loaded, used and dropped in a child process (io::run_in_child);
// only one that loads there is loaded here.
#include <memory>
#include <string>

#include "../data/sentencepiece_tokenizer.h"

namespace tinygpt::io {

// The tokenizer of a model's bytes; `where` names them in errors ("tokenizer 'm.model'").
std::shared_ptr<const data::SentencePieceTokenizer> load_sentencepiece(std::string model_proto, const std::string& where);
// The same from a model file (e.g. Llama's tokenizer.model).
std::shared_ptr<const data::SentencePieceTokenizer> read_sentencepiece_file(const std::string& path);

}  // namespace tinygpt::io
