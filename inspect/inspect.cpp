#include "inspect.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "../autograd/graph.h"
#include "../data/utf8.h"
#include "detail/svg.h"

namespace tinygpt::inspect {

namespace {

std::string printable(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    const size_t start = i;
    const int32_t cp = data::next_code_point(bytes, i);
    if (cp == ' ') out += "␣";
    else if (cp == '\n') out += "\\n";
    else if (cp == '\t') out += "\\t";
    else if (cp >= 0 && (cp < 0x20 || cp == 0x7F)) out += fmt::format("\\x{:02X}", cp);
    else out.append(bytes.substr(start, i - start));
  }
  return out;
}

bool whole_characters(std::string_view bytes) { return data::find_invalid_utf8(bytes) == std::string_view::npos; }

std::string hex_bytes(std::string_view bytes) {
  std::string out = "<";
  for (size_t i = 0; i < bytes.size(); ++i) out += fmt::format("{}{:02X}", i ? " " : "", static_cast<uint8_t>(bytes[i]));
  return out + ">";
}

// Columns a code point takes in a terminal: 2 for the East Asian wide and fullwidth blocks (Hangul,
// CJK, kana, fullwidth forms, most emoji), 1 otherwise.
size_t columns(int32_t cp) {
  static constexpr std::pair<int32_t, int32_t> kWide[] = {
      {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
      {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE30, 0xFE4F},
      {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD}};
  for (const auto& [first, last] : kWide)
    if (cp >= first && cp <= last) return 2;
  return 1;
}

// Display width of a label in a monospace table.
size_t width(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    const int32_t cp = data::next_code_point(s, i);
    n += cp >= 0 ? columns(cp) : (++i, 1);
  }
  return n;
}

std::string pad(const std::string& s, size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); }

}  // namespace

std::vector<TokenView> token_views(const data::Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  std::vector<TokenView> views;
  for (int32_t id : ids) {
    const std::string bytes = tokenizer.token_bytes(id);
    const bool partial = !whole_characters(bytes);
    views.push_back({id, bytes, partial ? hex_bytes(bytes) : printable(bytes), partial});
  }
  return views;
}

std::string token_table(const std::vector<TokenView>& tokens) {
  std::string out = fmt::format("{} tokens\n{:>5}  {:>6}  {}\n", tokens.size(), "pos", "id", "token");
  for (size_t i = 0; i < tokens.size(); ++i) {
    out += fmt::format("{:>5}  {:>6}  {}", i, tokens[i].id, tokens[i].label);
    if (tokens[i].partial) out += "   (bytes of a character split across tokens)";
    out += "\n";
  }
  return out;
}

std::vector<int32_t> encode_for_model(const nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text) {
  std::vector<int32_t> ids = tokenizer.encode(text, "the text");
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T == 0) throw std::invalid_argument("the text is empty");
  if (T > model.config().block_size)
    throw std::invalid_argument(fmt::format("the text is {} tokens long; the model sees at most block_size {}", T,
                                            model.config().block_size));
  return ids;
}

