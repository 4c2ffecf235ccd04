// The logits of a checkpoint's model at the last of the given token ids, one per line (%.9g), or
// the ids of a text: the tinygpt side of bench/llama2c/check.sh, which compares them with run.c's.
// Usage: llama2c_logits CKPT ID...   |   llama2c_logits --ids CKPT TEXT
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tinygpt/autograd/graph.h"
#include "tinygpt/train/checkpoint.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: llama2c_logits CKPT ID...\n");
    return 1;
  }
  if (std::string(argv[1]) == "--ids" && argc == 4) {
    for (int32_t id : tinygpt::train::read_checkpoint(argv[2]).tokenizer->encode(argv[3])) std::printf("%d ", id);
    std::printf("\n");
    return 0;
  }
  const tinygpt::train::Checkpoint ck = tinygpt::train::read_checkpoint(argv[1]);
  std::vector<int32_t> ids;
  for (int i = 2; i < argc; ++i) ids.push_back(static_cast<int32_t>(std::atoi(argv[i])));
  tinygpt::NoGradGuard no_grad;
  ck.model->eval();
  const auto T = static_cast<int64_t>(ids.size());
  const std::vector<float> logits = ck.model->forward(ids, 1, T).logits.to_vector();
  const int64_t V = ck.config.vocab_size;
  for (int64_t v = 0; v < V; ++v) std::printf("%.9g\n", logits[(T - 1) * V + v]);
}
