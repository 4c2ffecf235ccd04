#pragma once
// Multiple-choice benchmarks scored as llm.c scores HellaSwag. An example is a context and two or
// more endings, one of them right. Each ending's row is the tokens of the context, then those of
// " " + ending (each encoded on its own), at most block_size of them (a longer row keeps its last
// tokens); the model scores the ending's tokens that have a token before them in the row, each by
// its cross-entropy. `acc` counts the examples whose right ending has the lowest summed loss,
// `acc_norm` those whose right ending has the lowest mean loss (ties: the first ending).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../data/tokenizer.h"
#include "../nn/gpt.h"

namespace tinygpt::train {

struct ChoiceExample {
  std::string context;
  std::vector<std::string> endings;  // two or more
  int64_t label = 0;                 // the right ending's index
  int64_t line = 0;                  // in its file, for messages
};

// The examples of a file in HellaSwag's JSON-lines layout: one object a line with "ctx" (text),
// "endings" (an array of two or more texts) and "label" (an integer index into it); other fields
// are ignored, and so are blank lines. Errors name the file, the line and the field.
std::vector<ChoiceExample> read_choice_task(const std::string& path);

// One ending's score: the summed cross-entropy (nats) of its scored tokens, and how many.
struct EndingScore {
  double loss = 0;
  int64_t tokens = 0;
  double mean() const { return loss / static_cast<double>(tokens); }
};

struct ChoiceResult {
  std::vector<EndingScore> endings;
  int64_t pick = 0, pick_norm = 0;  // the lowest summed loss; the lowest mean loss
};

struct ChoiceScores {
  int64_t examples = 0, correct = 0, correct_norm = 0;
  double acc() const { return examples ? static_cast<double>(correct) / examples : 0.0; }
  double acc_norm() const { return examples ? static_cast<double>(correct_norm) / examples : 0.0; }
};

// The rows of the examples, tokenized and cut to the block (a row holds at most block_size tokens,
// however long the context), every check done before any scoring:
// an ending that leaves no token to score (an empty context and a one-token ending) is an error
// naming its line.
struct ChoiceRows {
  std::vector<std::vector<int32_t>> tokens;  // one row per ending, examples in order
  std::vector<int64_t> scored_from;          // the first scored position of each row (>= 1)
  std::vector<int64_t> first_row;            // each example's first row; one past the end last
};
ChoiceRows choice_rows(std::span<const ChoiceExample> examples, const data::Tokenizer& tokenizer, int64_t block_size,
                       const std::string& where);

// Examples [begin, end) scored together: whole examples while their rows fit `batch` (an example
// with more endings than that alone, in passes of its own). The groups depend on the rows and the
// batch only, so an example's logits come from the same pass however the groups are shared out.
struct ChoiceGroup {
  int64_t begin = 0, end = 0;
};
std::vector<ChoiceGroup> choice_groups(const ChoiceRows& rows, int64_t batch);

// One group's results, in example order: forward passes of at most `batch` rows, each as long as
// its longest row.
std::vector<ChoiceResult> score_group(nn::GPT& model, const ChoiceRows& rows, ChoiceGroup group, int64_t batch);

// Scores every example, group by group; on_done(n) after each group, n examples done so far.
std::vector<ChoiceResult> score_choices(nn::GPT& model, const ChoiceRows& rows, int64_t batch,
                                        const std::function<void(int64_t)>& on_done = {});

// The bytes a task holds while a run keeps it: its examples' texts and its rows' tokens (the
// memory line's share of --eval-task).
double choice_task_bytes(std::span<const ChoiceExample> examples, const ChoiceRows& rows);

ChoiceScores tally(std::span<const ChoiceExample> examples, std::span<const ChoiceResult> results);

}  // namespace tinygpt::train
