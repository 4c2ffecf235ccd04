// Data-parallel training with two ranks (run by ctest as `mpirun -np 2 ... distributed_tests`).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tinygpt/autograd/random.h"
#include "gradcheck.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/optim/adamw.h"
#include "tinygpt/optim/grad_clip.h"
#include "temp_files.h"
#include "train_helpers.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/distributed.h"
#include "tinygpt/train/multiple_choice.h"
#include "tinygpt/train/trainer.h"

using namespace tinygpt;
using namespace tinygpt::train;

namespace {

Communicator two_ranks() {
  Communicator comm = Communicator::world(std::chrono::seconds(60));
  REQUIRE(comm.size() == 2);  // run me with mpirun -np 2
  return comm;
}

// A folder every rank sees: rank 0 makes it and tells the others its name.
struct SharedDir {
  explicit SharedDir(const Communicator& comm) : comm(comm) {
    if (comm.is_root()) dir = std::make_unique<testing::TempDir>();
    path = comm.broadcast(comm.is_root() ? dir->file("") : "");
  }
  ~SharedDir() {  // nobody leaves (and rank 0 removes the folder) before all are done
    try {
      comm.sum(0);
    } catch (const std::exception&) {  // a failed test already: its own message matters
    }
  }
  std::string file(const std::string& name) const { return path + name; }
  const Communicator& comm;
  std::unique_ptr<testing::TempDir> dir;
  std::string path;
};

TrainOptions options_in(const SharedDir& dir, const std::string& out) {
  TrainOptions o;
  if (dir.comm.is_root()) {
    std::string text;
    for (int i = 0; i < 50; ++i) text += "Now is the winter of our discontent made glorious summer by this sun.\n";
    std::ofstream(dir.file("text.txt")) << text;
  }
  dir.comm.sum(0);  // the text exists before anyone reads it
  o.data = {dir.file("text.txt")};
  o.out = dir.file(out);
  o.layers = 2, o.heads = 2, o.embd = 16, o.block = 16, o.batch = 3;
  o.iters = 8, o.warmup = 2, o.eval_every = 4, o.eval_iters = 2, o.ckpt_every = 100;
  o.lr = 1e-2, o.dropout = 0.1, o.seed = 11, o.threads = 1;
  return o;
}

std::vector<float> all_weights(const nn::GPT& model) {
  std::vector<float> out;
  for (const auto& w : testing::weights(model)) out.insert(out.end(), w.begin(), w.end());
  return out;
}

}  // namespace

TEST_CASE("mpi: two ranks with batch B give the gradients of one process with batch 2B", "[mpi]") {
  const Communicator comm = two_ranks();
  const nn::GPTConfig gpt2{.vocab_size = 13, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 16};
  nn::GPTConfig llama = nn::llama_style(gpt2);
  llama.n_kv_head = 1;
  for (const nn::GPTConfig& c : {gpt2, llama}) {  // GPT-2, and the Llama pieces with one shared key/value head
    const int64_t B = 3, T = 8;
    Rng rng(7);  // the same 2B windows on both ranks; rank r takes rows [r B, (r + 1) B)
    std::vector<int32_t> ids(2 * B * T), targets(2 * B * T);
    for (auto& x : ids) x = static_cast<int32_t>(rng.below(13));
    for (auto& x : targets) x = static_cast<int32_t>(rng.below(13));
    const std::span<const int32_t> my_ids(ids.data() + comm.rank() * B * T, B * T);
    const std::span<const int32_t> my_targets(targets.data() + comm.rank() * B * T, B * T);

    nn::GPT ranked(c, 3), single(c, 3);
    Tensor loss = ranked.forward(my_ids, B, T, my_targets).loss;
    loss.backward();
    Buffer flat;
    const std::vector<Tensor> params = ranked.parameters();
    comm.average_gradients(params, flat, 1000);  // small buckets: several in flight
    Tensor whole = single.forward(ids, 2 * B, T, targets).loss;
    whole.backward();
    REQUIRE(comm.mean(loss.item()) == Approx(whole.item()).epsilon(1e-6));
    const std::vector<Tensor> reference = single.parameters();
    for (size_t i = 0; i < params.size(); ++i)
      testing::require_close(params[i].grad().to_vector(), reference[i].grad().to_vector(), 1e-6);

    // The same update everywhere: clipping by the global norm after averaging, then AdamW.
    optim::AdamW a(ranked.named_parameters(), {}), b(single.named_parameters(), {});
    a.step(1e-3f, optim::clip_scale(optim::global_grad_norm(params), 0.5));
    b.step(1e-3f, optim::clip_scale(optim::global_grad_norm(reference), 0.5));
    testing::require_close(all_weights(ranked), all_weights(single), 1e-6);
    comm.require_same(parameter_checksum(params), "parameters");
  }
}

