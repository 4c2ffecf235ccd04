#pragma once
// tinygpt's public API in one include: #include <tinygpt/tinygpt.h>. It includes every installed
// header (scripts/consumers.sh checks that); finer headers are <tinygpt/<folder>/<file>.h>, and
// docs/library.md describes them. Headers in a `detail` or `kernels` folder are the
// implementation's own: not installed, and they may change.

// Tensors, automatic differentiation and every op (autograd/).
#include "autograd/elementary.h"
#include "autograd/for_products.h"
#include "autograd/gradcheck.h"
#include "autograd/graph.h"
#include "autograd/indices.h"
#include "autograd/inference.h"
#include "autograd/machine.h"
#include "autograd/memory.h"
#include "autograd/ops.h"
#include "autograd/parallel.h"
#include "autograd/precision.h"
#include "autograd/profile.h"
#include "autograd/random.h"
#include "autograd/shape.h"
#include "autograd/tensor.h"
#include "autograd/threads.h"

// Modules, layers and the GPT (nn/).
#include "nn/activations.h"
#include "nn/attention.h"
#include "nn/containers.h"
#include "nn/conv.h"
#include "nn/gpt.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "nn/norms.h"
#include "nn/recurrent.h"
#include "nn/sampling.h"

// Optimizers, clipping and learning-rate schedules (optim/).
#include "optim/adamw.h"
#include "optim/grad_clip.h"
#include "optim/optimizer.h"
#include "optim/rmsprop.h"
#include "optim/schedule.h"
#include "optim/sgd.h"

// Text, tokenizers and batches (data/).
#include "data/batches.h"
#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/corpus.h"
#include "data/gpt2_vocab.h"
#include "data/input_file.h"
#include "data/json.h"
#include "data/pretokenize.h"
#include "data/sentencepiece_tokenizer.h"
#include "data/sha256.h"
#include "data/shards.h"
#include "data/text_files.h"
#include "data/token_array.h"
#include "data/tokenizer.h"
#include "data/tokenizer_record.h"
#include "data/utf8.h"

// File formats: saving modules and optimizers, safetensors and GPT-2 files in Hugging Face's
// layout, the CSV run log, numbers from untrusted input, atomic output files and folders (io/).
#include "io/hdf5_reader.h"
#include "io/hdf5_seal.h"
#include "io/hdf5_tree.h"
#include "io/hdf5_writer.h"
#include "io/hf_gpt2.h"
#include "io/hf_llama.h"
#include "io/llama2c.h"
#include "io/numbers.h"
#include "io/output_files.h"
#include "io/run_log.h"
#include "io/run_metrics.h"
#include "io/safetensors.h"
#include "io/save.h"
#include "io/sentencepiece_model.h"
#include "io/staged_folder.h"
#include "io/tokenizer_group.h"
#include "io/weight_map.h"

// Looking inside a model and a run: tokens, attention and its steps, the residual stream, loss
// plots, the learner's HTML page (inspect/).
#include "inspect/attention_steps.h"
#include "inspect/explain.h"
#include "inspect/inspect.h"
#include "inspect/plot.h"
#include "inspect/residual_trace.h"

// The training run: options, the trainer and its checkpoint, evaluation, data parallelism, what a
// run may write (train/).
#include "train/checkpoint.h"
#include "train/data_identity.h"
#include "train/distributed.h"
#include "train/evaluate.h"
#include "train/existing_outputs.h"
#include "train/interrupt.h"
#include "train/log_files.h"
#include "train/memory_budget.h"
#include "train/multiple_choice.h"
#include "train/options.h"
#include "train/progress.h"
#include "train/reporter.h"
#include "train/run_data.h"
#include "train/run_lock.h"
#include "train/run_plan.h"
#include "train/settings_file.h"
#include "train/spike_guard.h"
#include "train/step_stats.h"
#include "train/tokenizer_source.h"
#include "train/trainer.h"
