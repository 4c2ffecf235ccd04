// tinygpt tokens: how a tokenizer cuts a text, as a table or JSON.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../data/corpus.h"
#include "../data/json.h"
#include "../data/utf8.h"
#include "../inspect/inspect.h"
#include "../train/tokenizer_source.h"
#include "commands.h"

namespace tinygpt::cli {

void add_tokens(CLI::App& app) {
  struct Args {
    std::string ckpt, text, file;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("tokens", "show how a checkpoint's tokenizer cuts text into tokens");
  cmd->add_option("--ckpt", args->ckpt,
                  "what holds the tokenizer: a checkpoint, a tokenizer file, a folder of shards, a Hugging Face folder "
                  "or a SentencePiece model")
      ->required();
  CLI::Option* text = cmd->add_option("--text", args->text, "the text to tokenize");
  CLI::Option* file = cmd->add_option("--file", args->file, "a UTF-8 text file to tokenize");
  text->excludes(file);
  cmd->add_flag("--json", args->json,
                "print one JSON object {\"ids\": [...], \"tokens\": [...]} (each token's text; a piece of a "
                "character as U+FFFD)");
  cmd->callback([args, text, file] {
    if (!text->count() && !file->count()) throw std::invalid_argument("tokens: give --text or --file");
    const auto tokenizer = train::read_tokenizer_of(args->ckpt);
    std::vector<int32_t> ids;  // a file as every command reads one: in blocks (docs/data-format.md)
    if (file->count())
      data::tokenize_in_order(*tokenizer, {args->file}, [&](size_t, std::span<const int32_t> got, size_t) {
        ids.insert(ids.end(), got.begin(), got.end());
      });
    else
      ids = tokenizer->encode(args->text, "the text");
    if (!args->json) {
      fmt::print("{}", inspect::token_table(inspect::token_views(*tokenizer, ids)));
      return;
    }
    std::string tokens;
    for (const int32_t id : ids)
      tokens += (tokens.empty() ? "" : ", ") + data::json::quote(data::sanitize_utf8(tokenizer->token_bytes(id)));
    fmt::print("{{\"ids\": [{}], \"tokens\": [{}]}}\n", fmt::join(ids, ", "), tokens);
  });
}

}  // namespace tinygpt::cli