std::string text_table(const std::vector<std::string>& row_labels, const std::vector<std::string>& column_labels,
                       const std::function<std::string(int64_t, int64_t)>& cell) {
  const auto rows = static_cast<int64_t>(row_labels.size()), cols = static_cast<int64_t>(column_labels.size());
  std::vector<std::vector<std::string>> cells(rows);
  size_t row_w = 0;
  std::vector<size_t> col_w(cols);
  for (int64_t j = 0; j < cols; ++j) col_w[j] = width(column_labels[j]);
  for (int64_t i = 0; i < rows; ++i) {
    row_w = std::max(row_w, width(row_labels[i]));
    for (int64_t j = 0; j < cols; ++j) col_w[j] = std::max(col_w[j], width(cells[i].emplace_back(cell(i, j))));
  }
  auto line = [&](const std::string& label, auto&& text_of) {
    std::string out = pad(label, row_w);
    for (int64_t j = 0; j < cols; ++j) {
      const std::string& text = text_of(j);
      out += " " + std::string(col_w[j] - std::min(col_w[j], width(text)), ' ') + text;  // right-aligned
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line("", [&](int64_t j) -> const std::string& { return column_labels[j]; });
  for (int64_t i = 0; i < rows; ++i) out += line(row_labels[i], [&](int64_t j) -> const std::string& { return cells[i][j]; });
  return out;
}

AttentionMaps attention_maps(nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text) {
  const std::vector<int32_t> ids = encode_for_model(model, tokenizer, text);
  const auto T = static_cast<int64_t>(ids.size());
  NoGradGuard no_grad;
  model.eval();
  model.set_attention_memory(AttentionMemory::weights);
  model.forward(ids, 1, T);
  AttentionMaps maps{token_views(tokenizer, ids), model.config().n_layer, model.config().n_head, {}};
  for (int64_t l = 0; l < maps.layers; ++l) {
    const std::vector<float> w = model.attention_weights(l).to_vector();  // [1, nh, T, T]
    maps.weights.insert(maps.weights.end(), w.begin(), w.end());
  }
  return maps;
}

void check_layer_and_head(const nn::GPTConfig& config, int64_t layer, int64_t head) {
  if (layer < 0 || layer >= config.n_layer)
    throw std::out_of_range(fmt::format("--layer {} is out of range: the model has {} layers (0..{})", layer,
                                        config.n_layer, config.n_layer - 1));
  if (head < 0 || head >= config.n_head)
    throw std::out_of_range(fmt::format("--head {} is out of range: the model has {} heads (0..{})", head,
                                        config.n_head, config.n_head - 1));
}

std::vector<std::string> token_labels(const std::vector<TokenView>& tokens) {
  std::vector<std::string> labels;
  for (const auto& t : tokens) labels.push_back(t.label);
  return labels;
}

std::string attention_table(const AttentionMaps& maps, int64_t layer, int64_t head) {
  check_layer_and_head({.n_layer = maps.layers, .n_head = maps.heads}, layer, head);
  const std::vector<std::string> labels = token_labels(maps.tokens);
  return fmt::format("layer {}, head {}: row = query (the token attending), column = key (attended to)\n", layer,
                     head) +
         text_table(labels, labels, [&](int64_t i, int64_t j) {
           return j <= i ? fmt::format("{:.2f}", maps.at(layer, head, i, j)) : "";  // future: blank
         });
}

std::string attention_svg(const AttentionMaps& maps, std::optional<int64_t> layer) {
  if (layer) check_layer_and_head({.n_layer = maps.layers, .n_head = maps.heads}, *layer, 0);
  const auto T = static_cast<int64_t>(maps.tokens.size());
  const int64_t first = layer ? *layer : 0, rows = layer ? 1 : maps.layers, cols = maps.heads;
  const double cell = std::clamp(360.0 / static_cast<double>(T), 6.0, 28.0), side = cell * static_cast<double>(T);
  const double margin = 70, gap = 30, title = 24;
  const int64_t stride = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(11.0 / cell)));  // thin crowded labels
  const double width = margin + cols * (side + margin + gap) + 60;
  const double height = 40 + rows * (side + margin + title + gap) + 20;
  Svg svg(width, height);
  svg.text(margin, 24, "attention weights: rows are queries, columns are keys; the future (upper right) is masked", 13);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < cols; ++h) {
      const int64_t l = first + r;
      const double x0 = margin + static_cast<double>(h) * (side + margin + gap);
      const double y0 = 40 + title + static_cast<double>(r) * (side + margin + title + gap);
      svg.text(x0, y0 - 8, fmt::format("layer {}, head {}", l, h), 12, "start", 0, "font-weight=\"bold\"");
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
          const bool future = j > i;
          const float w = future ? 0.0f : maps.at(l, h, i, j);
          svg.rect(x0 + static_cast<double>(j) * cell, y0 + static_cast<double>(i) * cell, cell, cell,
                   future ? "#eeeeee" : heat_color(w), fmt::format("class=\"cell\" data-query=\"{}\" data-key=\"{}\"", i, j),
                   fmt::format("{} → {}: {:.3f}", maps.tokens[i].label, maps.tokens[j].label, w));
        }
      for (int64_t t = 0; t < T; t += stride) {
        const double c = static_cast<double>(t) * cell + cell / 2;
        svg.text(x0 - 4, y0 + c + 4, maps.tokens[t].label, std::min(11.0, cell), "end", 0, "class=\"query-label\"");
        svg.text(x0 + c, y0 + side + 6, maps.tokens[t].label, std::min(11.0, cell), "end", -90, "class=\"key-label\"");
      }
    }
  // Colour scale.
  const double sx = width - 45, sy = 40 + title, sh = 160;
  for (int k = 0; k < 20; ++k)
    svg.rect(sx, sy + sh * (1 - (k + 1) / 20.0), 14, sh / 20 + 0.5, heat_color((k + 0.5) / 20.0));
  svg.text(sx + 18, sy + 8, "1.0", 10);
  svg.text(sx + 18, sy + sh, "0.0", 10);
  return svg.str();
}

}  // namespace tinygpt::inspect
