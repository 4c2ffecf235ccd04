// `tinygpt attention --steps --out steps.svg`: one head's Q, K, V and the five operations on them
// (Q·Kᵀ, ÷√d_k, causal mask, softmax, ·V) as heatmaps, side by side.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "attention_steps.h"
#include "detail/svg.h"

namespace tinygpt::inspect {

namespace {

// signed: on the diverging ramp (detail/svg.h); masked: the same, the future keys (×) grey;
// weights: 0..1 on viridis, the future masked.
enum class PanelKind { signed_values, masked, weights };

struct StepPanel {
  std::string caption, detail;  // a step's formula, and its shape or code
  const std::vector<float>* values;
  int64_t cols;
  PanelKind kind;
  const std::vector<float>* scale_of = nullptr;  // whose largest magnitude ends the colour scale (default: its own)
};

class StepsDrawing {
 public:
  explicit StepsDrawing(const AttentionSteps& s)
      : s_(s), T_(s.size()), cell_(std::clamp(300.0 / static_cast<double>(T_), 8.0, 26.0)),
        label_(std::min(11.0, cell_)), stride_(std::max<int64_t>(1, std::lround(std::ceil(11.0 / cell_)))) {}

  double width(const StepPanel& p) const { return static_cast<double>(p.cols) * column(p); }
  double height() const { return cell_ * static_cast<double>(T_); }

  // The panel with its top-left corner at (x0, y0): caption above, token labels at the left (and
  // below, for keys), a colour scale at the right.
  void draw(Svg& svg, const StepPanel& p, double x0, double y0) const {
    const double cw = column(p);
    float range = 0;
    for (const float v : *(p.scale_of ? p.scale_of : p.values)) range = std::max(range, std::abs(v));
    if (range == 0) range = 1;
    svg.text(x0, y0 - 22, p.caption, 13, "start", 0, "font-weight=\"bold\"");
    svg.text(x0, y0 - 8, p.detail, 10, "start", 0, "fill=\"#555555\"");
    for (int64_t i = 0; i < T_; ++i)
      for (int64_t j = 0; j < p.cols; ++j) {
        const double x = x0 + static_cast<double>(j) * cw, y = y0 + static_cast<double>(i) * cell_;
        const float v = (*p.values)[i * p.cols + j];
        const bool weights = p.kind == PanelKind::weights, masked = p.kind != PanelKind::signed_values && j > i;
        const std::string where =  // every hover names its layer, head, query and key (or token and dimension)
            p.cols == T_ ? fmt::format("layer {}, head {}: query {} {} → key {} {}", s_.layer, s_.head, i, s_.tokens[i].label, j,
                                       s_.tokens[j].label)
                         : fmt::format("layer {}, head {}: token {} {}, dimension {}", s_.layer, s_.head, i, s_.tokens[i].label, j);
        svg.rect(x, y, cw, cell_, masked ? "#e6e6e6" : weights ? heat_color(v) : signed_color(v / range),
                 fmt::format("class=\"cell\" data-row=\"{}\" data-column=\"{}\"", i, j),
                 masked ? where + (weights ? ": masked (weight 0)" : ": masked (-∞)") : fmt::format("{}: {:.4f}", where, v));
        if (masked && cell_ >= 12) svg.text(x + cw / 2, y + cell_ / 2 + 4, "×", label_, "middle", 0, "fill=\"#999999\"");
      }
    for (int64_t t = 0; t < T_; t += stride_) {
      const double c = static_cast<double>(t) * cell_ + cell_ / 2;
      svg.text(x0 - 4, y0 + c + 4, s_.tokens[t].label, label_, "end", 0, "class=\"query-label\"");
      if (p.cols == T_)
        svg.text(x0 + c, y0 + height() + 6, s_.tokens[t].label, label_, "end", -90, "class=\"key-label\"");
    }
    if (p.cols != T_)
      svg.text(x0 + width(p) / 2, y0 + height() + 14, fmt::format("dimensions 0 … {} (d_k = {})", p.cols - 1, p.cols), 10,
               "middle");
    scale(svg, p, x0 + width(p) + 8, y0, range);
  }

