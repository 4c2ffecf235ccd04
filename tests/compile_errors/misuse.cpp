// Mistakes a libtorch user makes, each refused at compile time with a message that says what to do
// instead (tests/CMakeLists.txt compiles this once per CASE and checks the message).
#include <tinygpt/tinygpt.h>

using namespace tinygpt;

int main() {
  nn::Linear layer(2, 2);
#if CASE == 1
  optim::SGD optimizer(layer.parameters(), optim::SGDOptions{});
#elif CASE == 2
  optim::AdamW optimizer(layer.parameters(), optim::AdamWOptions{});
#elif CASE == 3
  nn::Sequential net;
  net.add<nn::Embedding>(4, 2);
#elif CASE == 4
  data::TokenArray tokens(65);
  data::BatchSampler batches(tokens.slice(0, 10), 1, 4, 1);
#elif CASE == 5
  optim::AdamW optimizer(layer.parameters(), {.lr = 1e-3f});  // options as a braced list
#endif
  return 0;
}
