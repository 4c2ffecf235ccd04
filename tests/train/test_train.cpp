#include <catch2/catch.hpp>

#include <H5Cpp.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/json.h"
#include "checkpoint_edits.h"
#include "temp_files.h"
#include "train_helpers.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/trainer.h"

using namespace tinygpt;
using namespace tinygpt::train;
using tinygpt::testing::edit_checkpoint;
using tinygpt::testing::Seal;
using tinygpt::testing::set_attribute;
using tinygpt::testing::set_text_attribute;
using tinygpt::testing::strip_seal;
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
  auto first = std::make_unique<Trainer>(straight);
  Trainer& a = *first;
  a.run(q.progress);

  const TrainOptions paused = tiny_options(dir, "paused.h5");
  {
    Trainer b(paused);
    REQUIRE(b.run(q.progress, nullptr, 6) == Trainer::Outcome::interrupted);
    REQUIRE(b.state().iteration == 6);
  }
  Trainer resumed(paused.out, Resume{});
  REQUIRE(resumed.state().iteration == 6);
  resumed.run(q.progress);
  REQUIRE(resumed.state().iteration == 12);
  REQUIRE(loss_columns(a.log_path()) == loss_columns(resumed.log_path()));  // every loss, 9 digits
  REQUIRE(weights(a.model()) == weights(resumed.model()));                  // bitwise
  const Checkpoint ca = read_checkpoint(straight.out), cb = read_checkpoint(paused.out);
  REQUIRE(ca.optim_step == cb.optim_step);
  REQUIRE(ca.m.at("transformer.wte.weight").to_vector() == cb.m.at("transformer.wte.weight").to_vector());
  REQUIRE(ca.train->sampler_states == cb.train->sampler_states);
  // More iterations may be asked for on resume, once the first trainer of that run is gone (it
  // holds the run's lock for as long as it lives).
  REQUIRE_THROWS_WITH(Trainer(straight.out, Resume{}.set_iters(15)), Catch::Contains("is being written by another"));
  first.reset();
  Trainer longer(straight.out, Resume{}.set_iters(15));
  longer.run(q.progress);
  REQUIRE(longer.state().iteration == 15);
}

TEST_CASE("train: a plan holds the run's lock and writes nothing, its trainer starts the log", "[train][resume]") {
  TempDir dir;
  Quiet q;
  TrainOptions o = tiny_options(dir, "planned.h5");
  const auto comm = Communicator::single();
  {
    RunPlan plan = plan_new_run(o, comm);
    REQUIRE(plan.state.iteration == 0);
    REQUIRE(plan.options.data.front() == std::filesystem::absolute(o.data.front()).lexically_normal().string());
    REQUIRE(plan.lock.held());
    REQUIRE_FALSE(std::filesystem::exists(dir.file("planned.csv")));  // nothing written yet
    REQUIRE_THROWS_WITH(plan_new_run(o, comm, ExistingOutputs::replace), Catch::Contains("is being written by another"));
    Trainer t(std::move(plan), comm);
    REQUIRE(loss_columns(t.log_path()).size() == 1);  // the header alone
    REQUIRE(t.run(q.progress, nullptr, 4) == Trainer::Outcome::interrupted);
  }
  // A resume's plan: the changes it makes, the rows the log keeps, its checkpoint the one it continues.
  RunPlan resumed = plan_resume(o.out, Resume{}.set_iters(20), comm);
  REQUIRE(resumed.state.iteration == 4);
  REQUIRE(resumed.options.iters == 20);
  REQUIRE(resumed.changes == std::vector<std::string>{"iteration 4: --iters 12 -> 20"});
  REQUIRE(resumed.log_rows.size() == 4);
  REQUIRE(resumed.checkpoint_exists);
  const std::vector<std::string> rows = loss_columns(dir.file("planned.csv"));
  Trainer t(std::move(resumed), comm);
  REQUIRE(loss_columns(t.log_path()) == rows);
}

