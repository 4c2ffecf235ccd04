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

// The one colour language of every picture and of the page (inspect/page/explain.js holds the same
// stops, which a test compares): weights and other values in [0, 1] on viridis (sequential,
// colour-blind safe); signed values on a blue (negative) - white (0) - red (positive) ramp.
inline constexpr unsigned char kViridis[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
inline constexpr unsigned char kDiverging[5][3] = {
    {33, 102, 172}, {103, 169, 207}, {247, 247, 247}, {244, 165, 96}, {178, 24, 43}};
std::string heat_color(double t);    // #rrggbb on viridis, t in [0, 1]
std::string signed_color(double t);  // #rrggbb on the diverging ramp, t in [-1, 1]

}  // namespace tinygpt::inspect
