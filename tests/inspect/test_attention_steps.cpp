// The attention steps and the residual trace against a plain-loop GPT in double precision.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

#include "tinygpt/data/char_tokenizer.h"
#include "temp_files.h"
#include "tinygpt/inspect/attention_steps.h"
#include "tinygpt/inspect/detail/svg.h"
#include "tinygpt/inspect/residual_trace.h"

using namespace tinygpt;

namespace {

using Rows = std::vector<std::vector<double>>;  // [rows][columns]

// The GPT of docs/architectures.md with plain loops in double, from a model's parameters.
struct Reference {
  std::map<std::string, std::vector<double>> p;
  int64_t C, nh, d, V;

  explicit Reference(const nn::GPT& model)
      : C(model.config().n_embd), nh(model.config().n_head), d(C / nh), V(model.config().vocab_size) {
    for (const auto& [name, t] : model.named_parameters()) {
      const std::vector<float> v = t.to_vector();
      p[name] = std::vector<double>(v.begin(), v.end());
    }
  }
  const std::vector<double>& at(int64_t layer, const std::string& name) {
    return p.at("transformer.h." + std::to_string(layer) + "." + name);
  }

  Rows embed(const std::vector<int32_t>& ids) {
    Rows x(ids.size(), std::vector<double>(C));
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t c = 0; c < C; ++c)
        x[t][c] = p["transformer.wte.weight"][ids[t] * C + c] + p["transformer.wpe.weight"][t * C + c];
    return x;
  }
  static Rows layer_norm(const Rows& x, const std::vector<double>& w, const std::vector<double>& b) {
    Rows y = x;
    for (auto& row : y) {
      double mean = 0, var = 0;
      for (double v : row) mean += v / row.size();
      for (double v : row) var += (v - mean) * (v - mean) / row.size();
      for (size_t c = 0; c < row.size(); ++c) row[c] = (row[c] - mean) / std::sqrt(var + 1e-5) * w[c] + b[c];
    }
    return y;
  }
  // y = x Wᵀ + b with W [out, in]
  static Rows linear(const Rows& x, const std::vector<double>& w, const std::vector<double>& b) {
    const size_t out = b.size(), in = x[0].size();
    Rows y(x.size(), std::vector<double>(out));
    for (size_t t = 0; t < x.size(); ++t)
      for (size_t o = 0; o < out; ++o) {
        double s = b[o];
        for (size_t i = 0; i < in; ++i) s += x[t][i] * w[o * in + i];
        y[t][o] = s;
      }
    return y;
  }
  Rows qkv(int64_t layer, const Rows& x) {
    return linear(layer_norm(x, at(layer, "ln_1.weight"), at(layer, "ln_1.bias")), at(layer, "attn.c_attn.weight"),
                  at(layer, "attn.c_attn.bias"));
  }
  // The four steps of one head; weights [T][T] (0 in the future), output [T][d].
  struct Head {
    Rows q, k, v, scores, scaled, weights, output;
  };
  Head head(const Rows& qkv, int64_t h) {
    const size_t T = qkv.size();
    Head r;
    for (int part = 0; part < 3; ++part) {
      Rows& m = part == 0 ? r.q : part == 1 ? r.k : r.v;
      for (size_t t = 0; t < T; ++t)
        m.emplace_back(qkv[t].begin() + part * C + h * d, qkv[t].begin() + part * C + (h + 1) * d);
    }
    r.scores = r.scaled = r.weights = Rows(T, std::vector<double>(T, 0.0));
    r.output = Rows(T, std::vector<double>(d, 0.0));
    for (size_t i = 0; i < T; ++i) {
      double peak = -1e300, sum = 0;
      for (size_t j = 0; j < T; ++j) {
        for (int64_t c = 0; c < d; ++c) r.scores[i][j] += r.q[i][c] * r.k[j][c];
        r.scaled[i][j] = r.scores[i][j] / std::sqrt(static_cast<double>(d));
        if (j <= i) peak = std::max(peak, r.scaled[i][j]);
      }
      for (size_t j = 0; j <= i; ++j) sum += r.weights[i][j] = std::exp(r.scaled[i][j] - peak);
      for (size_t j = 0; j <= i; ++j) {
        r.weights[i][j] /= sum;
        for (int64_t c = 0; c < d; ++c) r.output[i][c] += r.weights[i][j] * r.v[j][c];
      }
    }
    return r;
  }
  // attn(ln_1(x)): every head's output side by side, then c_proj.
  Rows attention(int64_t layer, const Rows& x) {
    const Rows all = qkv(layer, x);
    Rows y(x.size(), std::vector<double>(C));
    for (int64_t h = 0; h < nh; ++h) {
      const Head r = head(all, h);
      for (size_t t = 0; t < x.size(); ++t)
        for (int64_t c = 0; c < d; ++c) y[t][h * d + c] = r.output[t][c];
    }
    return linear(y, at(layer, "attn.c_proj.weight"), at(layer, "attn.c_proj.bias"));
  }
  Rows mlp(int64_t layer, const Rows& x) {
    Rows hidden = linear(layer_norm(x, at(layer, "ln_2.weight"), at(layer, "ln_2.bias")), at(layer, "mlp.c_fc.weight"),
                           at(layer, "mlp.c_fc.bias"));
    for (auto& row : hidden)
      for (double& u : row) u = 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u)));
    return linear(hidden, at(layer, "mlp.c_proj.weight"), at(layer, "mlp.c_proj.bias"));
  }
  static void add(Rows& x, const Rows& y) {
    for (size_t t = 0; t < x.size(); ++t)
      for (size_t c = 0; c < x[t].size(); ++c) x[t][c] += y[t][c];
  }
  static double norm(const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e * e;
    return std::sqrt(s);
  }
};

