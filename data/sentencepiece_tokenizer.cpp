#include "sentencepiece_tokenizer.h"

#include <fmt/format.h>
#include <sentencepiece_processor.h>

#include <stdexcept>

#include "detail/sentencepiece_spec.h"
#include "tokenizer_record.h"
#include "utf8.h"

namespace tinygpt::data {

struct SentencePieceTokenizer::Processor {
  sentencepiece::SentencePieceProcessor sp;
};

SentencePieceTokenizer::SentencePieceTokenizer(std::string model_proto, const std::string& where)
    : model_proto_(std::move(model_proto)), processor_(std::make_unique<Processor>()) {
  if (model_proto_.size() > kMaxModelBytes)
    throw std::invalid_argument(fmt::format("{}: a SentencePiece model of {} bytes, more than {} MB", where,
                                            model_proto_.size(), kMaxModelBytes >> 20));
  // The fields and character maps the library would follow unchecked, before it reads them.
  const detail::SentencePieceSpec spec = detail::read_sentencepiece_spec(model_proto_, where);
  cuts_at_spaces_ = spec.cuts_at_spaces;
  cuts_change_nothing_ = spec.cuts_at_spaces && spec.model_type != detail::kUnigramModel;
  const auto status = processor_->sp.LoadFromSerializedProto(model_proto_);
  if (!status.ok())
    throw std::invalid_argument(fmt::format("{} is not a SentencePiece model: {}", where, status.message()));
  if (processor_->sp.GetPieceSize() <= 0)
    throw std::invalid_argument(fmt::format("{} is not a SentencePiece model: it has no pieces", where));
  unk_id_ = processor_->sp.unk_id();  // the library looks it up by name on every call
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

int64_t SentencePieceTokenizer::vocab_size() const { return processor_->sp.GetPieceSize(); }

int32_t SentencePieceTokenizer::bos_id() const { return processor_->sp.bos_id(); }
int32_t SentencePieceTokenizer::eos_id() const { return processor_->sp.eos_id(); }

std::optional<int32_t> SentencePieceTokenizer::document_token() const {
  const int32_t bos = bos_id();
  if (bos >= 0 && bos < vocab_size()) return bos;
  return std::nullopt;
}

std::string SentencePieceTokenizer::piece(int32_t id) const {
  check_id(id);
  return processor_->sp.IdToPiece(id);
}

float SentencePieceTokenizer::score(int32_t id) const {
  check_id(id);
  return processor_->sp.GetScore(id);
}

void SentencePieceTokenizer::encode(std::string_view text, std::vector<int32_t>& out, std::string_view where) const {
  if (size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
    throw std::invalid_argument(fmt::format("{} is not valid UTF-8 at byte offset {}", where, bad));
  std::vector<int> ids;
  const auto status = processor_->sp.Encode(text, &ids);
  if (!status.ok()) throw std::invalid_argument(fmt::format("SentencePiece cannot encode {}: {}", where, status.message()));
  out.insert(out.end(), ids.begin(), ids.end());
}

std::string SentencePieceTokenizer::decode(std::span<const int32_t> ids) const {
  for (int32_t id : ids) check_id(id);
  std::string text;
  const auto status = processor_->sp.Decode(std::vector<int>(ids.begin(), ids.end()), &text);
  if (!status.ok()) throw std::invalid_argument(fmt::format("SentencePiece cannot decode: {}", status.message()));
  return sanitize_utf8(text);
}

std::string SentencePieceTokenizer::token_bytes(int32_t id) const {
  check_id(id);
  const sentencepiece::SentencePieceProcessor& sp = processor_->sp;
  if (sp.IsControl(id)) return "";
  const std::string& piece = sp.IdToPiece(id);
  if (sp.IsByte(id) && piece.size() == 6) return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));  // "<0xAB>"
  if (sp.IsUnknown(id)) return " \xE2\x81\x87 ";  // what SentencePiece decodes it to: " ⁇ "
  return with_spaces(piece);
}

std::string SentencePieceTokenizer::first_token_bytes(int32_t id) const {
  std::string bytes = token_bytes(id);
  const std::string alone = decode(std::span(&id, 1));  // the library's own rule for a text's start
  if (bytes.size() == alone.size() + 1 && bytes.front() == ' ' && bytes.ends_with(alone)) bytes.erase(0, 1);
  return bytes;
}

std::string SentencePieceTokenizer::with_spaces(std::string piece) {
  for (size_t at; (at = piece.find("\xE2\x96\x81")) != std::string::npos;) piece.replace(at, 3, " ");
  return piece;
}

TokenizerRecord SentencePieceTokenizer::record() const { return {.kind = kind(), .model_proto = model_proto_}; }

}  // namespace tinygpt::data
