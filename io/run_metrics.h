#pragma once
// The JSON-lines metrics a training run keeps beside its checkpoint (run.jsonl beside run.h5), for
// tools that read per-step metrics (TensorBoard or W&B importers, jq, pandas.read_json(lines=True)).
// The first line names the format; then one object per line:
//   {"type": "step", "iter", "train_loss", "lr", "tokens", "tokens_per_s", "seconds", "grad_norm",
//    "clip_scale", "update_ratio", "update_ratio_by_group": {"embeddings", "attention", "mlp",
//    "norms", "head"}, "peak_share", "skipped"}       after every optimizer step
//   {"type": "eval", "iter", "val_loss"}               after every evaluation, with
//     "task_examples", "task_acc", "task_acc_norm" in a run with a multiple-choice task
// The numbers are the CSV log's (run_log.h), with the same digits; null stands for a group the
// model lacks, or a skipped step's loss or norm that was not finite.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run_log.h"

namespace tinygpt::io {

constexpr const char* kMetricsHeader = R"({"format": "tinygpt run metrics", "version": 1})";

std::string step_json(const LogRow& row);  // row.step must be present
std::string eval_json(int64_t iter, double val_loss, const std::optional<TaskColumns>& task = std::nullopt);

struct MetricsLine {
  int64_t iter;
  std::string text;  // as written
};
// The objects of a metrics file after its header, each with its "iter". A line that is not such an
// object is an error naming the file and line; a last line without its newline is left out.
std::vector<MetricsLine> read_metrics_lines(const std::string& path);

bool is_metrics_header(std::string_view line);

// The file's steps as log rows, each with its evaluation's val_loss, as read_log gives a CSV's.
std::vector<LogRow> read_metrics(const std::string& path);

}  // namespace tinygpt::io
