#include "log_files.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "../io/output_files.h"
#include "../io/run_log.h"
#include "../io/run_metrics.h"

namespace tinygpt::train {

namespace {

std::string with_header(const char* header, const std::vector<std::string>& lines) {
  std::string text = std::string(header) + "\n";
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// Appends a line to a file opened by LogFiles, or throws naming it.
void append_line(std::ofstream& file, const std::string& path, const std::string& line) {
  file << line << '\n';
  if (!file.flush()) throw std::runtime_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
}

}  // namespace

void start_log_files(const std::string& log, const std::vector<std::string>& rows, const std::string& metrics,
                     const std::vector<std::string>& lines) {
  io::write_output_file(log, io::OutputKind::log, with_header(io::kLogHeader, rows));
  io::write_output_file(metrics, io::OutputKind::metrics, with_header(io::kMetricsHeader, lines));
}

LogFiles::LogFiles(std::string log, std::string metrics) : log_path_(std::move(log)), metrics_path_(std::move(metrics)) {
  open();
}

void LogFiles::open() {
  for (auto [file, path, what] : {std::tuple{&log_, &log_path_, "log"}, std::tuple{&metrics_, &metrics_path_, "metrics"}}) {
    file->close();
    file->open(*path, std::ios::app);
    if (!*file) throw std::runtime_error(fmt::format("cannot write the {} '{}': {}", what, *path, std::strerror(errno)));
  }
}

void LogFiles::step(const StepReport& r) {
  append_line(log_, log_path_, io::format_log_row(r.row));
  append_line(metrics_, metrics_path_, io::step_json(r.row));
}

void LogFiles::evaluation(const EvaluationReport& e) {
  if (e.late) {  // the log is written anew (replaced whole), and opened again to append
    std::vector<std::string> rows;
    for (io::LogLine& line : io::read_log_lines(log_path_)) {
      if (line.row.iter == e.iteration) line.row.val_loss = e.val_loss, line.row.task = e.task;
      rows.push_back(io::format_log_row(line.row));
    }
    io::write_output_file(log_path_, io::OutputKind::log, with_header(io::kLogHeader, rows));
    open();
  }
  append_line(metrics_, metrics_path_, io::eval_json(e.iteration, e.val_loss, e.task));
}

}  // namespace tinygpt::train
