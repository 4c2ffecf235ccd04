#include "tinygpt/train/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <filesystem>
#include <stdexcept>

namespace tinygpt::train {

namespace {
template <class T>
std::string bound(double b) {
  if constexpr (std::is_integral_v<T>)
    return b >= static_cast<double>(std::numeric_limits<T>::max()) ? fmt::format("{}", std::numeric_limits<T>::max())
                                                                    : fmt::format("{}", static_cast<T>(b));
  return fmt::format("{}", b);
}
}  // namespace

template <class T>
std::string describe(const Range& r) {
  return fmt::format("{}{}, {}{}", r.open_min ? "(" : "[", bound<T>(r.min), bound<T>(r.max), r.open_max ? ")" : "]");
}

template <class T>
std::string range_problem(T value, const Range& r) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) return fmt::format("must be a finite number (got {})", value);
  }
  auto bound = [](double b) { return train::bound<T>(b); };
  const auto v = static_cast<double>(value);
  if (r.open_min ? !(v > r.min) : !(v >= r.min))
    return fmt::format("must be {} {} (got {})", r.open_min ? "more than" : "at least", bound(r.min), value);
  if (r.open_max ? !(v < r.max) : !(v <= r.max))
    return fmt::format("must be {} {} (got {})", r.open_max ? "less than" : "at most", bound(r.max), value);
  return "";
}

template std::string describe<int64_t>(const Range&);
template std::string describe<uint64_t>(const Range&);
template std::string describe<double>(const Range&);
template std::string range_problem(int64_t, const Range&);
template std::string range_problem(uint64_t, const Range&);
template std::string range_problem(double, const Range&);

template <class T>
T parse_number(const std::string& flag, const std::string& text, const Range& range) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if constexpr (std::is_integral_v<T>) {
    const bool negative = !text.empty() && text[0] == '-';
    if (text.size() == size_t{negative} || text.find_first_not_of("0123456789", negative) != std::string::npos)
      throw std::invalid_argument(fmt::format("{} must be a whole number (got '{}')", flag, text));
    if (error != std::errc() || stop != end)  // too large for T, or negative for an unsigned T
      throw std::invalid_argument(
          fmt::format("{} must be a whole number in {} (got {})", flag, describe<T>(range), text));
  } else {
    if (error == std::errc::result_out_of_range)
      throw std::invalid_argument(fmt::format("{} must be a finite number (got {})", flag, text));
    if (error != std::errc() || stop != end)
      throw std::invalid_argument(fmt::format("{} must be a number (got '{}')", flag, text));
  }
  if (const std::string problem = range_problem(value, range); !problem.empty())
    throw std::invalid_argument(fmt::format("{} {}", flag, problem));
  return value;
}

template int64_t parse_number(const std::string&, const std::string&, const Range&);
template uint64_t parse_number(const std::string&, const std::string&, const Range&);
template double parse_number(const std::string&, const std::string&, const Range&);

bool resume_may_change(const std::string& name) {
  return std::find(std::begin(kResumeSettings), std::end(kResumeSettings), name) != std::end(kResumeSettings);
}

std::string log_path_for(const std::string& out) {
  return std::filesystem::path(out).replace_extension(".csv").string();
}
std::string plot_path_for(const std::string& out) {
  return std::filesystem::path(out).replace_extension(".svg").string();
}
std::string best_path_for(const std::string& out) {
  return std::filesystem::path(out).replace_extension(".best.h5").string();
}

std::string choice_problem(const std::string& value, Choices choices) {
  if (choices.empty() || std::find(choices.begin(), choices.end(), value) != choices.end()) return "";
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i)
    list += fmt::format("{}{}", i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ", choices[i]);
  return fmt::format("must be {} (got '{}')", list, value);
}

void validate(const TrainOptions& options) {
  TrainOptions o = options;
  for_each_option(o, [](const char* name, auto& field, const char*, const Range& range, Choices choices) {
    using T = std::decay_t<decltype(field)>;
    std::string problem;
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) problem = range_problem(field, range);
    if constexpr (std::is_same_v<T, std::string>) problem = choice_problem(field, choices);
    if (!problem.empty()) throw std::invalid_argument(fmt::format("--{} {}", name, problem));
  });
  if (o.embd % o.heads != 0)
    throw std::invalid_argument(fmt::format("--embd {} is not divisible by --heads {}", o.embd, o.heads));
  if (o.min_lr > o.lr) throw std::invalid_argument(fmt::format("--min-lr must be at most --lr {} (got {})", o.lr, o.min_lr));
  int64_t tokens = 0;  // tokens_seen counts every token of every iteration
  if (__builtin_mul_overflow(o.batch * o.block, o.grad_accum, &tokens) || __builtin_mul_overflow(tokens, o.iters, &tokens) ||
      tokens > (int64_t{1} << 53))
    throw std::invalid_argument(fmt::format("--iters {} of --batch {} x --block {} x --grad-accum {} tokens is more "
                                            "tokens than a run counts (2^53)", o.iters, o.batch, o.block, o.grad_accum));
}

std::vector<std::string> training_files(const TrainOptions& o) {
  if (!o.data.empty()) return o.data;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kDefaultCorpusDir, ec))
    if (entry.is_regular_file() && !entry.path().has_extension()) files.push_back(entry.path().string());
  if (files.empty())
    throw std::runtime_error(fmt::format("no --data given and no default corpus in {} (install the Debian package "
                                         "'fortunes', or name text files with --data)",
                                         kDefaultCorpusDir));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tinygpt::train
