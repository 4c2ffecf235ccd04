#include "detail/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "../data/utf8.h"

namespace tinygpt::inspect {

std::string xml_escape(std::string_view bytes) {
  const std::string text = data::sanitize_utf8(bytes);  // a well-formed document is UTF-8 throughout
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and return.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += "\xEF\xBF\xBD";
        else out += c;
    }
  }
  return out;
}

Svg::Svg(double width, double height) : width_(width), height_(height) {}

void Svg::rect(double x, double y, double w, double h, const std::string& fill, const std::string& attrs,
               std::string_view title) {
  body_ += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"{}{}", x, y, w, h, fill,
                       attrs.empty() ? "" : " ", attrs);
  body_ += title.empty() ? "/>\n" : fmt::format("><title>{}</title></rect>\n", xml_escape(title));
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& stroke, double width) {
  body_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
                       x1, y1, x2, y2, stroke, width);
}

void Svg::polyline(const std::string& points, const std::string& stroke, double width, const std::string& attrs) {
  body_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}{}/>\n", points,
                       stroke, width, attrs.empty() ? "" : " ", attrs);
}

void Svg::circle(double cx, double cy, double r, const std::string& fill, const std::string& attrs) {
  body_ += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"{}{}/>\n", cx, cy, r, fill,
                       attrs.empty() ? "" : " ", attrs);
}

void Svg::text(double x, double y, std::string_view content, double size, const std::string& anchor, double rotate,
               const std::string& attrs) {
  const std::string transform = rotate != 0 ? fmt::format(" transform=\"rotate({} {:.1f} {:.1f})\"", rotate, x, y) : "";
  body_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"{}\"{}{}{}>{}</text>\n", x, y,
                       size, anchor, transform, attrs.empty() ? "" : " ", attrs, xml_escape(content));
}

std::string Svg::str() const {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"DejaVu Sans, Noto Sans CJK KR, sans-serif\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"white\"/>\n{}</svg>\n",
      width_, height_, width_, height_, width_, height_, body_);
}

namespace {

// Linear between the stops, as explain.js's rampRGB, t in [0, 1].
std::string ramp(const unsigned char (&stops)[5][3], double t) {
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  const auto at = [&](int k) { return static_cast<int>(std::lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]))); };
  return fmt::format("#{:02x}{:02x}{:02x}", at(0), at(1), at(2));
}

}  // namespace

std::string heat_color(double t) { return ramp(kViridis, t); }

std::string signed_color(double t) { return ramp(kDiverging, (std::clamp(t, -1.0, 1.0) + 1) / 2); }

}  // namespace tinygpt::inspect