TEST_CASE("train: a resume that changes intervals, samples or keep-best is bitwise the straight run", "[train][resume]") {
  TempDir dir;
  Quiet q;
  TrainOptions straight = tiny_options(dir, "straight.h5"), paused = tiny_options(dir, "paused.h5");
  Trainer a(straight);
  a.run(q.progress);
  {
    Trainer b(paused);
    REQUIRE(b.run(q.progress, nullptr, 6) == Trainer::Outcome::interrupted);
  }
  Resume changes;
  changes.options.eval_every = 3, changes.options.eval_iters = 5, changes.options.ckpt_every = 2;
  changes.options.log_every = 1, changes.options.sample_every = 2, changes.options.keep_best = true;
  changes.given = {"eval-every", "eval-iters", "ckpt-every", "log-every", "sample-every", "keep-best"};
  Trainer resumed(paused.out, changes);
  REQUIRE(resumed.new_changes().size() == 6);
  REQUIRE(resumed.new_changes().front() == "iteration 6: --eval-every 4 -> 3");
  resumed.run(q.progress);
  REQUIRE(weights(a.model()) == weights(resumed.model()));  // bitwise
  REQUIRE(a.state().train_loss == resumed.state().train_loss);
  REQUIRE(std::filesystem::exists(resumed.best_path()));
  const Checkpoint ck = read_checkpoint(paused.out);
  REQUIRE(ck.train->changes.size() == 6);
  REQUIRE(ck.train->options.eval_every == 3);
  REQUIRE(ck.train->options.keep_best);
  // A setting that would change the numbers is refused by the library too.
  Resume batch;
  batch.options.batch = 8, batch.given = {"batch"};
  std::filesystem::copy_file(paused.out, dir.file("copy.h5"));  // the run's own file is locked by `resumed`
  REQUIRE_THROWS_WITH(Trainer(dir.file("copy.h5"), batch), Catch::Contains("--batch cannot change on --resume"));
}

