// Writes a one-layer GPT-2 model directory in Hugging Face's layout, with GPT-2's own tokenizer
// (50257 tokens, its byte order, <|endoftext|>), to argv[1]: the browser test's page computes a
// typed text with that tokenizer. GPT-2's files come from scripts/fetch-reference.sh.
#include <iostream>

#include "gpt2_dir.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_gpt2_dir DIR\n";
    return 2;
  }
  if (!tinygpt::testing::write_gpt2_dir(argv[1], 1, 16, 2, 32, 5)) {
    std::cerr << "write_gpt2_dir: GPT-2's tokenizer files are missing: run scripts/fetch-reference.sh\n";
    return 1;
  }
  return 0;
}
