#include <catch2/catch.hpp>

#include <H5Cpp.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "temp_files.h"
#include "train_helpers.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace tinygpt;
using namespace tinygpt::train;
using tinygpt::testing::TempDir;
using tinygpt::testing::loss_columns;
using tinygpt::testing::Quiet;
using tinygpt::testing::weights;

namespace {

std::string tiny_text() {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat on the mat. the dog ate the log.\n";
  return text;
}

TrainOptions tiny_options(const TempDir& dir, const std::string& out) {
  TrainOptions o;
  o.data = {dir.write("tiny.txt", tiny_text())};
  o.out = dir.file(out);
  o.layers = 2, o.heads = 2, o.embd = 16, o.block = 16, o.batch = 4;
  o.iters = 12, o.warmup = 2, o.eval_every = 4, o.eval_iters = 2, o.ckpt_every = 5;
  o.lr = 1e-2, o.min_lr = 1e-3, o.dropout = 0.1, o.seed = 7;
  return o;
}

}  // namespace

TEST_CASE("train: a tiny model overfits a tiny text", "[train]") {
  TempDir dir;
  TrainOptions o = tiny_options(dir, "fit.h5");
  o.iters = 150, o.dropout = 0.0, o.eval_every = 150, o.ckpt_every = 150, o.embd = 32, o.block = 32;
  Quiet q;
  Trainer t(o);
  REQUIRE(t.run(q.progress) == Trainer::Outcome::finished);
  REQUIRE(t.state().train_loss < 0.5);  // from ln(17) = 2.8 at the start
  REQUIRE(std::filesystem::exists(o.out));
}

TEST_CASE("train: N steps + resume N steps == 2N steps, bitwise", "[train][resume]") {
  TempDir dir;
  Quiet q;
  const TrainOptions straight = tiny_options(dir, "straight.h5");
  Trainer a(straight);
  a.run(q.progress);

  const TrainOptions paused = tiny_options(dir, "paused.h5");
  {
    Trainer b(paused);
    REQUIRE(b.run(q.progress, nullptr, 6) == Trainer::Outcome::interrupted);
    REQUIRE(b.state().iteration == 6);
  }
  Trainer resumed(paused.out, std::nullopt);
  REQUIRE(resumed.state().iteration == 6);
  resumed.run(q.progress);
  REQUIRE(resumed.state().iteration == 12);
  REQUIRE(loss_columns(a.log_path()) == loss_columns(resumed.log_path()));  // every loss, 9 digits
  REQUIRE(weights(a.model()) == weights(resumed.model()));                  // bitwise
  const Checkpoint ca = read_checkpoint(straight.out), cb = read_checkpoint(paused.out);
  REQUIRE(ca.optim_step == cb.optim_step);
  REQUIRE(ca.m.at("transformer.wte.weight").to_vector() == cb.m.at("transformer.wte.weight").to_vector());
  REQUIRE(ca.train->sampler_states == cb.train->sampler_states);
  // More iterations may be asked for on resume.
  Trainer longer(straight.out, 15);
  longer.run(q.progress);
  REQUIRE(longer.state().iteration == 15);
}

TEST_CASE("train: SIGINT finishes the step and leaves a resumable checkpoint", "[train][resume]") {
  TempDir dir;
  Quiet q;
  const TrainOptions o = tiny_options(dir, "sig.h5");
  {
    Trainer t(o);
    InterruptWatch watch;
    std::raise(SIGINT);  // arrives before the first step; the step still completes
    REQUIRE(watch.requested());
    REQUIRE(t.run(q.progress, &watch) == Trainer::Outcome::interrupted);
    REQUIRE(t.state().iteration == 1);
  }
  Trainer resumed(o.out, std::nullopt);
  REQUIRE(resumed.state().iteration == 1);
  REQUIRE(resumed.run(q.progress) == Trainer::Outcome::finished);
}

TEST_CASE("checkpoint: every group round-trips", "[checkpoint]") {
  TempDir dir;
  Quiet q;
  TrainOptions o = tiny_options(dir, "rt.h5");
  o.tokenizer = "bpe", o.vocab_size = 270;
  Trainer t(o);
  t.run(q.progress, nullptr, 3);
  const Checkpoint ck = read_checkpoint(o.out);
  REQUIRE(ck.config.n_layer == 2);
  REQUIRE(ck.config.vocab_size == 270);
  REQUIRE(weights(*ck.model) == weights(t.model()));
  const auto* bpe = dynamic_cast<const data::BpeTokenizer*>(ck.tokenizer.get());
  REQUIRE(bpe != nullptr);
  REQUIRE(bpe->merges() == dynamic_cast<const data::BpeTokenizer&>(*t.corpus().tokenizer).merges());
  REQUIRE(bpe->split() == data::Split::gpt2);
  REQUIRE(ck.optim_step == 3);
  REQUIRE(ck.optim->beta2 == Approx(0.99));
  REQUIRE(ck.train->iteration == 3);
  REQUIRE(ck.train->options.data == o.data);
  REQUIRE(ck.train->options.lr == o.lr);
  REQUIRE(ck.train->options.tokenizer == "bpe");
  REQUIRE(ck.train->dropout_counter == t.model().dropout_counter());
  REQUIRE(ck.train->train_tokens == t.corpus().train.size());
}