TEST_CASE("train: the text's files are kept by path, size and SHA-256, and malformed records are refused", "[train][data]") {
  TempDir dir;
  const std::string a = dir.write("a.txt", "abc"), b = dir.write("b.txt", "abd");
  const std::vector<DataFile> one = identify_data({a}, {}), other = identify_data({b}, {});
  REQUIRE(one.at(0).sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // FIPS 180-2's "abc"
  REQUIRE(one.at(0).size == 3);
  REQUIRE(data_difference(one, identify_data({a}, {})).empty());
  REQUIRE_THAT(data_difference(one, other), Catch::StartsWith("train file 1 was '" + a + "' (3 bytes, SHA-256 ba7816bf8f01"));
  REQUIRE_THAT(data_difference(one, identify_data({a}, {b})), Catch::Contains("the run had 0 val files, now there is 1"));
  REQUIRE(parse_data_lines(data_lines(identify_data({a}, {b}))).at(1).path == b);
  for (const std::string& bad : {std::string("train 3 abc /x"), "test 3 " + one[0].sha256 + " /x", "train -1 " + one[0].sha256 + " /x",
                                "train 3 " + one[0].sha256, "train 3x " + one[0].sha256 + " /x"})
    REQUIRE_THROWS_WITH(parse_data_lines({bad}), Catch::Contains("is not '<train|val> <bytes> <sha256> <path>'"));
}

TEST_CASE("train: bf16 runs resume in bf16, bitwise, and differ from fp32 runs", "[train][resume][bf16]") {
  TempDir dir;
  Quiet q;
  TrainOptions straight = tiny_options(dir, "straight.h5"), paused = tiny_options(dir, "paused.h5"),
               f32 = tiny_options(dir, "f32.h5");
  straight.precision = paused.precision = Precision::bf16;
  Trainer a(straight), c(f32);
  a.run(q.progress);
  c.run(q.progress);
  REQUIRE(weights(a.model()) != weights(c.model()));  // the products were rounded
  REQUIRE(std::abs(a.state().train_loss - c.state().train_loss) < 0.1);
  {
    Trainer b(paused);
    REQUIRE(b.run(q.progress, nullptr, 6) == Trainer::Outcome::interrupted);
  }
  REQUIRE(read_checkpoint(paused.out).train->options.precision == Precision::bf16);
  Trainer resumed(paused.out, Resume{});
  REQUIRE(resumed.state().options.precision == Precision::bf16);
  resumed.run(q.progress);
  REQUIRE(weights(a.model()) == weights(resumed.model()));  // bitwise: the resume continued in bf16
  REQUIRE(loss_columns(a.log_path()) == loss_columns(resumed.log_path()));
  // A checkpoint from before the option has no attribute: it is an fp32 run.
  edit_checkpoint(f32.out, [](H5::H5File& f) { f.openGroup("/train").removeAttr("precision"); });
  REQUIRE(read_checkpoint(f32.out).train->options.precision == Precision::fp32);
  edit_checkpoint(paused.out, [](H5::H5File& f) {
    H5::Group g = f.openGroup("/train");
    g.removeAttr("precision");
    const H5::StrType type(H5::PredType::C_S1, 4);
    g.createAttribute("precision", type, H5::DataSpace(H5S_SCALAR)).write(type, std::string("fp64"));
  });
  REQUIRE_THROWS_WITH(read_checkpoint(paused.out),
                      Catch::Contains("attribute 'precision' of /train must be fp32 or bf16 (got 'fp64')"));
}

TEST_CASE("train: an eval task changes no number of the run, and a checkpoint from before it reads without it",
          "[train][task]") {
  TempDir dir;
  Quiet q;
  const TrainOptions plain = tiny_options(dir, "plain.h5");
  TrainOptions with_task = tiny_options(dir, "task.h5");
  const std::string text = tiny_text();
  with_task.eval_task = dir.write("choices.jsonl", fmt::format(R"({{"ctx": {}, "endings": [{}, {}], "label": 1}})" "\n",
                                                            data::json::quote(text.substr(0, 12)),
                                                            data::json::quote(text.substr(30, 6)),
                                                            data::json::quote(text.substr(12, 6))));
  Trainer a(plain), b(with_task);
  a.run(q.progress);
  b.run(q.progress);
  REQUIRE(weights(a.model()) == weights(b.model()));  // scoring reads the model, touches nothing
  REQUIRE(loss_columns(a.log_path()) == loss_columns(b.log_path()));
  std::ifstream log(b.log_path());
  std::string line;
  int scored = 0;
  while (std::getline(log, line)) scored += line.back() != ',' && line.rfind("iter", 0) != 0;
  REQUIRE(scored == 3);  // iterations 4, 8 and 12
  REQUIRE(read_checkpoint(with_task.out).train->options.eval_task == with_task.eval_task);
  edit_checkpoint(with_task.out, [](H5::H5File& f) { f.openGroup("/train").removeAttr("eval-task"); });
  REQUIRE(read_checkpoint(with_task.out).train->options.eval_task.empty());
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
  Trainer resumed(o.out, Resume{});
  REQUIRE(resumed.state().iteration == 1);
  REQUIRE(resumed.run(q.progress) == Trainer::Outcome::finished);
}

TEST_CASE("checkpoint: every group round-trips", "[checkpoint]") {
  TempDir dir;
  Quiet q;
  TrainOptions o = tiny_options(dir, "rt.h5");
  o.tokenizer = data::TokenizerKind::bpe, o.vocab_size = 270;
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
  REQUIRE(ck.train->options.tokenizer == data::TokenizerKind::bpe);
  REQUIRE(ck.train->dropout_counter == t.model().dropout_counter());
  REQUIRE(ck.train->train_tokens == t.corpus().train.size());
  // The weights alone: the same model, tokenizer and run, the moments' values not read.
  const Checkpoint w = read_checkpoint(o.out, CheckpointPart::weights);
  REQUIRE(w.sealed);
  REQUIRE(weights(*w.model) == weights(t.model()));
  REQUIRE(w.tokenizer->identity() == ck.tokenizer->identity());
  REQUIRE(w.train->iteration == 3);
  REQUIRE(w.train->options.lr == o.lr);
  REQUIRE_FALSE(w.optim.has_value());
  REQUIRE((w.m.empty() && w.v.empty()));
}

TEST_CASE("train: a walk of two option sets meets each field with its namesake", "[train][options]") {
  TrainOptions a, b;
  a.lr = 0.5f, a.out = "a.h5", a.arch.rope_theta = 500, a.data = {"x.txt"};
  std::vector<std::string> names, differing;
  for_each_option(a, [&](const char* flag, auto&, const char*, const Range&, Choices) { names.push_back(flag); });
  size_t visited = 0;
  for_each_option_pair(a, std::as_const(b), [&](const char* flag, auto& mine, const auto& theirs, const char*,
                                                const Range&, Choices) {
    REQUIRE(flag == names.at(visited++));
    if (!(mine == theirs)) differing.push_back(flag);
    mine = theirs;  // the first set's fields are its own to change
  });
  REQUIRE(visited == names.size());
  REQUIRE(differing == std::vector<std::string>{"data", "out", "rope-theta", "lr"});
  REQUIRE(a.lr == b.lr);
  REQUIRE(a.data.empty());
}

TEST_CASE("train: each enum option's choices name its values in the enum's order", "[train][options]") {
  TrainOptions o;
  int enums = 0;
  for_each_option(o, [&](const char* flag, auto& field, const char*, const Range&, Choices choices) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_enum_v<T>) {
      INFO("--" << flag);
      ++enums;
      REQUIRE_FALSE(choices.empty());
      for (size_t i = 0; i < choices.size(); ++i) {
        REQUIRE(std::string(name(static_cast<T>(i))) == choices[i]);
        REQUIRE(parse_choice<T>(choices[i], choices) == static_cast<T>(i));
      }
      REQUIRE_FALSE(parse_choice<T>("nonsense", choices).has_value());
    }
  });
  REQUIRE(enums == 7);  // --tokenizer, --arch, --norm, --position, --mlp, --precision, --bf16-kernels
}

