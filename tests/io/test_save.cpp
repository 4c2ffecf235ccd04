// nn::save / nn::load of any module and optim::save / optim::load of an optimizer: round trips,
// loading a GPT from a training checkpoint, and loads that refuse and change nothing.
#include <catch2/catch.hpp>

#include <H5Cpp.h>

#include <filesystem>

#include "checkpoint_edits.h"
#include "temp_files.h"
#include "tinygpt/nn/containers.h"
#include "tinygpt/nn/activations.h"
#include "tinygpt/nn/layers.h"
#include "tinygpt/optim/adamw.h"
#include "tinygpt/optim/sgd.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/io/save.h"
#include "tinygpt/train/trainer.h"
#include "train_helpers.h"

using namespace tinygpt;
using tinygpt::testing::edit_checkpoint;
using tinygpt::testing::TempDir;

namespace {

std::vector<std::vector<float>> values(const nn::Module& m) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, p] : m.named_parameters()) out.push_back(p.to_vector());
  return out;
}

nn::Sequential mlp(uint64_t seed) {
  nn::Sequential net(seed);
  net.add<nn::Linear>(3, 8);
  net.add<nn::Tanh>();
  net.add<nn::Linear>(8, 2);
  return net;
}

}  // namespace

TEST_CASE("save: a module's parameters round-trip, bit for bit", "[save]") {
  TempDir dir;
  nn::Sequential a = mlp(1), b = mlp(2);
  REQUIRE(values(a) != values(b));
  nn::save(a, dir.file("mlp.h5"));
  nn::load(b, dir.file("mlp.h5"));
  REQUIRE(values(a) == values(b));
  // The file is HDF5 with the dotted names, sealed like a checkpoint.
  H5::H5File f(dir.file("mlp.h5"), H5F_ACC_RDONLY);
  REQUIRE(H5Lexists(f.getId(), "2.bias", H5P_DEFAULT) > 0);
  std::ifstream in(dir.file("mlp.h5"), std::ios::binary);
  std::string head(26, '\0');
  in.read(head.data(), 26);
  REQUIRE(head == "tinygpt checkpoint seal 1\n");
}

TEST_CASE("save: a load that does not fit names the first mismatch and changes nothing", "[save][errors]") {
  TempDir dir;
  nn::Sequential saved = mlp(1);
  nn::save(saved, dir.file("mlp.h5"));
  nn::Sequential wider(3);
  wider.add<nn::Linear>(3, 9);
  const auto before = values(wider);
  REQUIRE_THROWS_WITH(nn::load(wider, dir.file("mlp.h5")),
                      Catch::Contains("module file '" + dir.file("mlp.h5") + "'") &&
                          Catch::Contains("dataset /0.weight has shape [8, 3], expected [9, 3]"));
  REQUIRE(values(wider) == before);
  nn::Sequential deeper = mlp(4);
  deeper.add<nn::Linear>(2, 2);
  REQUIRE_THROWS_WITH(nn::load(deeper, dir.file("mlp.h5")), Catch::Contains("missing dataset /3.weight"));
  nn::Sequential shorter(5);
  shorter.add<nn::Linear>(3, 8);
  const auto shorter_before = values(shorter);
  REQUIRE_THROWS_WITH(nn::load(shorter, dir.file("mlp.h5")),
                      Catch::Contains("dataset /2.bias is not a parameter of the module"));
  REQUIRE(values(shorter) == shorter_before);
  // A NaN in the file: refused, the module untouched.
  edit_checkpoint(dir.file("mlp.h5"), [](H5::H5File& f) {
    const float nan[2] = {NAN, NAN};
    f.openDataSet("2.bias").write(nan, H5::PredType::NATIVE_FLOAT);
  });
  nn::Sequential target = mlp(6);
  const auto target_before = values(target);
  REQUIRE_THROWS_WITH(nn::load(target, dir.file("mlp.h5")), Catch::Contains("dataset /2.bias holds nan"));
  REQUIRE(values(target) == target_before);
  REQUIRE_THROWS_WITH(nn::load(target, dir.file("none.h5")), Catch::Contains("none.h5': no such file"));
}

TEST_CASE("save: a GPT loads its weights from a training checkpoint", "[save]") {
  TempDir dir;
  testing::Quiet q;
  train::TrainOptions o;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat on the mat.\n";
  o.data = {dir.write("t.txt", text)};
  o.out = dir.file("run.h5");
  o.layers = 1, o.heads = 2, o.embd = 8, o.block = 8, o.batch = 2, o.iters = 3, o.eval_every = 3, o.eval_iters = 1;
  train::Trainer trainer(o);
  trainer.run(q.progress);
  nn::GPT gpt(trainer.model().config(), 99);
  REQUIRE(testing::weights(gpt) != testing::weights(trainer.model()));
  nn::load(gpt, o.out);
  REQUIRE(testing::weights(gpt) == testing::weights(trainer.model()));
}

