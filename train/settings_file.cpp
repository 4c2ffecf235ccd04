#include "settings_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "../data/input_file.h"
#include "../data/json.h"

namespace tinygpt::train {

namespace {

constexpr int64_t kMaxSettingsBytes = int64_t{16} << 20;  // thousands of data files' paths

// One setting's value as JSON.
template <class T>
std::string json_value(const T& field, Choices choices) {
  if constexpr (std::is_same_v<T, bool>) return field ? "true" : "false";
  else if constexpr (std::is_enum_v<T>) return data::json::quote(choices[static_cast<size_t>(field)]);
  else if constexpr (std::is_same_v<T, std::string>) return data::json::quote(field);
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    std::vector<std::string> items;
    for (const std::string& f : field) items.push_back(data::json::quote(f));
    return fmt::format("[{}]", fmt::join(items, ", "));
  } else {
    return fmt::format("{}", field);  // the shortest text that reads back to the same number
  }
}

// Sets `field` from `v`, or returns what is wrong with `v`.
template <class T>
std::string set_from(const data::json::Value& v, T& field, const io::Range& range, Choices choices) {
  using Type = data::json::Value::Type;
  if constexpr (std::is_same_v<T, bool>) {
    if (v.type != Type::boolean) return fmt::format("must be true or false (got {})", v.type_name());
    field = v.boolean;
  } else if constexpr (std::is_enum_v<T>) {
    if (v.type != Type::string) return fmt::format("must be a string (got {})", v.type_name());
    const std::optional<T> value = parse_choice<T>(v.text, choices);
    if (!value) return choice_problem(v.text, choices);
    field = *value;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (v.type != Type::string) return fmt::format("must be a string (got {})", v.type_name());
    field = v.text;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (v.type != Type::array) return fmt::format("must be an array of strings (got {})", v.type_name());
    std::vector<std::string> items;
    for (const data::json::Value& item : *v.array) {
      if (item.type != Type::string) return fmt::format("must be an array of strings (holds {})", item.type_name());
      items.push_back(item.text);
    }
    field = items;
  } else if constexpr (std::is_integral_v<T>) {
    T value{};
    const auto [end, error] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), value);
    if (v.type != Type::number || !v.is_integer() || error != std::errc() || end != v.text.data() + v.text.size())
      return fmt::format("must be a whole number (got {})", v.type == Type::number ? v.text : v.type_name());
    if (std::string problem = io::range_problem(value, range); !problem.empty()) return problem;
    field = value;
  } else {
    if (v.type != Type::number) return fmt::format("must be a number (got {})", v.type_name());
    if (std::string problem = io::range_problem(v.number, range); !problem.empty()) return problem;
    field = v.number;
  }
  return "";
}

}  // namespace

namespace {

// The settings whose values come from others when left out, each with that value.
TrainOptions derived_values(const TrainOptions& o) {
  TrainOptions d = o;
  d.min_lr = o.lr / 10;  // as the command line derives it
  d.arch = ArchOptions{.arch = o.arch.arch, .norm_eps = o.arch.norm_eps, .rope_theta = o.arch.rope_theta,
                       .ffn_hidden = 0, .kv_heads = 0};
  apply_arch(d.arch, {});
  return d;
}

bool is_derived(std::string_view name) {
  static const std::set<std::string_view> kDerived = {"min-lr", "norm", "position", "mlp", "bias", "tie",
                                                      "ffn-hidden", "kv-heads"};
  return kDerived.count(name) > 0;
}

// Why one settings file cannot repeat a run with these changes ("" when it can).
std::string replay_problem(const std::vector<std::string>& changes) {
  std::vector<std::string> differ;
  for (const std::string& change : changes)
    if (change.find(" moved") == std::string::npos) differ.push_back(change);
  if (differ.empty()) return "";
  return fmt::format("the run changed on --resume ({}): a settings file holds one set of settings, so it cannot "
                     "repeat this run (info shows every change; a file of the final settings would give other numbers)",
                     fmt::join(differ, "; "));
}

}  // namespace