TEST_CASE("train: Llama-family runs resume bitwise, and their checkpoints hold format_version 3's fields",
          "[train][resume][llama]") {
  TempDir dir;
  Quiet q;
  auto llama = [&](const std::string& out) {
    TrainOptions o = tiny_options(dir, out);
    o.heads = 4, o.arch.arch = ArchPreset::llama, o.arch.kv_heads = 2, o.arch.rope_theta = 500, o.arch.norm_eps = 1e-6;
    apply_arch(o.arch, {"kv-heads"});
    return o;
  };
  const TrainOptions straight = llama("l_straight.h5"), paused = llama("l_paused.h5");
  {
    Trainer a(straight);
    a.run(q.progress);
    Trainer b(paused);
    REQUIRE(b.run(q.progress, nullptr, 5) == Trainer::Outcome::interrupted);
  }
  Trainer resumed(paused.out, Resume{});
  resumed.run(q.progress);
  const Checkpoint ca = read_checkpoint(straight.out);
  REQUIRE(weights(*ca.model) == weights(resumed.model()));  // bitwise
  const nn::GPTConfig& c = ca.config;
  REQUIRE(c.norm == nn::NormKind::rmsnorm);
  REQUIRE(c.position == nn::PositionKind::rope);
  REQUIRE(c.mlp == nn::MlpKind::swiglu);
  REQUIRE(c.hidden() == nn::llama_hidden(16));  // 2/3 of 64, rounded up to 32: 64
  REQUIRE(c.kv_heads() == 2);
  REQUIRE(c.rope_theta == 500.0f);
  REQUIRE(c.norm_eps == 1e-6f);
  REQUIRE_FALSE(c.bias);
  REQUIRE(c.tie_embeddings);
  REQUIRE(ca.train->options.arch.arch == ArchPreset::llama);
  REQUIRE(ca.train->options.arch.norm == nn::NormKind::rmsnorm);
  H5::H5File f(straight.out, H5F_ACC_RDONLY);
  int version = 0;
  f.openAttribute("format_version").read(H5::PredType::NATIVE_INT, &version);
  REQUIRE(version == 3);
  REQUIRE_FALSE(f.nameExists("/model/transformer.wpe.weight"));
  REQUIRE_FALSE(f.nameExists("/model/transformer.h.0.ln_1.bias"));
  // Untied, with LayerNorm and biases: lm_head is its own dataset, and a GPT-2 run stays version 1.
  TrainOptions untied = tiny_options(dir, "untied.h5");
  untied.arch.tie = false;
  Trainer(untied).run(q.progress, nullptr, 2);
  const Checkpoint cu = read_checkpoint(untied.out);
  REQUIRE_FALSE(cu.config.tie_embeddings);
  REQUIRE(cu.model->lm_head != nullptr);
  TrainOptions plain = tiny_options(dir, "plain.h5");
  Trainer(plain).run(q.progress, nullptr, 2);
  H5::H5File p(plain.out, H5F_ACC_RDONLY);
  p.openAttribute("format_version").read(H5::PredType::NATIVE_INT, &version);
  REQUIRE(version == 1);
  REQUIRE_FALSE(p.openGroup("/config").attrExists("norm"));
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
    REQUIRE_THROWS_WITH(read_checkpoint(cut), Catch::Contains("cut.h5' is damaged: it has " +
                                                              std::to_string(bytes.size() / 2) + " bytes"));
  }
  {  // foreign: an HDF5 file of someone else's
    H5::H5File foreign(dir.file("foreign.h5"), H5F_ACC_TRUNC);
    foreign.createGroup("/data");
  }
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("foreign.h5")), Catch::Contains("not a tinygpt checkpoint"));
  edit_checkpoint(copy("version.h5"), [](H5::H5File& f) {
    const int four = 4;
    f.openAttribute("format_version").write(H5::PredType::NATIVE_INT, &four);
  });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("version.h5")),
                      Catch::Contains("format_version 4 is not supported (this tinygpt reads versions 1 to 3)"));
  // Version 3's Llama fields: in a version 1 file, an unknown choice, a value out of range.
  edit_checkpoint(copy("llama_in_v1.h5"), [](H5::H5File& f) { set_text_attribute(f, "/config", "norm", "rmsnorm"); });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("llama_in_v1.h5")),
                      Catch::Contains("/config has format_version 3's Llama fields in a version 1 file"));
  auto version_3 = [](H5::H5File& f) {
    const int three = 3;
    f.openAttribute("format_version").write(H5::PredType::NATIVE_INT, &three);
  };
  edit_checkpoint(copy("norm.h5"), [&](H5::H5File& f) {
    version_3(f);
    set_text_attribute(f, "/config", "norm", "batchnorm");
  });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("norm.h5")),
                      Catch::Contains("/config: unknown norm 'batchnorm' (expected layernorm or rmsnorm)"));
  edit_checkpoint(copy("kv.h5"), [&](H5::H5File& f) {
    version_3(f);
    H5::Group config = f.openGroup("/config");
    set_attribute(config, "n_kv_head", H5::PredType::NATIVE_INT64, int64_t{3});
  });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("kv.h5")), Catch::Contains("n_kv_head 3 does not divide n_head"));
  edit_checkpoint(copy("eps.h5"), [&](H5::H5File& f) {
    version_3(f);
    H5::Group config = f.openGroup("/config");
    set_attribute(config, "norm_eps", H5::PredType::NATIVE_DOUBLE, -1.0);
  });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("eps.h5")), Catch::Contains("norm_eps"));
  // A SentencePiece tokenizer whose model bytes are not a model, or not bytes, or in a version 2 file.
  auto sentencepiece = [&](const std::string& name, int version, bool as_bytes) {
    edit_checkpoint(copy(name), [&](H5::H5File& f) {
      f.openAttribute("format_version").write(H5::PredType::NATIVE_INT, &version);
      set_text_attribute(f, "/tokenizer", "kind", "sentencepiece");
      const hsize_t n = 16;
      H5::Group g = f.openGroup("/tokenizer");
      const std::string junk = "not a model, no.";
      g.createDataSet("model_proto", as_bytes ? H5::PredType::STD_U8LE : H5::PredType::STD_I32LE, H5::DataSpace(1, &n))
          .write(junk.data(), H5::PredType::NATIVE_UCHAR);
    });
    return dir.file(name);
  };
  REQUIRE_THROWS_WITH(read_checkpoint(sentencepiece("sp_junk.h5", 3, true)),
                      Catch::Contains("sp_junk.h5") && Catch::Contains("/tokenizer/model_proto is not a SentencePiece model"));
  REQUIRE_THROWS_WITH(read_checkpoint(sentencepiece("sp_ints.h5", 3, false)),
                      Catch::Contains("is not a dataset of bytes (unsigned 8-bit integers)"));
  REQUIRE_THROWS_WITH(read_checkpoint(sentencepiece("sp_v2.h5", 2, true)),
                      Catch::Contains("/tokenizer kind 'sentencepiece' is format_version 3's, in a version 2 file"));
  // A version 3 file with the model of another architecture than /config says: the datasets differ.
  edit_checkpoint(copy("rope.h5"), [&](H5::H5File& f) {
    version_3(f);
    set_text_attribute(f, "/config", "position", "rope");
  });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("rope.h5")), Catch::Contains("transformer.wpe.weight"));
  edit_checkpoint(copy("missing.h5"), [](H5::H5File& f) { f.unlink("/model/transformer.h.1.mlp.c_fc.bias"); });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("missing.h5")),
                      Catch::Contains("missing.h5") && Catch::Contains("missing dataset /model/transformer.h.1.mlp.c_fc.bias"));
  edit_checkpoint(copy("shape.h5"), [](H5::H5File& f) {
    f.unlink("/model/transformer.ln_f.weight");
    hsize_t dims[1] = {7};
    f.createDataSet("/model/transformer.ln_f.weight", H5::PredType::IEEE_F32LE, H5::DataSpace(1, dims));
  });
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("shape.h5")),
                      Catch::Contains("dataset /model/transformer.ln_f.weight has shape [7], expected [16]"));
  // Resuming from a bad file changes nothing on disk.
  const auto before = std::filesystem::last_write_time(dir.file("shape.h5"));
  REQUIRE_THROWS(Trainer(dir.file("shape.h5"), Resume{}));
  REQUIRE(std::filesystem::last_write_time(dir.file("shape.h5")) == before);
}

