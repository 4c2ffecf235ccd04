// einsum: sums of products named by letters, as torch.einsum, written with permute, reshape, sum
// and matmul (so its gradient is theirs). Two operands become one batched matrix product:
//   letters in both and in the output: batch; in both, not in the output: contracted (K);
//   in one and in the output: that side's rows (M) or columns (N); in one only: summed first.
// More operands are taken two at a time, left to right, keeping the letters still needed.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "../ops.h"

namespace tinygpt {

namespace {

struct Term {
  Tensor t;
  std::string letters;  // one per axis
};

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// t's axes in the order of `order` (a permutation of t's letters).
Tensor arranged(const Term& term, const std::string& order) {
  Axes axes;
  for (char c : order) axes.push_back(static_cast<int64_t>(term.letters.find(c)));
  return term.t.permute(axes);
}

// Sums away the letters of `term` that are not in `keep`.
Term keeping(const Term& term, const std::string& keep) {
  Axes summed;
  std::string left;
  for (size_t i = 0; i < term.letters.size(); ++i) {
    if (has(keep, term.letters[i])) left += term.letters[i];
    else summed.push_back(static_cast<int64_t>(i));
  }
  if (summed.empty()) return term;
  return {sum(term.t, summed), left};
}

// A and B as one batched product; the result's letters: batch, then A's kept, then B's kept.
Term contract(const Term& a_in, const Term& b_in, const std::string& keep) {
  std::string need_a = keep + b_in.letters, need_b = keep + a_in.letters;
  const Term a = keeping(a_in, need_a), b = keeping(b_in, need_b);
  std::string batch, rows, cols, inner;
  for (char c : a.letters) {
    if (has(b.letters, c)) (has(keep, c) ? batch : inner) += c;
    else rows += c;
  }
  for (char c : b.letters)
    if (!has(a.letters, c)) cols += c;
  auto size = [](const Term& t, char c) { return t.t.size(static_cast<int64_t>(t.letters.find(c))); };
  for (char c : batch + inner)
    if (size(a, c) != size(b, c))
      throw std::invalid_argument(fmt::format("einsum: '{}' is {} in one operand and {} in another", c, size(a, c),
                                              size(b, c)));
  auto product = [&](const Term& t, const std::string& letters) {
    int64_t n = 1;
    for (char c : letters) n *= size(t, c);
    return n;
  };
  const int64_t nb = product(a, batch), m = product(a, rows), k = product(a, inner), n = product(b, cols);
  const Tensor am = arranged(a, batch + rows + inner).reshape({nb, m, k});
  const Tensor bm = arranged(b, batch + inner + cols).reshape({nb, k, n});
  Shape shape;
  for (char c : batch + rows) shape.push_back(size(a, c));
  for (char c : cols) shape.push_back(size(b, c));
  return {matmul(am, bm).reshape(shape), batch + rows + cols};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  if (eq.find("...") != std::string::npos)
    throw std::invalid_argument(fmt::format("einsum: '{}': ellipses (...) are not supported; name every axis", equation));
  const size_t arrow = eq.find("->");
  const std::string inputs = eq.substr(0, arrow);
  std::vector<std::string> letters(1);
  for (char c : inputs) {
    if (c == ',') letters.emplace_back();
    else if (std::isalpha(static_cast<unsigned char>(c))) letters.back() += c;
    else throw std::invalid_argument(fmt::format("einsum: '{}': '{}' is not a letter", equation, c));
  }
  if (letters.size() != operands.size())
    throw std::invalid_argument(fmt::format("einsum: '{}' names {} operands; {} given", equation, letters.size(),
                                            operands.size()));
  std::map<char, int> count;
  for (size_t i = 0; i < letters.size(); ++i) {
    if (static_cast<int64_t>(letters[i].size()) != operands[i].dim())
      throw std::invalid_argument(fmt::format("einsum: '{}': operand {} has {} axes, named by '{}'", equation, i,
                                              operands[i].dim(), letters[i]));
    for (char c : letters[i]) {
      if (std::count(letters[i].begin(), letters[i].end(), c) > 1)
        throw std::invalid_argument(fmt::format("einsum: '{}': '{}' twice in one operand (diagonals are not "
                                                "supported)", equation, c));
      ++count[c];
    }
  }
  std::string output;
  if (arrow == std::string::npos) {  // implicit: the letters named once, in alphabetical order
    for (const auto& [c, n] : count)
      if (n == 1) output += c;
  } else {
    output = eq.substr(arrow + 2);
    for (char c : output)
      if (!count.count(c) || std::count(output.begin(), output.end(), c) > 1)
        throw std::invalid_argument(fmt::format("einsum: '{}': output letter '{}' is not an input's, or repeats",
                                                equation, c));
  }
  Term acc{operands[0], letters[0]};
  for (size_t i = 1; i < operands.size(); ++i) {
    std::string keep = output;  // the letters the later operands or the output still need
    for (size_t j = i + 1; j < operands.size(); ++j) keep += letters[j];
    acc = contract(acc, Term{operands[i], letters[i]}, keep);
  }
  acc = keeping(acc, output);
  return output == acc.letters ? acc.t : arranged(acc, output);
}

}  // namespace tinygpt
