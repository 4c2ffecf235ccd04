#include "plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "../io/output_files.h"
#include "../io/run_metrics.h"
#include "detail/svg.h"

namespace tinygpt::inspect {

namespace {

// Round tick positions covering [lo, hi]: steps of 1, 2 or 5 times a power of ten (none when the
// range is too narrow for doubles to step through).
std::vector<double> ticks(double lo, double hi, int wanted = 6) {
  const double raw = (hi - lo) / wanted, base = std::pow(10.0, std::floor(std::log10(raw)));
  double step = base;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (base * m >= raw) {
      step = base * m;
      break;
    }
  std::vector<double> out;
  if (!(step > 0) || !std::isfinite(step) || lo + step == lo) return out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9 && out.size() < static_cast<size_t>(4 * wanted); t += step)
    out.push_back(t);
  return out;
}

// One panel: axes, ticks, labels, and a mapping from data to pixels.
struct Panel {
  double x0, y0, w, h, xmin, xmax, ymin, ymax;
  // In halves: no difference of two doubles overflows.
  double px(double x) const { return x0 + (x / 2 - xmin / 2) / (xmax / 2 - xmin / 2) * w; }
  double py(double y) const { return y0 + h - (y / 2 - ymin / 2) / (ymax / 2 - ymin / 2) * h; }
  void axes(Svg& svg, const std::string& xlabel, const std::string& ylabel) const {
    svg.rect(x0, y0, w, h, "none", "stroke=\"#444444\"");
    for (double t : ticks(xmin, xmax)) {
      svg.line(px(t), y0 + h, px(t), y0 + h + 4, "#444444");
      svg.text(px(t), y0 + h + 16, fmt::format("{:g}", t + 0.0), 10, "middle");  // + 0.0: no "-0"
    }
    for (double t : ticks(ymin, ymax)) {
      svg.line(x0 - 4, py(t), x0, py(t), "#444444");
      svg.line(x0, py(t), x0 + w, py(t), "#eeeeee");
      svg.text(x0 - 7, py(t) + 3, fmt::format("{:g}", t + 0.0), 10, "end");
    }
    svg.text(x0 + w / 2, y0 + h + 32, xlabel, 11, "middle");
    svg.text(x0 - 45, y0 + h / 2, ylabel, 11, "middle", -90);
  }
};

// The values' range, padded by 5% on each side; [0, 1] for none (a log whose every step was skipped).
// Computed in halves and kept within the doubles, so that losses near 1e308 still give finite axes.
std::pair<double, double> padded_range(const std::vector<double>& v) {
  if (v.empty()) return {0.0, 1.0};
  constexpr double kMost = std::numeric_limits<double>::max();
  double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  if (!(hi / 2 - lo / 2 > std::abs(lo) * 1e-12 + 5e-13)) {  // one value, or too close to tell apart
    const double widen = std::max(0.5, std::abs(lo) * 1e-6);
    lo = std::max(lo - widen, -kMost), hi = std::min(hi + widen, kMost);
  }
  const double pad = (hi / 2 - lo / 2) * 0.1;
  return {std::max(lo - pad, -kMost), std::min(hi + pad, kMost)};
}

}  // namespace