TEST_CASE("save: an optimizer's state round-trips and continues exactly", "[save]") {
  TempDir dir;
  auto train_steps = [](nn::Sequential& net, optim::Optimizer& opt, int steps) {
    const Tensor x = Tensor::uniform({16, 3}, 1, -1, 1), y = Tensor::uniform({16, 2}, 2, -1, 1);
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      mse_loss(net.forward(x), y).backward();
      opt.step();
    }
  };
  nn::Sequential a = mlp(1), b = mlp(1);
  optim::AdamW opt_a(a.named_parameters(), {.lr = 0.01f}), opt_b(b.named_parameters(), {.lr = 0.5f});
  train_steps(a, opt_a, 3);
  nn::save(a, dir.file("net.h5"));
  optim::save(opt_a, dir.file("opt.h5"));
  train_steps(a, opt_a, 2);
  nn::load(b, dir.file("net.h5"));
  optim::load(opt_b, dir.file("opt.h5"));
  REQUIRE(opt_b.steps() == 3);
  REQUIRE(opt_b.lr() == 0.01f);
  train_steps(b, opt_b, 2);
  REQUIRE(values(a) == values(b));  // the same updates, bit for bit
  optim::SGD sgd(b.named_parameters(), {.lr = 0.1f, .momentum = 0.9f});
  REQUIRE_THROWS_WITH(optim::load(sgd, dir.file("opt.h5")), Catch::Contains("it holds the state of adamw, not of sgd"));
  REQUIRE_THROWS_WITH(optim::load(sgd, dir.file("net.h5")), Catch::Contains("not a saved optimizer"));
  optim::save(sgd, dir.file("sgd.h5"));
  optim::SGD sgd2(b.named_parameters(), {.lr = 0.1f, .momentum = 0.9f});
  optim::load(sgd2, dir.file("sgd.h5"));
  nn::Sequential other = mlp(3);
  optim::AdamW opt_other(other.named_parameters(), {});
  nn::Sequential bigger = mlp(3);
  bigger.add<nn::Linear>(2, 2);
  optim::AdamW opt_bigger(bigger.named_parameters(), {});
  REQUIRE_THROWS_WITH(optim::load(opt_bigger, dir.file("opt.h5")), Catch::Contains("missing dataset /m/3.weight"));
}

namespace {
struct WithBuffer : nn::Module {  // a parameter and a buffer, as a user writes them
  WithBuffer() {
    weight = register_parameter("weight", Tensor::uniform({2, 2}, 4, -1, 1));
    running = register_buffer("running_mean", Tensor::uniform({2}, 5, -1, 1));
  }
  Tensor weight, running;
};
}  // namespace

TEST_CASE("save: buffers and the caller's state (epoch, generator, sampler) round-trip", "[save]") {
  TempDir dir;
  WithBuffer a, b;
  b.weight.fill_(0.0f), b.running.fill_(0.0f);
  Rng rng(42);
  rng.next_u64();
  io::SavedState state;
  state.integers["epoch"] = 7;
  state.integers["sampler.position"] = -3;
  state.numbers["best_val_loss"] = 1.25;
  state.texts["note"] = "after the warm-up";
  state.generators["shuffle"] = rng.state();
  nn::save(a, dir.file("m.h5"), state);
  const io::SavedState back = nn::load(b, dir.file("m.h5"));
  REQUIRE(back == state);
  REQUIRE(b.running.to_vector() == a.running.to_vector());
  REQUIRE(b.weight.to_vector() == a.weight.to_vector());
  Rng resumed(0);
  resumed.set_state(back.generators.at("shuffle"));
  REQUIRE(resumed.next_u64() == rng.next_u64());
  // The same on an optimizer file; a file without state gives an empty one.
  optim::SGD sgd(a.named_parameters(), {.lr = 0.1f});
  optim::save(sgd, dir.file("o.h5"), state);
  REQUIRE(optim::load(sgd, dir.file("o.h5")) == state);
  nn::save(a, dir.file("plain.h5"));
  REQUIRE(nn::load(b, dir.file("plain.h5")) == io::SavedState{});
  // A state attribute of another type is refused by name, and the module is left as it was.
  edit_checkpoint(dir.file("m.h5"), [](H5::H5File& f) {
    f.removeAttr("state:epoch");
    const hsize_t two = 2;
    f.createAttribute("state:epoch", H5::PredType::NATIVE_FLOAT, H5::DataSpace(1, &two));
  });
  b.running.fill_(9.0f);
  REQUIRE_THROWS_WITH(nn::load(b, dir.file("m.h5")), Catch::Contains("attribute 'state:epoch' is not an int64"));
  REQUIRE(b.running.to_vector() == std::vector<float>{9, 9});
}
