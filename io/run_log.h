#pragma once
// The CSV log a training run keeps beside its checkpoint: one row per iteration, losses with 9
// significant digits (enough to tell any two floats apart), the validation loss only on rows where
// it was estimated, then the step's statistics (StepColumns), then a task's scores (TaskColumns) on
// evaluation rows of a run that has one.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinygpt::io {

constexpr const char* kLogHeader =
    "iter,train_loss,val_loss,lr,tokens_per_s,seconds,tokens,grad_norm,clip_scale,update_ratio,update_embeddings,"
    "update_attention,update_mlp,update_norms,update_head,peak_share,skipped,task_acc,task_acc_norm";

// The parameter groups whose update-to-weight ratios a log keeps, in its column order.
constexpr std::array<const char*, 5> kUpdateGroups = {"embeddings", "attention", "mlp", "norms", "head"};

// What one optimizer step did (train/step_stats.h computes it).
struct StepColumns {
  int64_t tokens = 0;       // tokens seen by the run so far
  double grad_norm = 0;     // the gradient's global L2 norm before clipping
  double clip_scale = 1;    // what the gradient was multiplied by: 1 unless clipped
  double update_ratio = 0;  // ||change of the weights|| / ||weights before||, over every parameter (NaN: no weights)
  std::array<double, 5> group_ratio{};  // the same per kUpdateGroups group; NaN where the model has none
  double peak_share = 0;    // the step's FLOP/s over the CPU's FMA peak for the threads used
  bool skipped = false;     // not applied by the loss-spike guard (its loss may then be nan or inf)
};

// A multiple-choice task's scores at an evaluation (train/multiple_choice.h).
struct TaskColumns {
  double acc = 0, acc_norm = 0;
  int64_t examples = 0;
};

struct LogRow {
  int64_t iter;
  double train_loss;
  std::optional<double> val_loss;  // only on evaluation rows
  double lr, tokens_per_s, seconds;
  std::optional<StepColumns> step;  // absent from logs that do not keep it
  std::optional<TaskColumns> task;  // evaluation rows of a run with a task (a log keeps no example count)
};

std::string format_log_row(const LogRow& row);  // without the newline

struct LogLine {
  LogRow row;
  std::string text;  // as written
};

// Reads a log with the columns iter, train_loss, val_loss, lr, tokens_per_s, seconds (in any
// order), and the step's columns when the header has all of them. A missing column or a malformed row is an error naming the file and the line; a last
// line without its newline (a write cut short by a crash) is left out.
std::vector<LogLine> read_log_lines(const std::string& path);
std::vector<LogRow> read_log(const std::string& path);  // the rows; at least one

// Whether a file's first line is a log's header (the six columns in any order).
bool is_log_header(const std::string& line);

}  // namespace tinygpt::io
