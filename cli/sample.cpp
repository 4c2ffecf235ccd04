// tinygpt sample: generated text, streamed as it is produced; several samples per prompt, prompts
// from the command line or one per line of stdin, and the speed of each on stderr.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "../autograd/threads.h"
#include "../data/tokenizer.h"
#include "../data/utf8.h"
#include "../train/checkpoint.h"
#include "commands.h"
#include "flags.h"
#include "../nn/sampling.h"

namespace tinygpt::cli {

namespace {

struct SampleArgs {
  std::string ckpt;
  nn::SampleOptions sample;
  nn::WeightFormat weights = nn::WeightFormat::fp32;
  int64_t num_samples = 1, threads = 0;
  bool interactive = false, ignore_end_of_text = false;
};

// "12 tokens in 0.051 s (235.3 tokens/s)"
std::string rate(int64_t tokens, double seconds) {
  return fmt::format("{} tokens in {:.3f} s ({:.1f} tokens/s)", tokens, seconds, seconds > 0 ? tokens / seconds : 0.0);
}

// Every sample of one prompt on stdout (the prompt, then its text; a line between samples when
// there are several), and one line of figures on stderr. Sample i draws from seed + i, so
// `--seed S+i --num-samples 1` gives it again.
void sample_prompt(nn::GPT& model, const data::Tokenizer& tokenizer, const SampleArgs& args, const std::string& prompt) {
  nn::SampleOptions o = args.sample;
  o.prompt = prompt;
  if (!prompt.empty()) tokenizer.encode(prompt, "the prompt");  // fails before any output
  int64_t prompt_tokens = 0, generated = 0;
  std::map<nn::StopReason, int64_t> stopped;
  double prompt_seconds = 0, generate_seconds = 0;
  for (int64_t i = 0; i < args.num_samples; ++i) {
    o.seed = args.sample.seed + static_cast<uint64_t>(i);
    if (args.num_samples > 1) fmt::print("--- sample {} of {} (seed {}) ---\n", i + 1, args.num_samples, o.seed);
    std::fputs(prompt.c_str(), stdout);
    const nn::SampleResult r = nn::generate(model, tokenizer, o, [](const std::string& piece) {
      std::fputs(piece.c_str(), stdout);
      std::fflush(stdout);
    });
    std::fputs("\n", stdout);
    std::fflush(stdout);
    prompt_tokens += r.prompt_tokens, generated += r.generated_tokens;
    prompt_seconds += r.prompt_seconds, generate_seconds += r.generate_seconds;
    ++stopped[r.stopped];
  }
  std::string ends;  // "; ended by: 1 length, 2 end of text"
  for (const auto& [reason, count] : stopped) ends += fmt::format("{} {} {}", ends.empty() ? "; ended by:" : ",", count, nn::name(reason));
  fmt::print(stderr, "tinygpt: {} sample{}: prompt {}, generated {}{}\n", args.num_samples,
             args.num_samples == 1 ? "" : "s", rate(prompt_tokens, prompt_seconds), rate(generated, generate_seconds), ends);
}

// A prompt line longer than this is refused: a model sees at most a block of tokens of it anyway.
constexpr size_t kMostLineBytes = size_t{1} << 20;

// The next line of `in` (without its newline) into `line`: false at the end of input. A line of
// more than kMostLineBytes is read to its end, kept to none of it, and `too_long` set.
bool read_line(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf& buffer = *in.rdbuf();
  bool any = false;
  for (int c = buffer.sbumpc(); c != std::char_traits<char>::eof(); c = buffer.sbumpc()) {
    any = true;
    if (c == '\n') return true;
    if (line.size() < kMostLineBytes) line += static_cast<char>(c);
    else too_long = true;
  }
  return any;
}

// One prompt per line of stdin until its end; a line that cannot be encoded, or is longer than
// kMostLineBytes, is reported and skipped. Returns whether every line could be sampled.
bool sample_lines(nn::GPT& model, const data::Tokenizer& tokenizer, const SampleArgs& args) {
  const bool terminal = isatty(fileno(stdin));
  bool all = true;
  std::string line;
  bool too_long = false;
  for (int64_t number = 1;; ++number) {
    if (terminal) std::fputs("> ", stderr);
    if (!read_line(std::cin, line, too_long)) break;
    if (too_long) {
      fmt::print(stderr, "tinygpt: error: stdin line {} is longer than {} bytes (1 MiB): a prompt must be shorter\n",
                 number, kMostLineBytes);
      all = false;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    try {
      sample_prompt(model, tokenizer, args, line);
    } catch (const data::UnknownCharacter& e) {  // placed in the stdin line, not in "the prompt"
      fmt::print(stderr, "tinygpt: error: stdin line {}: {} at byte {} is not in the character vocabulary\n", number,
                 data::describe_code_point(e.code_point), e.offset + 1);
      all = false;
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "tinygpt: error: stdin line {}: {}\n", number, data::printable(e.what()));
      all = false;
    }
  }
  return all;
}

}  // namespace

void add_sample(CLI::App& app) {
  auto args = std::make_shared<SampleArgs>();
  CLI::App* cmd = app.add_subcommand("sample", "generate text from a checkpoint");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to sample from")->required();
  CLI::Option* prompt = cmd->add_option("--prompt", args->sample.prompt, "text to continue (default: the tokenizer's document token, <|endoftext|> or BOS, else a new line)");
  add_number(cmd, "--tokens", args->sample.tokens, io::Range{0, 1e7}, "tokens to generate at most");
  add_number(cmd, "--temperature", args->sample.pick.temperature, io::Range{0, 100},
             "softmax temperature (0: most likely token)");
  add_number(cmd, "--top-k", args->sample.pick.top_k, io::Range{0, double(nn::kMaxVocab)},
             "sample among the k most likely tokens (0: all)");
  add_number(cmd, "--top-p", args->sample.pick.top_p, io::Range{0, 1},
             "sample among the fewest most likely tokens whose probabilities sum to p or more (1: all)");
  cmd->add_option("--stop", args->sample.stop, "end a sample where this text appears (not printed); repeatable");
  cmd->add_flag("--ignore-end-of-text", args->ignore_end_of_text,
                "go on past the tokenizer's end of text (<|endoftext|>, BOS, EOS) instead of stopping there");
  add_number(cmd, "--num-samples", args->num_samples, io::Range{1, 1e6}, "samples per prompt, sample i from seed + i");
  cmd->add_flag("--interactive", args->interactive, "read prompts from stdin, one per line, until its end");
  add_number(cmd, "--seed", args->sample.seed, io::Range{0, 18446744073709551615.0},
             "random seed: the same seed gives the same text");
  add_weights_flag(cmd, args->weights);
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->callback([args, prompt] {
    if (args->interactive && prompt->count())
      throw std::invalid_argument("--interactive reads its prompts from stdin; it takes no --prompt");
    nn::check(args->sample);  // before the checkpoint is read
    args->sample.end_of_text = args->ignore_end_of_text ? nn::EndOfText::go_on : nn::EndOfText::stop;
    set_num_threads(static_cast<int>(args->threads));
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt, train::CheckpointPart::weights);
    if (args->weights == nn::WeightFormat::int8) ck.model->use_int8_weights();
    if (!args->interactive) return sample_prompt(*ck.model, *ck.tokenizer, *args, args->sample.prompt);
    if (!sample_lines(*ck.model, *ck.tokenizer, *args))
      throw std::invalid_argument("some lines of stdin could not be sampled (each named above)");
  });
}

}  // namespace tinygpt::cli
