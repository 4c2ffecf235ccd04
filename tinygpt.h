#pragma once
// tinygpt's public API in one include: #include <tinygpt/tinygpt.h>. Finer headers are
// <tinygpt/<folder>/<file>.h>; docs/library.md lists them. Headers not reachable from here are the
// implementation's own and may change.

// Tensors, automatic differentiation and every op (autograd/).
#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/precision.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/parallel.h"
#include "tinygpt/autograd/random.h"
#include "tinygpt/autograd/tensor.h"

// Modules, layers and the GPT (nn/).
#include "tinygpt/nn/activations.h"
#include "tinygpt/nn/containers.h"
#include "tinygpt/nn/generator.h"
#include "tinygpt/nn/gpt.h"
#include "tinygpt/nn/init.h"
#include "tinygpt/nn/layers.h"
#include "tinygpt/nn/module.h"
#include "tinygpt/nn/sampling.h"

// Optimizers, clipping and learning-rate schedules (optim/).
#include "tinygpt/optim/adamw.h"
#include "tinygpt/optim/grad_clip.h"
#include "tinygpt/optim/optimizer.h"
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
#include "tinygpt/data/text_files.h"
#include "tinygpt/data/token_array.h"
#include "tinygpt/data/tokenizer.h"
#include "tinygpt/data/utf8.h"

// Saving modules and optimizers, checkpoints, GPT-2 files in Hugging Face's layout, the trainer,
// evaluation and sampling (train/).
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/evaluate.h"
#include "tinygpt/train/hf_gpt2.h"
#include "tinygpt/train/options.h"
#include "tinygpt/train/safetensors.h"
#include "tinygpt/train/sampling.h"
#include "tinygpt/train/save.h"
#include "tinygpt/train/trainer.h"
