#pragma once
// Looking inside a trained model: how text is cut into tokens, and where each token's attention goes.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../data/tokenizer.h"
#include "../nn/gpt.h"

namespace tinygpt::inspect {

struct TokenView {
  int32_t id;
  std::string bytes;  // what the token stands for
  std::string label;  // printable: spaces as ␣, newlines as \n; a piece of a character as <ED 95>
  bool partial;       // the bytes are not whole UTF-8 characters (a byte-level BPE piece)
};
std::vector<TokenView> token_views(const data::Tokenizer& tokenizer, const std::vector<int32_t>& ids);

// The text's token ids, refused when empty or longer than the model's block_size.
std::vector<int32_t> encode_for_model(const nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text);

// A text table in a monospace font: row labels on the left, column labels on top, cell(row, column)
// the cell's text (empty for a blank); each column as wide as its widest entry, trailing blanks cut.
std::string text_table(const std::vector<std::string>& row_labels, const std::vector<std::string>& column_labels,
                       const std::function<std::string(int64_t, int64_t)>& cell);

// Throws, naming the flag and the model's range, when layer or head is not in the model.
void check_layer_and_head(const nn::GPTConfig& config, int64_t layer, int64_t head);
std::vector<std::string> token_labels(const std::vector<TokenView>& tokens);

// `tinygpt tokens`: one line per token (position, id, label), and a note for character pieces.
std::string token_table(const std::vector<TokenView>& tokens);

// The attention weights of every layer and head for one text (at most block_size tokens).
struct AttentionMaps {
  std::vector<TokenView> tokens;
  int64_t layers = 0, heads = 0;
  std::vector<float> weights;  // [layer][head][query][key]
  float at(int64_t layer, int64_t head, int64_t query, int64_t key) const {
    const auto T = static_cast<int64_t>(tokens.size());
    return weights[((layer * heads + head) * T + query) * T + key];
  }
};
AttentionMaps attention_maps(nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text);

// The matrix as a text table: tokens label the rows (queries) and columns (keys), weights to two
// decimals, the masked future blank.
std::string attention_table(const AttentionMaps& maps, int64_t layer, int64_t head);

// One self-contained SVG heatmap: a panel per head of `layer`, or a layers x heads grid.
std::string attention_svg(const AttentionMaps& maps, std::optional<int64_t> layer);

}  // namespace tinygpt::inspect
