#pragma once
// The /tokenizer group of tinygpt's HDF5 files (a checkpoint; a shard folder's tokenizer.h5), as
// docs/checkpoint-format.md lays it out: the kind, the digest, and the fields of the tokenizer's
// record (data/tokenizer_record.h).
#include <cstdint>
#include <memory>

#include "../data/tokenizer.h"
#include "hdf5_reader.h"
#include "hdf5_writer.h"

namespace tinygpt::io {

// The checkpoint format's versions: 2 adds /tokenizer's byte_ids and special tokens, 3 the Llama
// family's /config fields and SentencePiece tokenizers. A file is written with the lowest version
// that holds what it has.
constexpr int kFormatVersion = 1, kFormatVersionSpecials = 2, kFormatVersionLlama = 3;

// The lowest version whose /tokenizer holds `tokenizer`.
int tokenizer_format_version(const data::Tokenizer& tokenizer);

void write_tokenizer_group(const hdf5::GroupWriter& root, const data::Tokenizer& tokenizer);

// Reads /tokenizer of a file of format `version`, every field checked against its shape and the
// version before the tokenizer is made, and the digest (when the group has one) against it.
std::shared_ptr<const data::Tokenizer> read_tokenizer_group(const hdf5::Reader& r, int64_t version);

}  // namespace tinygpt::io