// Every element of a [rows, cols] row-major float matrix within 1e-6 of the double reference,
// relative to the matrix's largest magnitude (at least 1): the model computes in float, so its
// rounding grows with the values' scale.
void require_near_reference(const std::vector<float>& got, const Rows& want, const char* what) {
  INFO(what);
  REQUIRE(got.size() == want.size() * want[0].size());
  const size_t cols = want[0].size();
  double scale = 1, worst = 0;
  for (const auto& row : want)
    for (double v : row) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i / cols][i % cols]));
  INFO("largest difference " << worst << " at a scale of " << scale);
  REQUIRE(worst <= 1e-6 * scale);
}

// A 3-layer model whose weights are far from initialization, so that attention is sharp and the
// heads differ (at initialization every weight is near uniform).
struct SharpModel {
  data::CharTokenizer tokenizer{std::vector<int32_t>{'\n', ' ', 'a', 'b', 'c', 'd', 0xD55C}};
  nn::GPT model{nn::GPTConfig{.vocab_size = 7, .block_size = 12, .n_layer = 3, .n_head = 2, .n_embd = 8}, 5};
  SharpModel() {
    uint64_t seed = 11;
    for (auto& [name, p] : model.named_parameters())
      if (name.find("ln_") == std::string::npos) p.normal_(++seed, 0.5f);
  }
};

}  // namespace

TEST_CASE("attention steps: every step agrees with plain loops in double, and the weights are the model's bits",
          "[inspect][steps]") {
  SharpModel m;
  const std::string text = "ab cd한 da\nc";
  const std::vector<int32_t> ids = m.tokenizer.encode(text, "text");
  const inspect::AttentionMaps maps = inspect::attention_maps(m.model, m.tokenizer, text);
  Reference ref(m.model);
  Rows x = ref.embed(ids);
  for (int64_t layer = 0; layer < 3; ++layer) {
    for (int64_t h = 0; h < 2; ++h) {
      INFO("layer " << layer << ", head " << h);
      const inspect::AttentionSteps s = inspect::attention_steps(m.model, m.tokenizer, text, layer, h);
      REQUIRE(s.d_k == 4);
      REQUIRE(s.ids == ids);
      const Reference::Head want = ref.head(ref.qkv(layer, x), h);
      require_near_reference(s.q, want.q, "q");
      require_near_reference(s.k, want.k, "k");
      require_near_reference(s.v, want.v, "v");
      require_near_reference(s.scores, want.scores, "scores");
      require_near_reference(s.scaled, want.scaled, "scaled");
      require_near_reference(s.weights, want.weights, "weights");
      require_near_reference(s.output, want.output, "output");
      const int64_t T = s.size();
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) REQUIRE(s.weights[i * T + j] == maps.at(layer, h, i, j));  // bit for bit
    }
    Reference::add(x, ref.attention(layer, x));
    Reference::add(x, ref.mlp(layer, x));
  }
  // The test's model is sharp: past row 0, uniform weights would be at most 1/2.
  const inspect::AttentionSteps last = inspect::attention_steps(m.model, m.tokenizer, text, 2, 1);
  REQUIRE(*std::max_element(last.weights.begin() + last.size(), last.weights.end()) > 0.75f);
}