  static constexpr double kScaleWidth = 52;

 private:
  double column(const StepPanel& p) const {
    return p.cols == T_ ? cell_ : std::clamp(200.0 / static_cast<double>(p.cols), 3.0, cell_);
  }

  void scale(Svg& svg, const StepPanel& p, double x, double y, float range) const {
    const double h = std::max(60.0, height());
    const bool weights = p.kind == PanelKind::weights;
    for (int k = 0; k < 20; ++k) {
      const double t = (k + 0.5) / 20.0;
      svg.rect(x, y + h * (1 - (k + 1) / 20.0), 10, h / 20 + 0.5, weights ? heat_color(t) : signed_color(2 * t - 1));
    }
    svg.text(x + 13, y + 8, weights ? "1" : fmt::format("{:.3g}", range), 9);
    svg.text(x + 13, y + h, weights ? "0" : fmt::format("{:.3g}", -range), 9);
  }

  const AttentionSteps& s_;
  int64_t T_;
  double cell_, label_;
  int64_t stride_;
};

}  // namespace

std::string attention_steps_svg(const AttentionSteps& s) {
  const int64_t T = s.size(), d = s.d_k;
  const StepsDrawing drawing(s);
  const double root = std::sqrt(static_cast<double>(d));
  const std::vector<std::vector<StepPanel>> rows = {
      {{"Q = ln_1(x) W_q + b_q", fmt::format("queries [{}, {}]", T, d), &s.q, d, PanelKind::signed_values},
       {"K = ln_1(x) W_k + b_k", fmt::format("keys [{}, {}]", T, d), &s.k, d, PanelKind::signed_values},
       {"V = ln_1(x) W_v + b_v", fmt::format("values [{}, {}]", T, d), &s.v, d, PanelKind::signed_values}},
      {{"1. scores = Q·Kᵀ", fmt::format("[{}, {}]: row = query, column = key", T, T), &s.scores, T,
        PanelKind::signed_values},
       {"2. scaled = scores ÷ √d_k", fmt::format("√{} = {:.3f}, on the scores' colour scale", d, root), &s.scaled, T,
        PanelKind::signed_values, &s.scores},
       {"3. masked = causal mask(scaled)", "a key after its query (grey) is -∞", &s.scaled, T, PanelKind::masked,
        &s.scores},
       {"4. weights = softmax(masked)", "rows sum to 1", &s.weights, T, PanelKind::weights},
       {"5. output = weights·V", fmt::format("[{}, {}]", T, d), &s.output, d, PanelKind::signed_values}}};
  const double margin = 80, gap = 40, caption = 40, below = 70;
  double width = 0;
  for (const auto& row : rows) {
    double w = margin;
    for (const auto& p : row) w += drawing.width(p) + StepsDrawing::kScaleWidth + gap + margin / 2;
    width = std::max(width, w);
  }
  const double row_height = caption + std::max(60.0, drawing.height()) + below;
  Svg svg(width, 40 + row_height * static_cast<double>(rows.size()));
  svg.text(margin, 22,
           fmt::format("attention, layer {}, head {}: Q, K, V and the five operations for {} tokens (d_k = {}); rows are queries",
                       s.layer, s.head, T, d),
           14);
  for (size_t r = 0; r < rows.size(); ++r) {
    double x = margin;
    const double y = 40 + caption + static_cast<double>(r) * row_height;
    for (const auto& p : rows[r]) {
      drawing.draw(svg, p, x, y);
      x += drawing.width(p) + StepsDrawing::kScaleWidth + gap + margin / 2;
    }
  }
  return svg.str();
}

}  // namespace tinygpt::inspect
