// tinygpt sample: generated text, streamed as it is produced.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "tinygpt/autograd/threads.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/cli/commands.h"
#include "tinygpt/cli/flags.h"
#include "tinygpt/nn/sampling.h"

namespace tinygpt::cli {

void add_sample(CLI::App& app) {
  struct Args {
    std::string ckpt;
    nn::SampleOptions sample;
    int64_t threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("sample", "generate text from a checkpoint");
  cmd->add_option("--ckpt", args->ckpt, "checkpoint to sample from")->required();
  cmd->add_option("--prompt", args->sample.prompt, "text to continue (default: the tokenizer's document token, <|endoftext|> or BOS, else a new line)");
  add_number(cmd, "--tokens", args->sample.tokens, io::Range{0, 1e7}, "tokens to generate");
  add_number(cmd, "--temperature", args->sample.temperature, io::Range{0, 100},
             "softmax temperature (0: most likely token)");
  add_number(cmd, "--top-k", args->sample.top_k, io::Range{0, double(nn::kMaxVocab)},
             "sample among the k most likely tokens (0: all)");
  add_number(cmd, "--seed", args->sample.seed, io::Range{0, 18446744073709551615.0},
             "random seed: the same seed gives the same text");
  add_number(cmd, "--threads", args->threads, train::kThreadRange, "worker threads (0: all cores)");
  cmd->callback([args] {
    set_num_threads(static_cast<int>(args->threads));
    const train::Checkpoint ck = train::read_checkpoint(args->ckpt, train::CheckpointPart::weights);
    if (!args->sample.prompt.empty()) ck.tokenizer->encode(args->sample.prompt, "the prompt");  // fails before output
    std::fputs(args->sample.prompt.c_str(), stdout);
    nn::generate(*ck.model, *ck.tokenizer, args->sample, [](const std::string& piece) {
      std::fputs(piece.c_str(), stdout);
      std::fflush(stdout);
    });
    std::fputs("\n", stdout);
  });
}

}  // namespace tinygpt::cli