TEST_CASE("checkpoint: the seal is checked before libhdf5 reads a byte", "[checkpoint][errors]") {
  TempDir dir;
  Quiet q;
  const TrainOptions o = tiny_options(dir, "sealed.h5");
  Trainer(o).run(q.progress, nullptr, 2);
  REQUIRE(read_checkpoint(o.out).sealed);
  std::ifstream in(o.out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  REQUIRE(bytes.rfind("tinygpt checkpoint seal 1\nsha256 ", 0) == 0);
  // The whole file in memory, or streamed through the digest with libhdf5 reading from disk after.
  for (const CheckpointPart part : {CheckpointPart::everything, CheckpointPart::weights}) {
    INFO((part == CheckpointPart::weights ? "weights" : "everything"));
    for (size_t at : {size_t{600}, bytes.size() / 2, bytes.size() - 1}) {  // one flipped bit anywhere after the seal
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
      REQUIRE_THROWS_WITH(read_checkpoint(dir.write("flipped.h5", flipped), part),
                          Catch::Equals("checkpoint '" + dir.file("flipped.h5") + "' is damaged: checksum mismatch"));
    }
    std::string seal = bytes;
    seal[40] = seal[40] == 'a' ? 'b' : 'a';  // one of the digest's hex digits
    REQUIRE_THROWS_WITH(read_checkpoint(dir.write("digest.h5", seal), part), Catch::Contains("is damaged: checksum mismatch"));
    seal = bytes;
    seal[26] = 'S';  // "sha256" in the seal's second line
    REQUIRE_THROWS_WITH(read_checkpoint(dir.write("seal.h5", seal), part), Catch::Contains("is damaged: its seal is unreadable"));
    REQUIRE_THROWS_WITH(read_checkpoint(dir.write("longer.h5", bytes + "x"), part), Catch::Contains("its seal says"));
    REQUIRE_THROWS_WITH(read_checkpoint(dir.write("short.h5", bytes.substr(0, 300)), part),
                        Catch::Contains("truncated inside its seal"));
    // Without a seal (h5py, older files) the same bytes still load, marked unverified.
    const std::string plain = dir.write("plain.h5", bytes);
    strip_seal(plain);
    const Checkpoint ck = read_checkpoint(plain, part);
    REQUIRE_FALSE(ck.sealed);
    REQUIRE(weights(*ck.model) == weights(*read_checkpoint(o.out).model));
  }
}

TEST_CASE("checkpoint: values from the file are range-checked before they are used", "[checkpoint][errors]") {
  TempDir dir;
  Quiet q;
  const TrainOptions o = tiny_options(dir, "base.h5");
  Trainer(o).run(q.progress, nullptr, 2);
  int copies = 0;
  // Each edit is tried sealed again (a crafted file) and without a seal (read in a child first).
  auto refused = [&](const std::function<void(H5::H5File&)>& edit, const std::string& message) {
    for (Seal seal : {Seal::again, Seal::none}) {
      const std::string path = dir.file(fmt::format("edit{}.h5", copies++));
      std::filesystem::copy_file(o.out, path);
      edit_checkpoint(path, edit, seal);
      INFO(message);
      REQUIRE_THROWS_WITH(read_checkpoint(path), Catch::Contains(path) && Catch::Contains(message));
      REQUIRE_THROWS_WITH(Trainer(path, Resume{}), Catch::Contains(message));
    }
  };
  auto config = [](const char* name, int64_t v) {
    return [=](H5::H5File& f) {
      H5::Group g = f.openGroup("/config");
      set_attribute(g, name, H5::PredType::NATIVE_INT64, v);
    };
  };
  refused(config("n_layer", 300000), "attribute 'n_layer' of /config must be at most 1024 (got 300000)");
  refused(config("vocab_size", 1000000000), "attribute 'vocab_size' of /config must be at most 16777216");
  refused(config("n_embd", 4611686018427387904), "must be at most 65536 (got 4611686018427387904)");
  refused(config("n_layer", 3), "missing dataset /model/transformer.h.2.ln_1.weight");
  refused(config("n_layer", 1), "dataset /model/transformer.h.1.attn.c_attn.bias is not a parameter");
  refused(config("n_head", 3), "not divisible by n_head 3");
  refused([](H5::H5File& f) { set_attribute(f, "format_version", H5::PredType::NATIVE_DOUBLE, 1.5); },
          "attribute 'format_version' of / must be an integer (got 1.5)");
  refused([](H5::H5File& f) {
            H5::Group g = f.openGroup("/config");
            set_attribute(g, "block_size", H5::PredType::NATIVE_DOUBLE, 1e300);
          },
          "attribute 'block_size' of /config must be an integer (got 1e+300)");
  refused([](H5::H5File& f) {
            H5::Group g = f.openGroup("/train");
            const uint64_t zeros[4] = {0, 0, 0, 0};
            g.openAttribute("rng_state").write(H5::PredType::NATIVE_UINT64, zeros);
          },
          "all-zero generator state");
  refused([](H5::H5File& f) {
            H5::Group g = f.openGroup("/train");
            set_attribute(g, "world_size", H5::PredType::NATIVE_INT64, int64_t{4611686018427387904});
          },
          "attribute 'world_size' of /train must be at most 65536");
  refused([](H5::H5File& f) {
            H5::Group g = f.openGroup("/train");
            set_attribute(g, "batch", H5::PredType::NATIVE_INT64, int64_t{0});
          },
          "attribute 'batch' of /train must be at least 1 (got 0)");
  refused([](H5::H5File& f) {
            H5::Group g = f.openGroup("/optim");
            set_attribute(g, "beta2", H5::PredType::NATIVE_DOUBLE, std::nan(""));
          },
          "attribute 'beta2' of /optim must be a finite number (got nan)");
  auto overwrite = [](const char* dataset, float value) {
    return [=](H5::H5File& f) {
      H5::DataSet d = f.openDataSet(dataset);
      std::vector<float> x(static_cast<size_t>(d.getSpace().getSimpleExtentNpoints()), 0.5f);
      x[3] = value;
      d.write(x.data(), H5::PredType::NATIVE_FLOAT);
    };
  };
  refused(overwrite("/model/transformer.h.0.ln_1.weight", std::nanf("")),
          "dataset /model/transformer.h.0.ln_1.weight holds nan at element 3");
  refused(overwrite("/optim/m/transformer.wpe.weight", INFINITY), "dataset /optim/m/transformer.wpe.weight holds inf");
  refused(overwrite("/optim/v/transformer.ln_f.bias", -1.0f), "a second moment cannot be negative");
  // Links are not followed out of the file, nor round in circles.
  {
    H5::H5File other(dir.file("other.h5"), H5F_ACC_TRUNC);
    hsize_t dims[1] = {16};
    other.createDataSet("/bias", H5::PredType::IEEE_F32LE, H5::DataSpace(1, dims));
  }
  refused([&](H5::H5File& f) {
            f.unlink("/model/transformer.ln_f.bias");
            H5Lcreate_external(dir.file("other.h5").c_str(), "/bias", f.getId(), "/model/transformer.ln_f.bias",
                               H5P_DEFAULT, H5P_DEFAULT);
          },
          "missing dataset /model/transformer.ln_f.bias");
  refused([](H5::H5File& f) { H5Lcreate_hard(f.getId(), "/", f.getId(), "/config/loop", H5P_DEFAULT, H5P_DEFAULT); },
          "/config/loop: links back to a group that contains it");
}

TEST_CASE("checkpoint: files that are not regular files are refused before they are opened", "[checkpoint][errors]") {
  TempDir dir;
  std::filesystem::create_directory(dir.file("folder.h5"));
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("folder.h5")), Catch::Contains("folder.h5': is a directory, not a file"));
  REQUIRE(mkfifo(dir.file("pipe.h5").c_str(), 0600) == 0);  // opening it for reading would wait for a writer
  REQUIRE_THROWS_WITH(read_checkpoint(dir.file("pipe.h5")), Catch::Contains("pipe.h5': is a FIFO"));
  REQUIRE_THROWS_WITH(read_checkpoint("/dev/zero"), Catch::Contains("'/dev/zero': is a device"));
}

