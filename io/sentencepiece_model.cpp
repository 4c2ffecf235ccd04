#include "sentencepiece_model.h"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

#include "../data/input_file.h"
#include "detail/isolated.h"

namespace tinygpt::io {

namespace {
constexpr std::chrono::milliseconds kTrialLimit{20000};  // loading Llama's model takes milliseconds
constexpr int64_t kTrialMemory = int64_t{2} << 30;       // a model of kMaxModelBytes unpacks into a few times that
}  // namespace

std::shared_ptr<const data::SentencePieceTokenizer> load_sentencepiece(std::string model_proto, const std::string& where) {
  // In the child: load, encode text with every kind of character, decode every id.
  const ChildEnd trial = run_in_child(
      [&] {
        const data::SentencePieceTokenizer t(model_proto, where);
        const std::vector<int32_t> ids = t.encode("Hello, world! 0123 \t\n 나는 ü 🙂 \xE2\x96\x81 <s> </s>");
        (void)t.decode(ids);
        for (int32_t id = 0; id < t.vocab_size(); ++id) (void)t.token_bytes(id);
      },
      kTrialLimit, kTrialMemory);
  if (trial.how == ChildEnd::How::threw) throw std::invalid_argument(trial.message);
  if (trial.how != ChildEnd::How::returned)
    throw std::invalid_argument(fmt::format("{}: the SentencePiece library {} on this model (tried in a child process)",
                                            where, trial.describe()));
  return std::make_shared<data::SentencePieceTokenizer>(std::move(model_proto), where);
}

std::shared_ptr<const data::SentencePieceTokenizer> read_sentencepiece_file(const std::string& path) {
  data::InputFile in(path, "tokenizer model");
  const data::FileBytes bytes = in.read_all(static_cast<int64_t>(data::SentencePieceTokenizer::kMaxModelBytes));
  return load_sentencepiece(std::string(bytes.view()), fmt::format("tokenizer model '{}'", path));
}

}  // namespace tinygpt::io