std::string loss_plot_svg(const std::vector<RunCurves>& runs, const std::string& title) {
  size_t longest = 10;  // legend labels: "<name> validation"
  for (const auto& run : runs) longest = std::max(longest, run.name.size() + 11);
  const double left = 80, plot_w = 600, W = std::max(800.0, left + plot_w + 50 + 6.5 * static_cast<double>(longest));
  // The gradient's norm (log10) when the logs keep it, between the losses and the speed.
  std::vector<double> norms;
  for (const auto& run : runs)
    for (const auto& r : run.rows)
      if (r.step && r.step->grad_norm > 0 && std::isfinite(r.step->grad_norm)) norms.push_back(std::log10(r.step->grad_norm));
  const double grad_h = norms.empty() ? 0 : 180;
  Svg svg(W, 620 + grad_h);
  svg.text(left, 26, title, 14, "start", 0, "font-weight=\"bold\"");
  std::vector<double> iters, losses, speeds;
  for (const auto& run : runs)
    for (const auto& r : run.rows) {
      iters.push_back(static_cast<double>(r.iter));
      if (std::isfinite(r.train_loss)) losses.push_back(r.train_loss);  // a skipped step's may not be
      if (r.val_loss) losses.push_back(*r.val_loss);
      speeds.push_back(r.tokens_per_s);
    }
  const double first = *std::min_element(iters.begin(), iters.end()), last = *std::max_element(iters.begin(), iters.end());
  const double xmin = std::min(0.0, first), xmax = std::max(last, xmin + 1);
  const auto [lmin, lmax] = padded_range(losses);
  const auto [smin, smax] = padded_range(speeds);
  const Panel loss{left, 50, plot_w, 330, xmin, xmax, lmin, lmax};
  const Panel speed{left, 450 + grad_h, plot_w, 120, xmin, xmax, std::max(0.0, smin), smax};
  loss.axes(svg, "iteration", "loss");
  if (losses.empty()) svg.text(left + plot_w / 2, 50 + 330 / 2, "no finite loss in the log: every step was skipped", 12, "middle");
  speed.axes(svg, "iteration", "tokens/s");
  const auto [gmin, gmax] = norms.empty() ? std::pair{0.0, 1.0} : padded_range(norms);
  const Panel grad{left, 450, plot_w, 120, xmin, xmax, gmin, gmax};
  if (!norms.empty()) grad.axes(svg, "iteration", "log10 gradient norm");
  // train, validation and speed colours of each run, in turn
  static constexpr const char* kColours[][3] = {{"#6baed6", "#d94801", "#41ab5d"}, {"#9e9ac8", "#54278f", "#969696"},
                                                {"#fd8d3c", "#a50f15", "#fdae6b"}};
  double legend_y = 62;
  for (size_t k = 0; k < runs.size(); ++k) {
    const auto& colour = kColours[k % 3];
    std::string train_pts, val_pts, speed_pts;
    for (const auto& r : runs[k].rows) {
      const double x = static_cast<double>(r.iter);
      if (std::isfinite(r.train_loss)) train_pts += fmt::format("{:.1f},{:.1f} ", loss.px(x), loss.py(r.train_loss));
      speed_pts += fmt::format("{:.1f},{:.1f} ", speed.px(x), speed.py(r.tokens_per_s));
      if (r.val_loss) val_pts += fmt::format("{:.1f},{:.1f} ", loss.px(x), loss.py(*r.val_loss));
    }
    svg.polyline(train_pts, colour[0], 1, "class=\"train\"");
    const std::string dashes = k % 2 ? " stroke-dasharray=\"6,4\"" : "";  // a second run's line shows the first's beneath
    if (!val_pts.empty()) svg.polyline(val_pts, colour[1], 2, "class=\"val-line\"" + dashes);
    for (const auto& r : runs[k].rows)
      if (r.val_loss) svg.circle(loss.px(static_cast<double>(r.iter)), loss.py(*r.val_loss), 3.5, colour[1], "class=\"val\"");
    svg.polyline(speed_pts, colour[2], 1, "class=\"speed\"");
    // The norm before clipping; a dot where it was clipped, a red ring where the step was skipped.
    std::string grad_pts;
    for (const auto& r : runs[k].rows) {
      if (!r.step || !(r.step->grad_norm > 0) || !std::isfinite(r.step->grad_norm)) continue;
      const double x = grad.px(static_cast<double>(r.iter)), y = grad.py(std::log10(r.step->grad_norm));
      grad_pts += fmt::format("{:.1f},{:.1f} ", x, y);
      if (r.step->skipped) svg.circle(x, y, 4, "#cb181d", "class=\"skipped\"");
      else if (r.step->clip_scale < 1) svg.circle(x, y, 1.5, colour[0], "class=\"clipped\"");
    }
    if (!grad_pts.empty()) svg.polyline(grad_pts, colour[0], 1, "class=\"grad\"");
    const std::string name = runs[k].name.empty() ? "" : runs[k].name + " ";
    for (int curve = 0; curve < 2; ++curve, legend_y += 18) {
      svg.line(left + plot_w + 15, legend_y, left + plot_w + 35, legend_y, colour[curve], 2);
      svg.text(left + plot_w + 40, legend_y + 4, name + (curve == 0 ? "train" : "validation"), 11);
    }
  }
  return svg.str();
}

void write_loss_plot(const std::vector<std::string>& logs, const std::string& svg_path) {
  std::vector<RunCurves> runs;
  for (const std::string& log : logs) {
    std::string name = log.substr(log.find_last_of('/') + 1);
    if (name.size() > 4 && name.ends_with(".csv")) name.resize(name.size() - 4);
    if (name.size() > 6 && name.ends_with(".jsonl")) name.resize(name.size() - 6);
    runs.push_back({logs.size() > 1 ? name : "", log.ends_with(".jsonl") ? io::read_metrics(log) : io::read_log(log)});
  }
  io::write_output_file(svg_path, io::OutputKind::svg, loss_plot_svg(runs, logs.size() > 1 ? "" : logs.front()));
}

}  // namespace tinygpt::inspect
