#pragma once
// The run's records on disk, as a reporter: each step a row of the CSV log (io/run_log.h) and a line
// of the JSON-lines metrics (io/run_metrics.h), each evaluation a metrics line of its own. An
// evaluation a signal cut short and a resume finished gives the log row it belongs to its scores.
#include <fstream>
#include <string>
#include <vector>

#include "reporter.h"

namespace tinygpt::train {

// Writes the log with its header and `rows`, and the metrics with their header and `lines`, each
// replacing the file that was there (rows and lines as written before, without newlines).
void start_log_files(const std::string& log, const std::vector<std::string>& rows, const std::string& metrics,
                     const std::vector<std::string>& lines);

class LogFiles : public Reporter {
 public:
  LogFiles(std::string log, std::string metrics);  // opens both to append, or throws naming the file
  void step(const StepReport& r) override;
  void evaluation(const EvaluationReport& e) override;

 private:
  void open();
  std::string log_path_, metrics_path_;
  std::ofstream log_, metrics_;
};

}  // namespace tinygpt::train