TEST_CASE("attention steps: tables, JSON and SVG", "[inspect][steps]") {
  SharpModel m;
  const inspect::AttentionSteps s = inspect::attention_steps(m.model, m.tokenizer, "ab한", 1, 0);
  const std::string text = inspect::attention_steps_text(s, 2);
  // Q, K, V, then the five operations, numbered as the page and the SVG number them.
  for (const char* heading : {"Q, K, V, before the five operations:\nQ = ln_1(x) W_q + b_q", "\nK = ln_1(x) W_k",
                              "\nV = ln_1(x) W_v", "\n1. scores = Q·Kᵀ", "\n2. scaled = scores ÷ √d_k = scores ÷ 2.0000",
                              "\n3. masked = causal mask(scaled)", "\n4. weights = softmax(masked)",
                              "\n5. output = weights·V", "autograd/ops/attention.cpp, weights_strip",
                              "nn/gpt.cpp, CausalSelfAttention::forward"})
    REQUIRE(text.find(heading) != std::string::npos);
  REQUIRE(text.find("\n6.") == std::string::npos);
  // One score worked by hand: every product of the last query with its top key, and their sum.
  const size_t by_hand = text.find("   by hand, query 2 (한) and key ");
  REQUIRE(by_hand != std::string::npos);
  const size_t sum_at = text.find("\n   = ", text.find("\n   = ", by_hand) + 1);
  const std::string sums = text.substr(sum_at + 6, text.find('\n', sum_at + 1) - sum_at - 6);
  INFO(sums);
  REQUIRE(sums.substr(0, sums.find(' ')) == sums.substr(sums.find(": ") + 2, sums.find(')') - sums.find(": ") - 2));
  const std::string drawn = inspect::attention_steps_svg(s);
  for (const char* title : {"Q, K, V and the five operations", "1. scores = Q·Kᵀ", "2. scaled = scores ÷ √d_k",
                            "3. masked = causal mask(scaled)", "4. weights = softmax(masked)", "5. output = weights·V"})
    REQUIRE(drawn.find(title) != std::string::npos);
  REQUIRE(text.find("| 1.000") != std::string::npos);  // row sums
  const std::string json = inspect::attention_steps_json(s);
  REQUIRE(json.rfind("{\"ids\": [2, 3, 6], \"tokens\": [\"a\", \"b\", \"한\"], \"layer\": 1, \"head\": 0, \"d_k\": 4, \"q\": [[",
                     0) == 0);
  REQUIRE(json.find(fmt::format("\"weights\": [[1, 0, 0], [{}, {}, 0], ", s.weights[3], s.weights[4])) != std::string::npos);
  tinygpt::testing::TempDir dir;
  const std::string svg = inspect::attention_steps_svg(s);
  size_t cells = 0;
  for (size_t at = svg.find("class=\"cell\""); at != std::string::npos; at = svg.find("class=\"cell\"", at + 1)) ++cells;
  REQUIRE(cells == 4 * 3 * 4 + 4 * 3 * 3);  // q, k, v, output [3, 4]; scores, scaled, masked, weights [3, 3]
  REQUIRE(svg.find("masked (weight 0)") != std::string::npos);
  REQUIRE(svg.find("masked (-∞)") != std::string::npos);
  REQUIRE(svg.find("<title>layer 1, head 0: query 1 b → key 2 한: masked (-∞)</title>") != std::string::npos);
  REQUIRE(svg.find(fmt::format("<title>layer 1, head 0: token 2 한, dimension 3: {:.4f}</title>", s.q[2 * 4 + 3])) != std::string::npos);
  REQUIRE(std::system(("xmllint --noout " + dir.write("steps.svg", svg)).c_str()) == 0);
  REQUIRE_THROWS_WITH(inspect::attention_steps(m.model, m.tokenizer, "ab", 3, 0), Catch::Contains("--layer 3 is out of range"));
  REQUIRE_THROWS_WITH(inspect::attention_steps(m.model, m.tokenizer, "ab", 0, 2), Catch::Contains("--head 2 is out of range"));
}

