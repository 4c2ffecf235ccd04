#pragma once
// A small SVG 1.1 writer: enough shapes for heatmaps and line plots, text escaped for XML.
#include <string>
#include <string_view>

namespace tinygpt::inspect {

std::string xml_escape(std::string_view text);

class Svg {
 public:
  Svg(double width, double height);
  // attrs: extra attributes, already formatted (e.g. `class="cell"`); all coordinates in pixels.
  // title: a tooltip a browser shows on hover (plain text; escaped here).
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& attrs = "",
            std::string_view title = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1);
  void polyline(const std::string& points, const std::string& stroke, double width = 1.5, const std::string& attrs = "");
  void circle(double cx, double cy, double r, const std::string& fill, const std::string& attrs = "");
  // anchor: start, middle or end; rotate: degrees about (x, y).
  void text(double x, double y, std::string_view content, double size = 11, const std::string& anchor = "start",
            double rotate = 0, const std::string& attrs = "");
  std::string str() const;  // the whole document

 private:
  double width_, height_;
  std::string body_;
};

// #rrggbb on a white -> dark blue ramp for t in [0, 1].
std::string heat_color(double t);

}  // namespace tinygpt::inspect
