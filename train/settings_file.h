#pragma once
// A run's settings as a JSON file. `train --config FILE` reads one: an object whose keys are train's
// flags without their dashes ("layers": 4, "lr": 0.001, "data": ["a.txt"], "arch": "llama",
// "keep-best": true); flags on the command line win over it. Where the run writes is never a
// setting: "out" is refused unless --out is given (and then, as any setting, loses to it), and
// `info --config` leaves it out. `info --config FILE` writes a
// checkpoint's settings as such a file, numbers in their shortest exact form, so that the run can be
// repeated bit for bit.
#include <set>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "options.h"

namespace tinygpt::train {

// The file's first member, which names what it is.
inline constexpr const char* kSettingsMark = "\"tinygpt\": \"train settings\"";

// A run's settings, one per line after the mark, as train --config needs them to repeat it: those
// that differ from what the command line gives when they are left out. Settings that come from
// others (--min-lr from --lr, the architecture's pieces from --arch, --ffn-hidden and --kv-heads
// from --embd and --heads) are written where the run's command line gave them (TrainState::given)
// or where they differ from what those give, so a file read with other flags re-derives the rest
// as the command line would. The tokenizer's settings are left out where the run's tokenizer came
// from elsewhere: --tokenizer-from, or shard folders' own. A fine-tuning run writes "init-from"
// and leaves out what its checkpoint gives (the shape, the pieces, the tokenizer); a run of several
// ranks writes "ranks": N, which train --config checks.
//
// Throws std::invalid_argument, with the changes, for a run that one file cannot repeat: settings
// changed on --resume, or text changed under --force (moved text changes no number).
std::string settings_file_text(const TrainState& state);

struct SettingsFile {
  std::set<std::string> names;  // the settings it set
  int64_t ranks = 1;            // the number of ranks of the run it came from
  std::string init_from;        // a fine-tuning run's starting checkpoint; empty: fresh weights
};

// Sets each setting in the file at `path` that `given` (the names given on the command line) does
// not name. Throws std::invalid_argument naming the file and the key for a key that is no setting
// (with the nearest one), a value of the wrong type, or one out of its range.
SettingsFile read_settings_file(const std::string& path, TrainOptions& options, const std::set<std::string>& given);

}  // namespace tinygpt::train
