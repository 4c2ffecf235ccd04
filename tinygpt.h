#pragma once
// tinygpt's public API in one include: #include <tinygpt/tinygpt.h>. It includes every installed
// header (scripts/consumers.sh checks that); finer headers are <tinygpt/<folder>/<file>.h>, and
// docs/library.md describes them. Headers in a `detail` or `kernels` folder are the
// implementation's own: not installed, and they may change.

// Tensors, automatic differentiation and every op (autograd/).
#include "tinygpt/autograd/elementary.h"
#include "tinygpt/autograd/for_products.h"
#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/indices.h"
#include "tinygpt/autograd/inference.h"
#include "tinygpt/autograd/machine.h"
#include "tinygpt/autograd/memory.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/parallel.h"
#include "tinygpt/autograd/precision.h"
#include "tinygpt/autograd/profile.h"
#include "tinygpt/autograd/random.h"
#include "tinygpt/autograd/shape.h"
#include "tinygpt/autograd/tensor.h"
#include "tinygpt/autograd/threads.h"

// Modules, layers and the GPT (nn/).
#include "tinygpt/nn/activations.h"
#include "tinygpt/nn/attention.h"
#include "tinygpt/nn/containers.h"
#include "tinygpt/nn/conv.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/nn/init.h"
#include "tinygpt/nn/layers.h"
#include "tinygpt/nn/module.h"
#include "tinygpt/nn/norms.h"
#include "tinygpt/nn/recurrent.h"
#include "tinygpt/nn/sampling.h"

// Optimizers, clipping and learning-rate schedules (optim/).
#include "tinygpt/optim/adamw.h"
#include "tinygpt/optim/grad_clip.h"
#include "tinygpt/optim/optimizer.h"
#include "tinygpt/optim/rmsprop.h"
#include "tinygpt/optim/schedule.h"
#include "tinygpt/optim/sgd.h"

// Text, tokenizers and batches (data/).
#include "tinygpt/data/batches.h"
#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/corpus.h"
#include "tinygpt/data/gpt2_vocab.h"
#include "tinygpt/data/input_file.h"
#include "tinygpt/data/json.h"
#include "tinygpt/data/pretokenize.h"
#include "tinygpt/data/sentencepiece_tokenizer.h"
#include "tinygpt/data/sha256.h"
#include "tinygpt/data/shards.h"
#include "tinygpt/data/text_files.h"
#include "tinygpt/data/token_array.h"
#include "tinygpt/data/tokenizer.h"
#include "tinygpt/data/utf8.h"

// File formats: saving modules and optimizers, safetensors and GPT-2 files in Hugging Face's
// layout, the CSV run log, numbers from untrusted input, atomic output files and folders (io/).
#include "tinygpt/io/hdf5_reader.h"
#include "tinygpt/io/hdf5_seal.h"
#include "tinygpt/io/hdf5_tree.h"
#include "tinygpt/io/hdf5_writer.h"
#include "tinygpt/io/hf_gpt2.h"
#include "tinygpt/io/hf_llama.h"
#include "tinygpt/io/llama2c.h"
#include "tinygpt/io/numbers.h"
#include "tinygpt/io/output_files.h"
#include "tinygpt/io/run_log.h"
#include "tinygpt/io/run_metrics.h"
#include "tinygpt/io/safetensors.h"
#include "tinygpt/io/save.h"
#include "tinygpt/io/sentencepiece_model.h"
#include "tinygpt/io/staged_folder.h"

// Looking inside a model and a run: tokens, attention and its steps, the residual stream, loss
// plots, the learner's HTML page (inspect/).
#include "tinygpt/inspect/attention_steps.h"
#include "tinygpt/inspect/explain.h"
#include "tinygpt/inspect/inspect.h"
#include "tinygpt/inspect/plot.h"
#include "tinygpt/inspect/residual_trace.h"

// The training run: options, the trainer and its checkpoint, evaluation, data parallelism, what a
// run may write (train/).
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/data_identity.h"
#include "tinygpt/train/distributed.h"
#include "tinygpt/train/evaluate.h"
#include "tinygpt/train/existing_outputs.h"
#include "tinygpt/train/interrupt.h"
#include "tinygpt/train/memory_budget.h"
#include "tinygpt/train/multiple_choice.h"
#include "tinygpt/train/options.h"
#include "tinygpt/train/progress.h"
#include "tinygpt/train/run_data.h"
#include "tinygpt/train/run_lock.h"
#include "tinygpt/train/settings_file.h"
#include "tinygpt/train/spike_guard.h"
#include "tinygpt/train/step_stats.h"
#include "tinygpt/train/tokenizer_source.h"
#include "tinygpt/train/trainer.h"
