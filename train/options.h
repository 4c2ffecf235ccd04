#pragma once
// Everything a training run is configured by. The same list of fields binds the command-line
// flags and is stored in (and restored from) the checkpoint's /train group.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../data/tokenizer.h"
#include "../io/numbers.h"
#include "../nn/gpt.h"

namespace tinygpt::train {

// How a run starts: a new run takes its tokenizer from the data and the flags; --init-from takes
// the model and tokenizer from a checkpoint (fine-tuning); --resume continues a saved run.
enum class RunStart { fresh, init_from, resume };

// The Debian `fortunes` package's plain-text files: the corpus used when --data is not given.
constexpr const char* kDefaultCorpusDir = "/usr/share/games/fortunes";

// --arch: the pieces' defaults of a family (apply_arch).
enum class ArchPreset { gpt2, llama };
const char* name(ArchPreset preset);  // "gpt2", "llama"

// The model's architecture (format_version 3's /config fields): --arch sets the pieces' defaults,
// and a piece given on its own wins (apply_arch).
struct ArchOptions {
  ArchPreset arch = ArchPreset::gpt2;
  nn::NormKind norm = nn::NormKind::layernorm;
  nn::PositionKind position = nn::PositionKind::learned;
  nn::MlpKind mlp = nn::MlpKind::gelu;
  double norm_eps = 1e-5, rope_theta = 10000;
  int64_t ffn_hidden = 0;  // 0: 4 --embd
  int64_t kv_heads = 0;    // 0: --heads
  bool bias = true, tie = true;
};

struct TrainOptions {
  std::vector<std::string> data, val_data;  // text files, or folders of token shards (run_data.h)
  std::string data_weights;  // several --data folders mixed: "0.8,0.2" (empty: end to end)
  double val_fraction = 0.1;
  std::string out = "tinygpt.h5";
  data::TokenizerKind tokenizer = data::TokenizerKind::chars;
  int64_t vocab_size = 512;
  std::string tokenizer_from;  // a checkpoint or tokenizer file whose tokenizer to use (GPT-2's for its shards)
  std::string tokenizer_model;  // --tokenizer sentencepiece: the SentencePiece model file
  std::string eval_task;  // a multiple-choice task scored at every evaluation (multiple_choice.h); empty: none
  int64_t layers = 4, heads = 4, embd = 128, block = 64;
  ArchOptions arch;
  double dropout = 0.0;
  int64_t batch = 12, iters = 2000;
  double lr = 1e-3, min_lr = 1e-4;  // the command line's --min-lr defaults to --lr / 10
  int64_t warmup = 100;
  int64_t lr_decay_iters = 0;  // the cosine reaches min_lr here; 0: at --iters (nanoGPT's default)
  double beta1 = 0.9, beta2 = 0.99;
  double weight_decay = 0.1, grad_clip = 1.0;
  int64_t grad_accum = 1;
  // The loss-spike guard (spike_guard.h): factors over the recent median (0: off), its window, and
  // the skipped steps in a row that stop the run.
  double spike_loss = 1.5, spike_grad = 10.0;
  int64_t spike_window = 50, spike_patience = 5;
  int64_t eval_every = 250, eval_iters = 20, ckpt_every = 500, log_every = 10;
  int64_t sample_every = 0;  // 0: no samples in the log
  bool keep_best = false;    // also keep <out>.best.h5, the checkpoint with the lowest validation loss
  int64_t snapshot_every = 0;  // also keep <out stem>.step<N>.h5 every N iterations (0: none)
  int64_t seed = static_cast<int64_t>(kDefaultSeed), threads = 0;
  Precision precision = Precision::fp32;  // of the matrix products (autograd/precision.h)
  Bf16Kernels bf16_kernels = Bf16Kernels::rounded;  // which kernels bf16 products run on (precision.h)
};

// The values a text option may take (empty: any); listed in --help and checked by validate(). An
// option that is an enum has its values' names as choices, in the enum's order: choices[i] names
// E(i) (tests check each against the enum's name()).
using Choices = std::span<const char* const>;

// The value of an enum option that `text` names, or nullopt (choice_problem says why).
template <class E>
std::optional<E> parse_choice(const std::string& text, Choices choices) {
  for (size_t i = 0; i < choices.size(); ++i)
    if (text == choices[i]) return static_cast<E>(i);
  return std::nullopt;
}

inline constexpr const char* kTokenizerChoices[] = {"char", "bpe", "sentencepiece"};
inline constexpr const char* kPrecisionChoices[] = {"fp32", "bf16"};
inline constexpr const char* kBf16KernelChoices[] = {"rounded", "native"};  // Bf16Kernels' first two
inline constexpr const char* kArchChoices[] = {"gpt2", "llama"};
inline constexpr const char* kNormChoices[] = {"layernorm", "rmsnorm"};
inline constexpr const char* kPositionChoices[] = {"learned", "rope"};
inline constexpr const char* kMlpChoices[] = {"gelu", "swiglu"};

// Settings a resumed run may change: they do not alter the numbers of the steps already taken
// (the schedule changes from the resumed iteration on; the optimizer keeps its moments).
inline constexpr const char* kResumeSettings[] = {"iters",      "out",        "threads",   "log-every",
                                                  "eval-every", "eval-iters", "ckpt-every", "sample-every",
                                                  "keep-best",  "snapshot-every", "lr",         "min-lr",    "warmup",
                                                  "lr-decay-iters", "data",   "val-data", "spike-loss", "spike-grad",
                                                  "spike-patience", "eval-task", "bf16-kernels"};

// Worker threads, for every command that takes --threads (0: all cores).
inline constexpr io::Range kThreadRange{0, 1024};

using io::Range;

// visit(flag_name, field, help, range, choices) for every architecture option (train and bench).
template <class Arch, class Visit>  // Arch: ArchOptions, const or not
void for_each_arch_option(Arch& o, Visit&& visit) {
  visit("arch", o.arch, "gpt2, or llama: rmsnorm, rope, swiglu of llama2.c's width (2/3 of 4 --embd, rounded up to "
        "a multiple of 32), --no-bias, --tie; each piece's flag overrides it", Range{}, kArchChoices);
  visit("norm", o.norm, "the norm before each sublayer and at the end", Range{}, kNormChoices);
  visit("norm-eps", o.norm_eps, "the norms' epsilon", Range{0, nn::kMaxNormEps, true}, Choices{});
  visit("position", o.position, "learned position embeddings (wpe) or rotary ones (RoPE)", Range{}, kPositionChoices);
  visit("rope-theta", o.rope_theta, "RoPE's base: pair i of a head turns by position * theta^(-2i / head size)",
        Range{0, nn::kMaxRopeTheta, true}, Choices{});
  visit("mlp", o.mlp, "the feed-forward: GELU, or SwiGLU (silu(gate) * up)", Range{}, kMlpChoices);
  visit("ffn-hidden", o.ffn_hidden, "the feed-forward's hidden width (0: 4 --embd, or llama2.c's rule with --arch llama)",
        Range{0, nn::kMaxFfnHidden}, Choices{});
  visit("kv-heads", o.kv_heads, "key/value heads, dividing --heads (grouped-query attention; 1: multi-query; 0: --heads)",
        Range{0, nn::kMaxHeads}, Choices{});
  visit("bias", o.bias, "biases on every Linear and LayerNorm (--no-bias: none)", Range{}, Choices{});
  visit("tie", o.tie, "the output layer is the token embedding wte (--no-tie: an lm_head of its own)", Range{}, Choices{});
}

// The --arch's values for the pieces whose flags are not in `given` (names without "--").
void apply_arch(ArchOptions& o, const std::vector<std::string>& given);
// `sizes` (vocabulary, block, layers, heads, width) with the architecture's pieces; throws on a
// combination the model refuses.
nn::GPTConfig with_arch(nn::GPTConfig sizes, const ArchOptions& o);
// The architecture options that give `config`'s pieces (a run started from a checkpoint's model).
ArchOptions arch_of(const nn::GPTConfig& config);

// visit(flag_name, field, help, range, choices) for every option: one list for the CLI and the
// checkpoint (text and switch options get an empty range that they ignore; only some text options
// have choices).
template <class Options, class Visit>
void for_each_option(Options& o, Visit&& visit_option) {
  constexpr double kMany = 1e12;
  const Range text{};
  auto visit = [&](const char* name, auto& field, const char* help, const Range& range, Choices choices = {}) {
    visit_option(name, field, help, range, choices);
  };
  visit("data", o.data,
        "training text files, or a folder of token shards (tinygpt prepare's or llm.c's) (default: the fortunes "
        "package's files)",
        text);
  visit("data-weights", o.data_weights,
        "with several --data folders: how often each one's windows are drawn, e.g. 0.8,0.2 (default: the folders end "
        "to end, as one text)",
        text);
  visit("val-data", o.val_data,
        "validation text files, or a folder of token shards (its val split, else its train split) (default: the "
        "last --val-fraction of the training tokens, or each --data folder's val split)",
        text);
  visit("val-fraction", o.val_fraction,
        "share of the training tokens held out for validation, where there is no validation text (no --val-data; a "
        "--data folder without val shards)",
        Range{0, 1, false, true});
  visit("out", o.out, "checkpoint to write (HDF5); the CSV log and loss plot go beside it", text);
  visit("tokenizer", o.tokenizer, "how text becomes tokens", Range{}, kTokenizerChoices);
  visit("vocab-size", o.vocab_size, "BPE vocabulary size", Range{256, nn::kMaxVocab});
  visit("tokenizer-model", o.tokenizer_model,
        "with --tokenizer sentencepiece: the SentencePiece model file (e.g. Llama's tokenizer.model), stored in the "
        "checkpoint",
        text);
  visit("tokenizer-from", o.tokenizer_from,
        "use the tokenizer of this checkpoint or tokenizer file instead of making one (e.g. an imported GPT-2's, for "
        "shards tokenized by GPT-2)",
        text);
  visit("layers", o.layers, "transformer blocks", Range{1, nn::kMaxLayers});
  visit("heads", o.heads, "attention heads per block", Range{1, nn::kMaxHeads});
  visit("embd", o.embd, "embedding width (a multiple of --heads)", Range{1, nn::kMaxEmbd});
  visit("block", o.block, "context length in tokens", Range{1, nn::kMaxBlock});
  for_each_arch_option(o.arch, visit);
  visit("dropout", o.dropout, "dropout probability", Range{0, 1, false, true});
  visit("batch", o.batch, "sequences per micro-batch", Range{1, 65536});
  visit("iters", o.iters, "total training iterations", Range{1, kMany});
  visit("lr", o.lr, "peak learning rate", Range{0, 10, true});
  visit("min-lr", o.min_lr, "learning rate at the end of the cosine decay (at most --lr; default --lr / 10)", Range{0, 10});
  visit("warmup", o.warmup, "linear warm-up iterations", Range{0, kMany});
  visit("lr-decay-iters", o.lr_decay_iters, "iteration where the cosine decay reaches --min-lr (0: --iters)", Range{0, kMany});
  visit("beta1", o.beta1, "AdamW's first-moment decay", Range{0, 1, false, true});
  visit("beta2", o.beta2, "AdamW's second-moment decay (GPT-2 recipes use 0.95)", Range{0, 1, false, true});
  visit("weight-decay", o.weight_decay, "AdamW decoupled weight decay (weights and embeddings only)", Range{0, 100});
  visit("grad-clip", o.grad_clip, "clip the global gradient norm to this (0: off)", Range{0, 1e9});
  visit("grad-accum", o.grad_accum, "micro-batches per iteration", Range{1, 65536});
  visit("spike-loss", o.spike_loss,
        "skip a step whose loss is more than this times the median of the last --spike-window applied steps' (0: "
        "only a loss that is not finite)",
        Range{0, 1e6});
  visit("spike-grad", o.spike_grad, "the same for the gradient norm before clipping (0: only one that is not finite)",
        Range{0, 1e6});
  visit("spike-window", o.spike_window, "applied steps whose median --spike-loss and --spike-grad compare with",
        Range{5, 100000});
  visit("spike-patience", o.spike_patience, "skipped steps in a row that stop the run, keeping its last checkpoint",
        Range{1, kMany});
  visit("eval-every", o.eval_every, "iterations between validation-loss estimates", Range{1, kMany});
  visit("eval-iters", o.eval_iters, "batches per validation-loss estimate", Range{1, 1e6});
  visit("eval-task", o.eval_task,
        "a multiple-choice benchmark in HellaSwag's JSON lines (ctx, endings, label), scored at every evaluation: "
        "acc and acc_norm in the log",
        text);
  visit("ckpt-every", o.ckpt_every, "iterations between checkpoints", Range{1, kMany});
  visit("log-every", o.log_every, "iterations between progress lines when not on a terminal", Range{1, kMany});
  visit("sample-every", o.sample_every, "iterations between short samples in the log (0: none)", Range{0, kMany});
  visit("keep-best", o.keep_best, "also keep the checkpoint with the lowest validation loss, as <out>.best.h5", Range{});
  visit("snapshot-every", o.snapshot_every,
        "also keep a copy of the checkpoint every N iterations, as <out>.step<N>.h5 (0: none): what tinygpt explain "
        "--ckpts shows forming",
        Range{0, kMany});
  visit("seed", o.seed, "seed for initialization, batches and dropout", Range{0, 9223372036854775807.0});
  visit("threads", o.threads, "worker threads (0: all cores)", kThreadRange);
  visit("precision", o.precision,
        "matrix products in fp32, or bf16: operands rounded to bfloat16, sums in float; weights, gradients, AdamW, "
        "LayerNorm, softmax, GELU and the loss stay fp32",
        Range{}, kPrecisionChoices);
  visit("bf16-kernels", o.bf16_kernels,
        "bf16 products on the float kernels with rounded operands (the same bits on every machine), or native: "
        "AVX512_BF16's vdpbf16ps, faster where the CPU has it at twice the FMA rate, its sums in the instruction's "
        "own order (the checkpoint records which)",
        Range{}, kBf16KernelChoices);
}

// visit(flag_name, a's field, b's field, help, range, choices) for every option of two sets, in one
// walk: a first walk of b notes where each of its fields is, in for_each_option's order, and the
// walk of a takes them in that order, so each field meets its namesake, of its own type.
template <class A, class B, class Visit>
void for_each_option_pair(A& a, B& b, Visit&& visit) {
  std::vector<const void*> in_b;
  for_each_option(b, [&](const char*, const auto& field, const char*, const Range&, Choices) { in_b.push_back(&field); });
  size_t next = 0;
  for_each_option(a, [&](const char* name, auto& field, const char* help, const Range& range, Choices choices) {
    using Field = std::remove_cvref_t<decltype(field)>;
    using Other = std::conditional_t<std::is_const_v<B>, const Field, Field>;
    visit(name, field, *static_cast<Other*>(const_cast<void*>(in_b[next++])), help, range, choices);
  });
}

// The one a resumed run may change (kResumeSettings).
bool resume_may_change(const std::string& name);

// The output paths a run writes beside its checkpoint `out` (beside the file a symbolic link leads
// to): the CSV log, the loss plot and, with keep_best and snapshot_every, the best checkpoint and
// the snapshots.
std::string log_path_for(const std::string& out);
std::string plot_path_for(const std::string& out);
std::string metrics_path_for(const std::string& out);
std::string best_path_for(const std::string& out);
std::string snapshot_path_for(const std::string& out, int64_t iteration);  // run.h5 -> run.step500.h5

// What is wrong with `value` for `choices` ("must be char or bpe (got 'x')"); empty when nothing is.
std::string choice_problem(const std::string& value, Choices choices);

// The name in `names` nearest to a mistyped `word` (at most two edits away, or the start of a longer
// name), for "did you mean" hints; empty when none is that near.
std::string nearest_name(const std::string& word, const std::vector<std::string>& names);

// Throws a clear error for impossible settings: a number outside its range ("--batch must be at
// least 1 (got 0)"), n_embd % n_head, min_lr > lr, more tokens than a 64-bit count holds, weights
// that are not numbers. (Which flags fit the data: run_data.h's check_flags_apply.)
void validate(const TrainOptions& o);

// --data-weights' numbers ("0.8,0.2"), each positive and finite; none for "".
std::vector<double> parse_data_weights(const std::string& text);

// The fortunes files (sorted) when `data` is empty, else `data`.
std::vector<std::string> training_files(const TrainOptions& o);

}  // namespace tinygpt::train