TEST_CASE("mpi: diverged parameters are caught on every rank", "[mpi]") {
  const Communicator comm = two_ranks();
  REQUIRE_NOTHROW(comm.require_same(42, "answers"));
  REQUIRE_THROWS_WITH(comm.require_same(static_cast<uint64_t>(comm.rank()), "answers"),
                      Catch::Contains("answers differ across ranks") && Catch::Contains("rank 1: 0x"));
  REQUIRE(comm.all_gather(static_cast<uint64_t>(10 + comm.rank())) == std::vector<uint64_t>{10, 11});
  REQUIRE(comm.sum(1.5) == 3.0);
  REQUIRE(comm.any(comm.rank() == 1));
  REQUIRE_FALSE(comm.any(false));
}

TEST_CASE("mpi: a two-rank run resumes exactly, and only with two ranks", "[mpi]") {
  const Communicator comm = two_ranks();
  SharedDir dir(comm);
  testing::Quiet quiet;
  const TrainOptions o = options_in(dir, "whole.h5");
  std::vector<float> whole_weights;
  {
    Trainer t(o, comm);
    t.run(quiet.progress);
    whole_weights = all_weights(t.model());
    // Every rank has the same parameters (the trainer also checked at each evaluation).
    comm.require_same(parameter_checksum(t.model().parameters()), "parameters");
  }
  TrainOptions half = o;
  half.out = dir.file("halves.h5");
  {
    Trainer t(half, comm);
    REQUIRE(t.run(quiet.progress, nullptr, 4) == Trainer::Outcome::interrupted);
  }
  comm.sum(0);  // rank 0 has written the checkpoint before anyone reads it
  {
    Trainer t(half.out, Resume{}, comm);
    REQUIRE(t.state().iteration == 4);
    t.run(quiet.progress);
    REQUIRE(all_weights(t.model()) == whole_weights);  // bitwise
  }
  if (comm.is_root()) {
    const auto whole = testing::loss_columns(dir.file("whole.csv"));
    REQUIRE(whole.size() == 9);  // a header and 8 iterations
    REQUIRE(whole == testing::loss_columns(dir.file("halves.csv")));
    const Checkpoint ck = read_checkpoint(half.out);
    REQUIRE(ck.train->sampler_states.size() == 2);
    REQUIRE(ck.train->sampler_states[0] != ck.train->sampler_states[1]);  // each rank its own batches
  }
  comm.sum(0);
  // The same checkpoint with one process: refused, with the command that would work (asked by
  // one rank: two single processes at once would be two writers of the run, refused by its lock).
  if (comm.is_root())
    REQUIRE_THROWS_WITH(Trainer(half.out, Resume{}, Communicator::single()),
                        Catch::Contains("2 processes") && Catch::Contains("mpirun -np 2"));
  comm.sum(0);
}

TEST_CASE("mpi: a one-process checkpoint is not resumed by two ranks", "[mpi]") {
  const Communicator comm = two_ranks();
  SharedDir dir(comm);
  TrainOptions o = options_in(dir, "one.h5");
  o.iters = 2;
  if (comm.is_root()) {
    testing::Quiet quiet;
    Trainer(o, Communicator::single()).run(quiet.progress);
  }
  comm.sum(0);
  REQUIRE_THROWS_WITH(Trainer(o.out, Resume{}, comm),
                      Catch::Contains("1 process,") && Catch::Contains("without mpirun"));
}

TEST_CASE("mpi: two ranks score a task, each its share, to one process's acc and acc_norm bits", "[mpi]") {
  const Communicator comm = two_ranks();
  SharedDir dir(comm);
  TrainOptions o = options_in(dir, "task.h5");
  if (comm.is_root()) {
    std::ofstream task(dir.file("choices.jsonl"));
    const char* endings[] = {"\" of our\"", "\" summer\"", "\" by this sun\"", "\"ent made\""};
    for (int i = 0; i < 37; ++i)  // an odd count: the shares differ by a group
      task << "{\"ctx\": \"Now is the winter" << std::string(static_cast<size_t>(i % 5), 'e') << "\", \"endings\": ["
           << endings[i % 4] << ", " << endings[(i + 1) % 4] << ", " << endings[(i + 2) % 4] << "], \"label\": " << i % 3
           << "}\n";
  }
  comm.sum(0);
  o.eval_task = dir.file("choices.jsonl"), o.iters = 4;
  testing::Quiet quiet;
  Trainer t(o, comm);
  t.run(quiet.progress);
  const std::optional<Trainer::Evaluation> e = t.evaluate();
  REQUIRE(e);
  REQUIRE(e->task);
  comm.sum(0);  // the checkpoint is written
  // One process scoring every example of the saved model.
  const Checkpoint ck = read_checkpoint(o.out);
  const std::vector<ChoiceExample> examples = read_choice_task(o.eval_task);
  const ChoiceRows rows = choice_rows(examples, *ck.tokenizer, ck.config.block_size, "task");
  const ChoiceScores one = tally(examples, score_choices(*ck.model, rows, o.batch));
  REQUIRE(e->task->examples == 37);
  REQUIRE(one.examples == 37);
  REQUIRE(e->task->acc == one.acc());  // bitwise
  REQUIRE(e->task->acc_norm == one.acc_norm());
  REQUIRE(one.correct > 0);
  REQUIRE(one.correct < 37);
}
