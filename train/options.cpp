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

void validate(const TrainOptions& options) {
  TrainOptions o = options;
  for_each_option(o, [](const char* name, auto& field, const char*, const Range& range) {
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(field)>>) {
      if (const std::string problem = range_problem(field, range); !problem.empty())
        throw std::invalid_argument(fmt::format("--{} {}", name, problem));
    }
  });
  if (o.embd % o.heads != 0)
    throw std::invalid_argument(fmt::format("--embd {} is not divisible by --heads {}", o.embd, o.heads));
  if (o.tokenizer != "char" && o.tokenizer != "bpe")
    throw std::invalid_argument(fmt::format("--tokenizer must be char or bpe (got '{}')", o.tokenizer));
  if (o.precision != "fp32" && o.precision != "bf16")
    throw std::invalid_argument(fmt::format("--precision must be fp32 or bf16 (got '{}')", o.precision));
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