TEST_CASE("residual trace: the norms after every addition and the next-token probabilities", "[inspect][trace]") {
  SharpModel m;
  const std::string text = "abc d";
  const std::vector<int32_t> ids = m.tokenizer.encode(text, "text");
  const inspect::ResidualTrace trace = inspect::residual_trace(m.model, m.tokenizer, text, 3, 5);
  Reference ref(m.model);
  Rows x = ref.embed(ids);
  std::vector<double> norms = {Reference::norm(x[3])}, added = {0};
  for (int64_t layer = 0; layer < 3; ++layer)
    for (int part = 0; part < 2; ++part) {
      const Rows y = part == 0 ? ref.attention(layer, x) : ref.mlp(layer, x);
      Reference::add(x, y);
      norms.push_back(Reference::norm(x[3]));
      added.push_back(Reference::norm(y[3]));
    }
  const Rows last = Reference::layer_norm({x[3]}, ref.p["transformer.ln_f.weight"], ref.p["transformer.ln_f.bias"]);
  norms.push_back(Reference::norm(last[0]));
  added.push_back(0);
  REQUIRE(trace.stages.size() == norms.size());
  for (size_t i = 0; i < norms.size(); ++i) {
    INFO(trace.stages[i].name);
    REQUIRE(trace.stages[i].norm == Approx(norms[i]).epsilon(1e-5));
    REQUIRE(trace.stages[i].added_norm == Approx(added[i]).epsilon(1e-5).margin(1e-12));
  }
  REQUIRE(trace.stages[1].name == "block 0 + attn(ln_1(x))");
  // Next token: softmax over logits = ln_f(x) wteᵀ.
  std::vector<double> logits(7);
  for (int64_t v = 0; v < 7; ++v)
    for (int64_t c = 0; c < 8; ++c) logits[v] += last[0][c] * ref.p["transformer.wte.weight"][v * 8 + c];
  double sum = 0;
  for (double l : logits) sum += std::exp(l);
  REQUIRE(trace.next.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    REQUIRE(trace.next[i].probability == Approx(std::exp(logits[trace.next[i].token.id]) / sum).epsilon(1e-5));
    if (i) REQUIRE(trace.next[i].probability <= trace.next[i - 1].probability);
  }
  const int32_t best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  REQUIRE(trace.next[0].token.id == best);
  const std::string table = inspect::residual_trace_text(trace);
  REQUIRE(table.find("token 3 '␣'") != std::string::npos);
  REQUIRE(table.find("block 2 + mlp(ln_2(x))") != std::string::npos);
  REQUIRE_THROWS_WITH(inspect::residual_trace(m.model, m.tokenizer, text, 5), Catch::Contains("--position 5 is out of range: the text has 5 tokens"));
}

TEST_CASE("colours: the pictures and the page speak one colour language", "[inspect][colour]") {
  // The page's stops, as explain.js writes them, are the C++ ones.
  std::ifstream in(std::string(TINYGPT_SOURCE_DIR) + "/inspect/page/explain.js");
  const std::string js((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto stops_of = [&](const std::string& name) {
    const size_t at = js.find("const " + name + " = [");
    REQUIRE(at != std::string::npos);
    return js.substr(at + name.size() + 9, js.find("]];", at) - at - name.size() - 9 + 2);
  };
  const auto written = [](const unsigned char (&stops)[5][3]) {
    std::string out = "[";
    for (int i = 0; i < 5; ++i) out += fmt::format("{}[{}, {}, {}]", i ? ", " : "", stops[i][0], stops[i][1], stops[i][2]);
    return out + "]";
  };
  REQUIRE(stops_of("VIRIDIS") == written(inspect::kViridis));
  REQUIRE(stops_of("DIVERGING") == written(inspect::kDiverging));
  // Negative blue, zero near white, positive red; weights from viridis's dark purple to its yellow.
  REQUIRE(inspect::signed_color(-1) == "#2166ac");
  REQUIRE(inspect::signed_color(0) == "#f7f7f7");
  REQUIRE(inspect::signed_color(1) == "#b2182b");
  REQUIRE(inspect::heat_color(0) == "#440154");
  REQUIRE(inspect::heat_color(1) == "#fde725");
  // The scaled scores share the scores' scale: their legend ends where the scores' does.
  SharpModel m;
  const inspect::AttentionSteps s = inspect::attention_steps(m.model, m.tokenizer, "ab한", 1, 0);
  float range = 0;
  for (const float v : s.scores) range = std::max(range, std::abs(v));
  const std::string svg = inspect::attention_steps_svg(s);
  size_t ends = 0;
  for (size_t at = svg.find(fmt::format(">{:.3g}<", range)); at != std::string::npos;
       at = svg.find(fmt::format(">{:.3g}<", range), at + 1))
    ++ends;
  REQUIRE(ends == 3);  // scores, scaled, masked
}
