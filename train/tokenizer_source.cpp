#include "tokenizer_source.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "../data/gpt2_vocab.h"
#include "../data/input_file.h"
#include "../io/sentencepiece_model.h"
#include "checkpoint.h"

namespace tinygpt::train {

namespace fs = std::filesystem;

namespace {

// Whether a file starts as an HDF5 file does, sealed or not.
bool looks_like_hdf5(const std::string& path) {
  data::InputFile in(path);
  std::string head(32, '\0');
  head.resize(in.read(head.data(), head.size()));
  return head.starts_with("\x89HDF\r\n\x1a\n") || head.starts_with("tinygpt checkpoint seal ");
}

std::shared_ptr<const data::Tokenizer> tokenizer_in_folder(const std::string& dir) {
  std::error_code ec;
  const fs::path folder(dir);
  if (fs::exists(folder / "tokenizer.h5", ec)) return read_tokenizer_file((folder / "tokenizer.h5").string());
  if (fs::exists(folder / "tokenizer.model", ec)) return io::read_sentencepiece_file((folder / "tokenizer.model").string());
  for (const char* vocab : {"vocab.json", "encoder.json"})
    if (fs::exists(folder / vocab, ec))
      return std::make_shared<const data::BpeTokenizer>(data::read_gpt2_tokenizer(dir));
  throw std::invalid_argument(fmt::format("the folder '{}' holds no tokenizer: no tokenizer.h5 (a folder of shards), "
                                          "tokenizer.model (SentencePiece, Llama), or vocab.json + merges.txt "
                                          "(GPT-2)",
                                          dir));
}

}  // namespace

std::shared_ptr<const data::Tokenizer> read_tokenizer_of(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return tokenizer_in_folder(path);
  if (looks_like_hdf5(path)) return read_tokenizer_file(path);
  try {
    return io::read_sentencepiece_file(path);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format("'{}' holds no tokenizer: it is not a tinygpt checkpoint or tokenizer "
                                            "file, nor a SentencePiece model that the SentencePiece library loads",
                                            path));
  }
}

}  // namespace tinygpt::train