std::string settings_file_text(const TrainState& state) {
  const TrainOptions& options = state.options;
  if (const std::string problem = replay_problem(state.changes); !problem.empty()) throw std::invalid_argument(problem);
  // The values each setting takes when left out, as text, by name.
  std::vector<std::string> defaults, derived;
  TrainOptions d, from_others = derived_values(options);
  for_each_option(d, [&](const char*, const auto& field, const char*, const io::Range&, Choices choices) {
    defaults.push_back(json_value(field, choices));
  });
  for_each_option(from_others, [&](const char*, const auto& field, const char*, const io::Range&, Choices choices) {
    derived.push_back(json_value(field, choices));
  });
  std::set<std::string> from_checkpoint = {"tokenizer", "vocab-size", "tokenizer-model", "tokenizer-from",
                                           "layers", "heads", "embd"};
  ArchOptions arch;
  for_each_arch_option(arch, [&](const char* name, auto&, const char*, const io::Range&, Choices) {
    from_checkpoint.insert(name);
  });
  std::error_code ec;  // data that cannot be looked at now: judged as text
  const bool folders = !options.data.empty() && std::filesystem::is_directory(options.data.front(), ec);
  auto left_out = [&](const std::string& name) {
    if (name == "out") return true;  // where a run writes is the command line's to say
    if (!state.init_from.empty()) return from_checkpoint.count(name) > 0;
    if (!options.tokenizer_from.empty()) return name == "tokenizer" || name == "vocab-size" || name == "tokenizer-model";
    if (folders && options.tokenizer_model.empty()) return name == "tokenizer" || name == "vocab-size";
    return false;
  };
  const std::set<std::string> given(state.given.begin(), state.given.end());
  auto written = [&](const std::string& name, const std::string& value, size_t i) {
    if (left_out(name)) return false;
    if (name == "lr" || (name == "block" && !state.init_from.empty())) return true;  // the block may crop the checkpoint's
    if (is_derived(name)) return given.count(name) > 0 || value != derived.at(i);
    return value != defaults.at(i);
  };
  std::string text = fmt::format("{{\n  {}", kSettingsMark);
  const auto ranks = state.sampler_states.size();
  if (ranks > 1) text += fmt::format(",\n  \"ranks\": {}", ranks);
  if (!state.init_from.empty()) text += fmt::format(",\n  \"init-from\": {}", data::json::quote(state.init_from));
  TrainOptions o = options;
  size_t i = 0;
  for_each_option(o, [&](const char* name, const auto& field, const char*, const io::Range&, Choices choices) {
    const std::string value = json_value(field, choices);
    if (written(name, value, i)) text += fmt::format(",\n  {}: {}", data::json::quote(name), value);
    ++i;
  });
  return text + "\n}\n";
}

SettingsFile read_settings_file(const std::string& path, TrainOptions& options, const std::set<std::string>& given) {
  data::InputFile file(path, "settings file");
  const data::FileBytes bytes = file.read_all(kMaxSettingsBytes);
  const std::string where = fmt::format("settings file '{}'", path);
  const data::json::Value document = data::json::parse(bytes.view(), where, {.depth = 2});
  if (document.type != data::json::Value::Type::object)
    throw std::invalid_argument(fmt::format("{}: must hold one JSON object of settings", where));
  std::vector<std::string> names;
  for_each_option(options, [&](const char* name, auto&, const char*, const io::Range&, Choices) { names.push_back(name); });
  SettingsFile file_settings;
  std::set<std::string>& set = file_settings.names;
  for (const auto& [key, value] : *document.object) {
    if (key == "tinygpt") {  // the mark, when there is one
      if (value.type != data::json::Value::Type::string || value.text != "train settings")
        throw std::invalid_argument(fmt::format("{}: \"tinygpt\" says what the file is, and this one is not \"train "
                                                "settings\"", where));
      continue;
    }
    if (key == "init-from") {
      if (std::string problem = set_from(value, file_settings.init_from, io::Range{}, {}); !problem.empty())
        throw std::invalid_argument(fmt::format("{}: \"init-from\" {}", where, problem));
      continue;
    }
    if (key == "ranks") {
      if (std::string problem = set_from(value, file_settings.ranks, io::Range{1, 1e6}, {}); !problem.empty())
        throw std::invalid_argument(fmt::format("{}: \"ranks\" {}", where, problem));
      continue;
    }
    if (key == "out" && !given.count("out"))
      throw std::invalid_argument(fmt::format(
          "{}: \"out\" names where the run writes, which only the command line says (a settings file may come from "
          "anyone): remove it and give --out",
          where));
    bool known = false;
    for_each_option(options, [&](const char* name, auto& field, const char*, const io::Range& range, Choices choices) {
      if (key != name) return;
      known = true;
      if (given.count(key)) return;  // the command line's value wins
      if (std::string problem = set_from(value, field, range, choices); !problem.empty())
        throw std::invalid_argument(fmt::format("{}: \"{}\" {}", where, key, problem));
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::vector<std::string>>)
        if (field.empty() && key == "data")  // the command line cannot say "no data": the file may not either
          throw std::invalid_argument(fmt::format(
              "{}: \"data\" is empty: name the files or folders to train on, or leave \"data\" out for the "
              "default corpus",
              where));
      set.insert(key);
    });
    if (!known) {
      const std::string nearest = nearest_name(key, names);
      throw std::invalid_argument(fmt::format("{}: \"{}\" is not a setting of tinygpt train{}", where, key,
                                              nearest.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", nearest)));
    }
  }
  return file_settings;
}

}  // namespace tinygpt::train
