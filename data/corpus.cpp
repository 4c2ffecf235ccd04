#include "tinygpt/data/corpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "tinygpt/autograd/parallel.h"
#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/text_files.h"
#include "tinygpt/data/utf8.h"

namespace tinygpt::data {

namespace {
BlockCut cut_for(const Tokenizer& t) {
  if (const auto* bpe = dynamic_cast<const BpeTokenizer*>(&t))
    return bpe->split() == Split::gpt2 ? BlockCut::chunk_safe : BlockCut::whole_file;
  return BlockCut::anywhere;
}

}  // namespace

std::shared_ptr<const Tokenizer> make_tokenizer(const CorpusOptions& o, int64_t bpe_sample_bytes) {
  if (o.tokenizer == "char") {  // the validation text's characters belong in the vocabulary too
    CharVocabulary vocab;
    std::vector<std::string> all = o.files;
    all.insert(all.end(), o.val_files.begin(), o.val_files.end());
    for (const auto& f : all)
      for_each_block(f, BlockCut::anywhere, [&](std::string_view text, int64_t, int64_t) { vocab.add(text); });
    return std::make_shared<CharTokenizer>(vocab.code_points());
  }
  if (o.tokenizer == "bpe") {
    const Split split = split_from_name(o.split);
    BpeTrainer trainer(split);
    int64_t seen = 0;
    for (const auto& f : o.files) {
      if (bpe_sample_bytes > 0 && seen >= bpe_sample_bytes) break;
      for_each_block(f, split == Split::gpt2 ? BlockCut::chunk_safe : BlockCut::whole_file,
                     [&](std::string_view text, int64_t, int64_t) {
                       if (bpe_sample_bytes > 0 && seen >= bpe_sample_bytes) return;
                       trainer.add(text);
                       seen += static_cast<int64_t>(text.size());
                     });
    }
    return std::make_shared<BpeTokenizer>(trainer.train(o.vocab_size), split);
  }
  throw std::invalid_argument(fmt::format("unknown tokenizer '{}' (expected char or bpe)", o.tokenizer));
}

namespace {

// A block read from a file, waiting for its turn to be tokenized.
struct PendingBlock {
  size_t file;
  std::string text;
  int64_t line_offset;
};

// The block's ids; an unknown character is placed in its file, not in the block.
void encode_block(const Tokenizer& tokenizer, const PendingBlock& b, const std::string& path, std::vector<int32_t>& ids) {
  try {
    tokenizer.encode(b.text, ids, path);
  } catch (const UnknownCharacter& e) {
    const TextPosition at = position_of(b.text, e.offset);
    throw std::invalid_argument(fmt::format("'{}': {} at line {}, column {} is not in the character vocabulary", path,
                                            describe_code_point(e.code_point), at.line + b.line_offset, at.column));
  }
}

}  // namespace

void tokenize_in_order(const Tokenizer& tokenizer, const std::vector<std::string>& files,
                       const std::function<void(size_t file, std::span<const int32_t> ids, size_t bytes)>& deliver) {
  constexpr size_t kBlockBytes = size_t{1} << 20;  // small enough that every thread gets blocks of a 10 MB file
  const size_t group = 4 * static_cast<size_t>(std::max(1, num_threads()));  // blocks encoded together
  std::vector<PendingBlock> pending;
  std::vector<std::vector<int32_t>> ids;
  auto flush = [&] {
    ids.resize(pending.size());
    std::vector<std::exception_ptr> errors(pending.size());
    parallel_for(static_cast<int64_t>(pending.size()), 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        ids[b].clear();
        try {
          encode_block(tokenizer, pending[b], files[pending[b].file], ids[b]);
        } catch (...) {
          errors[b] = std::current_exception();
        }
      }
    });
    for (size_t b = 0; b < pending.size(); ++b) {  // in file order: the first error is the one reported
      if (errors[b]) std::rethrow_exception(errors[b]);
      deliver(pending[b].file, ids[b], pending[b].text.size());
    }
    pending.clear();
  };
  for (size_t f = 0; f < files.size(); ++f)
    for_each_block(files[f], cut_for(tokenizer), [&](std::string_view text, int64_t, int64_t line_offset) {
      pending.push_back({f, std::string(text), line_offset});
      if (pending.size() == group) flush();
    }, kBlockBytes);
  flush();
}

TokenArray tokenize_files(const Tokenizer& tokenizer, const std::vector<std::string>& files) {
  TokenArray tokens(tokenizer.vocab_size());
  tokenize_in_order(tokenizer, files, [&](size_t, std::span<const int32_t> ids, size_t) { tokens.append(ids); });
  return tokens;
}

int64_t validation_tokens(int64_t tokens, double fraction) {
  return static_cast<int64_t>(static_cast<double>(tokens) * fraction);
}

Corpus load_corpus(const CorpusOptions& o) {
  if (o.files.empty()) throw std::invalid_argument("no training files given");
  return load_corpus(o, make_tokenizer(o));
}

Corpus load_corpus(const CorpusOptions& o, std::shared_ptr<const Tokenizer> tokenizer) {
  Corpus corpus;
  corpus.tokenizer = std::move(tokenizer);
  TokenArray all = tokenize_files(*corpus.tokenizer, o.files);
  if (!o.val_files.empty()) {
    corpus.train = std::move(all);
    corpus.val = tokenize_files(*corpus.tokenizer, o.val_files);
    return corpus;
  }
  if (!(o.val_fraction >= 0.0 && o.val_fraction < 1.0))
    throw std::invalid_argument(fmt::format("validation fraction {} is not in [0, 1)", o.val_fraction));
  const int64_t n_val = validation_tokens(all.size(), o.val_fraction);
  corpus.train = all.slice(0, all.size() - n_val);
  corpus.val = all.slice(all.size() - n_val, all.size());
  return corpus;
}

}  // namespace tinygpt::data