TEST_CASE("checkpoint: a failed write leaves the previous checkpoint intact", "[checkpoint]") {
  TempDir dir;
  Quiet q;
  const TrainOptions o = tiny_options(dir, "keep.h5");
  Trainer t(o);
  t.run(q.progress, nullptr, 2);
  std::ifstream in(o.out, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(in)), {});
  t.model().named_parameters()[3].second.data()[5] = NAN;  // a weight the writer must refuse
  REQUIRE_THROWS_WITH(t.save(), Catch::Contains("cannot write checkpoint") &&
                                    Catch::Contains("transformer.h.0.ln_1.bias holds nan at element 5"));
  std::ifstream again(o.out, std::ios::binary);
  REQUIRE(std::string((std::istreambuf_iterator<char>(again)), {}) == before);
  REQUIRE(read_checkpoint(o.out).train->iteration == 2);
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("")))  // no temporary file left behind
    REQUIRE(entry.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("train: a loss that becomes NaN stops the run and keeps the last checkpoint", "[train][errors]") {
  TempDir dir;
  Quiet q;
  TrainOptions o = tiny_options(dir, "nan.h5");
  o.eval_every = 12;  // no validation (also nan) before the guard gives up
  Trainer t(o);
  REQUIRE(t.run(q.progress, nullptr, 5) == Trainer::Outcome::interrupted);
  std::ifstream in(o.out, std::ios::binary);
  const std::string saved((std::istreambuf_iterator<char>(in)), {});
  t.model().named_parameters().back().second.data()[0] = NAN;  // ln_f.bias: every logit turns NaN
  // Not one step is applied: the spike guard skips each, and stops after --spike-patience of them.
  REQUIRE_THROWS_WITH(t.run(q.progress), Catch::Contains("5 steps in a row were not applied (the last, iteration 10: "
                                                         "the training loss became nan)") &&
                                             Catch::Contains("without saving over '" + o.out + "'"));
  std::ifstream again(o.out, std::ios::binary);
  REQUIRE(std::string((std::istreambuf_iterator<char>(again)), {}) == saved);
  REQUIRE(read_checkpoint(o.out).train->iteration == 5);
  // The step that stopped the run has its row, as every skipped one before it.
  const std::vector<io::LogRow> rows = io::read_log(t.log_path());
  REQUIRE(rows.size() == 10);
  for (size_t i = 5; i < 10; ++i) {
    REQUIRE(rows[i].iter == static_cast<int64_t>(i) + 1);
    REQUIRE(rows[i].step->skipped);
    REQUIRE(std::isnan(rows[i].train_loss));
  }
  for (const io::LogRow& row : rows) REQUIRE(row.step->peak_share <= 1.0);  // the peak is never below a step's rate
}

TEST_CASE("train: a checkpoint saved at a step whose loss is not finite is read and resumed", "[train][errors]") {
  TempDir dir;
  Quiet q;
  TrainOptions o = tiny_options(dir, "skipped.h5");
  o.eval_every = 100, o.ckpt_every = 1, o.iters = 7, o.val_fraction = 0;  // a validation loss would be nan too
  {
    Trainer t(o);
    REQUIRE(t.run(q.progress, nullptr, 5) == Trainer::Outcome::interrupted);
    // A finite weight whose products overflow: ln_f's first gain times a normalized value past
    // 1.13 is inf, and the logits inf - inf.
    bool found = false;
    for (auto& [name, p] : t.model().named_parameters())
      if (name == "transformer.ln_f.weight") p.data()[0] = 3e38f, found = true;
    REQUIRE(found);
    REQUIRE(t.run(q.progress) == Trainer::Outcome::finished);  // iterations 6 and 7 not applied, each saved
  }
  const Checkpoint ck = read_checkpoint(o.out);
  REQUIRE(ck.train->iteration == 7);
  REQUIRE(std::isnan(ck.train->train_loss));
  Trainer resumed(o.out, Resume{}.set_iters(8));
  REQUIRE(resumed.run(q.progress) == Trainer::Outcome::finished);
  REQUIRE(std::isnan(resumed.state().train_loss));
  REQUIRE(io::read_log(resumed.log_path()).back().step->skipped);
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
  REQUIRE_THROWS_WITH(Trainer(o), Catch::Contains("absent.txt': no such file"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("x.h5")));
}