TEST_CASE("checkpoint: bad files give clear errors and are never overwritten", "[checkpoint][errors]") {
  TempDir dir;
  Quiet q;
  const TrainOptions o = tiny_options(dir, "good.h5");
  Trainer(o).run(q.progress, nullptr, 2);
  auto copy = [&](const std::string& name) {
    std::filesystem::copy_file(o.out, dir.file(name));
    return dir.file(name);
  };
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("none.h5")), Catch::Contains("none.h5': no such file"));
  REQUIRE_THROWS_WITH(read_checkpoint(dir.write("text.h5", "not hdf5")), Catch::Contains("not an HDF5 file"));
  {  // truncated: the first half of a real checkpoint
    std::ifstream in(o.out, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    const std::string cut = dir.write("cut.h5", bytes.substr(0, bytes.size() / 2));
    REQUIRE_THROWS_WITH(read_checkpoint(cut), Catch::Contains("cut.h5"));
  }
  {  // foreign: an HDF5 file of someone else's
    H5::H5File foreign(dir.file("foreign.h5"), H5F_ACC_TRUNC);
    foreign.createGroup("/data");
  }
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("foreign.h5")), Catch::Contains("not a tinygpt checkpoint"));
  {
    const std::string path = copy("version.h5");
    H5::H5File f(path, H5F_ACC_RDWR);
    const int two = 2;
    f.openAttribute("format_version").write(H5::PredType::NATIVE_INT, &two);
  }
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("version.h5")), Catch::Contains("format_version 2 is not supported"));
  {
    H5::H5File f(copy("missing.h5"), H5F_ACC_RDWR);
    f.unlink("/model/transformer.h.1.mlp.c_fc.bias");
  }
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("missing.h5")),
                      Catch::Contains("missing.h5") && Catch::Contains("missing dataset /model/transformer.h.1.mlp.c_fc.bias"));
  {
    H5::H5File f(copy("shape.h5"), H5F_ACC_RDWR);
    f.unlink("/model/transformer.ln_f.weight");
    hsize_t dims[1] = {7};
    f.createDataSet("/model/transformer.ln_f.weight", H5::PredType::IEEE_F32LE, H5::DataSpace(1, dims));
  }
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("shape.h5")),
                      Catch::Contains("dataset /model/transformer.ln_f.weight has shape [7], expected [16]"));
  // Resuming from a bad file changes nothing on disk.
  const auto before = std::filesystem::last_write_time(dir.file("shape.h5"));
  REQUIRE_THROWS(Trainer(dir.file("shape.h5"), std::nullopt));
  REQUIRE(std::filesystem::last_write_time(dir.file("shape.h5")) == before);
}

TEST_CASE("checkpoint: a failed write leaves the previous checkpoint intact", "[checkpoint]") {
  TempDir dir;
  Quiet q;
  const TrainOptions o = tiny_options(dir, "keep.h5");
  Trainer t(o);
  t.run(q.progress, nullptr, 2);
  std::ifstream in(o.out, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(in)), {});
  std::filesystem::create_directory(o.out + ".tmp");  // the temporary file cannot be created
  REQUIRE_THROWS_WITH(t.save(), Catch::Contains("cannot write checkpoint"));
  std::ifstream again(o.out, std::ios::binary);
  REQUIRE(std::string((std::istreambuf_iterator<char>(again)), {}) == before);
  REQUIRE(read_checkpoint(o.out).train->iteration == 2);
}

TEST_CASE("train: impossible settings are rejected before anything is written", "[train][errors]") {
  TempDir dir;
  TrainOptions o = tiny_options(dir, "x.h5");
  o.heads = 3;
  REQUIRE_THROWS_WITH(Trainer(o), Catch::Contains("--embd 16 is not divisible by --heads 3"));
  o = tiny_options(dir, "x.h5");
  o.block = 5000;
  REQUIRE_THROWS_WITH(Trainer(o), Catch::Contains("needs at least 5001"));
  o = tiny_options(dir, "x.h5");
  o.data = {dir.file("absent.txt")};
  REQUIRE_THROWS_WITH(Trainer(o), Catch::Contains("cannot open") && Catch::Contains("absent.txt"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("x.h5")));
}
