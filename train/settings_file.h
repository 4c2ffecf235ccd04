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

#include "tinygpt/train/options.h"

namespace tinygpt::train {

// The file's first member, which names what it is.
inline constexpr const char* kSettingsMark = "\"tinygpt\": \"train settings\"";

// A run's settings, one per line after the mark, as train --config needs them to repeat it: those
// that differ from the defaults, and always lr, min-lr and the architecture's pieces (whose defaults
// depend on other settings). The tokenizer's settings are left out where the run's tokenizer came
// from elsewhere: --tokenizer-from, or shard folders' own.
std::string settings_file_text(const TrainOptions& options);

// Sets each setting in the file at `path` that `given` (the names given on the command line) does
// not name, and returns the names it set. Throws std::invalid_argument naming the file and the key
// for a key that is no setting (with the nearest one), a value of the wrong type, or one out of
// its range.
std::set<std::string> read_settings_file(const std::string& path, TrainOptions& options,
                                         const std::set<std::string>& given);

}  // namespace tinygpt::train
