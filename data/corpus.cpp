#include "corpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_pipeline.h>

#include "../autograd/threads.h"
#include "bpe_tokenizer.h"
#include "char_tokenizer.h"
#include "detail/word_memory.h"
#include "sentencepiece_tokenizer.h"
#include "text_files.h"
#include "utf8.h"

namespace tinygpt::data {

namespace {
// Where a file is cut into blocks, by the fixed rule docs/data-format.md gives. A
// SentencePiece model prefixes each text with "▁": a file is cut only before a space the model's
// dummy prefix stands for (SentencePieceTokenizer::cuts_at_spaces), or not at all.
BlockCut cut_for(const Tokenizer& t) {
  if (const auto* bpe = dynamic_cast<const BpeTokenizer*>(&t))
    return bpe->split() == Split::gpt2 ? BlockCut::chunk_safe : BlockCut::whole_file;
  if (const auto* sp = dynamic_cast<const SentencePieceTokenizer*>(&t))
    return sp->cuts_at_spaces() ? BlockCut::before_space : BlockCut::whole_file;
  return BlockCut::anywhere;
}

}  // namespace

std::shared_ptr<const Tokenizer> make_tokenizer(const CorpusOptions& o, int64_t bpe_sample_bytes,
                                                const TokenizerProgress& progress) {
  int64_t seen = 0;
  auto read = [&](std::string_view text) {
    seen += static_cast<int64_t>(text.size());
    if (progress.read) progress.read(seen);
  };
  if (o.tokenizer == TokenizerKind::chars) {  // the validation text's characters belong in the vocabulary too
    CharVocabulary vocab;
    std::vector<std::string> all = o.files;
    all.insert(all.end(), o.val_files.begin(), o.val_files.end());
    for (const auto& f : all)
      for_each_block(f, BlockCut::anywhere, [&](std::string_view text, int64_t, int64_t) { vocab.add(text), read(text); });
    return std::make_shared<CharTokenizer>(vocab.code_points());
  }
  if (o.tokenizer == TokenizerKind::bpe) {
    const Split split = o.split;
    BpeTrainer trainer(split);
    for (const auto& f : o.files) {
      if (bpe_sample_bytes > 0 && seen >= bpe_sample_bytes) break;
      for_each_block(f, split == Split::gpt2 ? BlockCut::chunk_safe : BlockCut::whole_file,
                     [&](std::string_view text, int64_t, int64_t) {
                       if (bpe_sample_bytes > 0 && seen >= bpe_sample_bytes) return;
                       trainer.add(text);
                       read(text);
                     });
    }
    return std::make_shared<BpeTokenizer>(trainer.train(o.vocab_size, progress.merged), split);
  }
  // sentencepiece: a model file's (io::read_sentencepiece_file)
  throw std::invalid_argument("a SentencePiece tokenizer is read from its model file, not made from the text");
}

namespace {

// A block of text on its way through the pipeline: read, encoded, delivered.
struct Piece {
  size_t file = 0;
  TextBlock block;
  std::vector<int32_t> ids;
  std::exception_ptr error;  // reading or encoding failed: delivered (thrown) in its turn
};

// The block's ids; an unknown character is placed in its file, not in the block. A block cut
// before a space is encoded without it: the dummy prefix SentencePiece adds stands for it.
// by_words, words: the tokenizer and the encoding thread's memory of words, where it remembers
// words (else null).
void encode_piece(const Tokenizer& tokenizer, BlockCut cut, const std::string& path, Piece& p,
                  const SentencePieceTokenizer* by_words, detail::WordMemory* words) {
  p.ids.clear();
  std::string_view text = p.block.text;
  if (cut == BlockCut::before_space && p.block.byte_offset > 0) text.remove_prefix(1);
  try {
    if (by_words) words->encode(*by_words, text, p.ids, path);
    else tokenizer.encode(text, p.ids, path);
  } catch (const UnknownCharacter& e) {
    const TextPosition at = position_of(p.block.text, e.offset);
    throw std::invalid_argument(fmt::format("'{}': {} at line {}, column {} is not in the character vocabulary", path,
                                            describe_code_point(e.code_point), at.line + p.block.line_offset,
                                            at.column));
  }
}

// The files' blocks one after another, each block read into a free Piece.
class BlockSource {
 public:
  BlockSource(const Tokenizer& tokenizer, const std::vector<std::string>& files) : cut_(cut_for(tokenizer)), files_(files) {}
  BlockCut cut() const { return cut_; }
  // False once every file is read or an error was handed on.
  bool fill(Piece& p) {
    if (failed_) return false;
    try {
      while (file_ < files_.size()) {
        if (!blocks_)
          blocks_.emplace(files_[file_], cut_, cut_ == BlockCut::before_space ? kSentencePieceBlockBytes : kBlockBytes);
        if (blocks_->next(p.block)) {
          p.file = file_, p.error = nullptr;
          return true;
        }
        blocks_.reset();
        ++file_;
      }
      return false;
    } catch (...) {
      failed_ = true, p.error = std::current_exception();
      return true;
    }
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;  // small enough that every thread gets blocks of a 10 MB file
  static constexpr size_t kSentencePieceBlockBytes = size_t{1} << 13;  // a BPE heap or unigram lattice stays in cache: docs/performance.md
  BlockCut cut_;
  const std::vector<std::string>& files_;
  size_t file_ = 0;
  std::optional<TextBlocks> blocks_;
  bool failed_ = false;
};

}  // namespace

void tokenize_in_order(const Tokenizer& tokenizer, const std::vector<std::string>& files,
                       const std::function<void(size_t file, std::span<const int32_t> ids, size_t bytes)>& deliver) {
  // Read in order, encode in parallel, deliver in order: no thread waits for a group of blocks to
  // finish, and the ids are the same for any number of threads. Pieces leave in the order they
  // came, so the piece n places back is free when a new one is read.
  const size_t in_flight = 4 * static_cast<size_t>(std::max(1, num_threads()));
  std::vector<Piece> pieces(in_flight);
  size_t next_piece = 0;
  BlockSource source(tokenizer, files);
  const auto* sentencepiece = dynamic_cast<const SentencePieceTokenizer*>(&tokenizer);
  // Where a block's words may be encoded one by one, each remembered (detail::WordMemory).
  const SentencePieceTokenizer* by_words = sentencepiece && sentencepiece->cuts_change_nothing() ? sentencepiece : nullptr;
  // SentencePiece makes a run of unknown pieces one, across a cut too: a block that starts with
  // an unknown piece after one that ended with one gives that id once.
  const int32_t unknown = sentencepiece ? sentencepiece->unk_id() : -1;
  bool ended_unknown = false;  // the file's ids so far end with the unknown piece
  tbb::enumerable_thread_specific<detail::WordMemory> memories;  // one per encoding thread
  const std::optional<int32_t> document = tokenizer.document_token();
  constexpr size_t kNone = ~size_t{0};
  size_t current = kNone;  // the file whose blocks are being delivered
  tbb::parallel_pipeline(
      in_flight,
      tbb::make_filter<void, Piece*>(tbb::filter_mode::serial_in_order,
                                     [&](tbb::flow_control& fc) -> Piece* {
                                       Piece& p = pieces[next_piece++ % in_flight];
                                       if (!source.fill(p)) fc.stop();
                                       return &p;
                                     }) &
          tbb::make_filter<Piece*, Piece*>(tbb::filter_mode::parallel,
                                           [&](Piece* p) {
                                             if (!p->error) try {
                                                 encode_piece(tokenizer, source.cut(), files[p->file], *p,
                                                              by_words, by_words ? &memories.local() : nullptr);
                                               } catch (...) {
                                                 p->error = std::current_exception();
                                               }
                                             return p;
                                           }) &
          tbb::make_filter<Piece*, void>(tbb::filter_mode::serial_in_order, [&](Piece* p) {
            if (p->error) std::rethrow_exception(p->error);  // the first error in file order
            if (p->file != current) {  // a new document: after the one before it, the document token
              if (document && current != kNone) deliver(p->file, std::span<const int32_t>(&*document, 1), 0);
              current = p->file, ended_unknown = false;
            }
            std::span<const int32_t> ids = p->ids;
            if (ended_unknown && !ids.empty() && ids.front() == unknown) ids = ids.subspan(1);
            if (!ids.empty()) ended_unknown = unknown >= 0 && ids.back() == unknown;
            deliver(p->file, ids, p->block.text.size());
          }));
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
