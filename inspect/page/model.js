"use strict";
// tinygpt explain: the model computed in the page, for a text typed there. The C++ model's arithmetic
// (docs/architectures.md) in float64, each number then rounded to float32 as the C++ arrays hold it;
// the page's self-check runs it on the page's own text and compares every array with the C++ one.
// pageModel(config, typing, decode) gives { encode(text) -> ids (throws { key, vars } for a character
// the model lacks), forward(ids) -> the arrays the C++ page holds for those ids, every layer in full }.
function pageModel(C, TYPING, decode) {
  const H = C.n_head, L = C.n_layer, dk = C.d_k, E = C.n_embd, G = C.n_kv_head;
  const ROPE = C.position === "rope", RMS = C.norm === "rmsnorm", SWIGLU = C.mlp === "swiglu";
  const kvOf = (h) => Math.floor(h / (H / G));  // the key/value head query head h reads
  const PARAM = Object.fromEntries(Object.entries(TYPING.weights).map(([n, e]) => [n, decode(e)]));
  const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
  let tables = null;  // the tokenizer's lookups, made on first use
  function tokenizerTables() {
    const tk = TYPING.tokenizer;
    if (tables) return tables;
    if (tk.kind === "char") return (tables = { id: new Map(tk.code_points.map((cp, id) => [cp, id])) });
    const rank = new Map(), byteToken = [];
    for (let k = 0; 2 * k < tk.merges.length; ++k) rank.set(tk.merges[2 * k] + "," + tk.merges[2 * k + 1], k);
    for (let b = 0; b < 256; ++b) byteToken.push(tk.byte_ids.length ? tk.byte_ids[b] : b);
    return (tables = { rank, byteToken });
  }
  // BPE within one chunk: the adjacent pair with the lowest merge index, leftmost first, until none.
  function mergeChunk(bytes, out) {
    const { rank, byteToken } = tokenizerTables(), t = Array.from(bytes, (b) => byteToken[b]);
    for (;;) {
      let best = -1, at = -1;
      for (let i = 0; i + 1 < t.length; ++i) {
        const r = rank.get(t[i] + "," + t[i + 1]);
        if (r !== undefined && (best < 0 || r < best)) { best = r; at = i; }
      }
      if (best < 0) return out.push(...t);
      t.splice(at, 2, 256 + best);
    }
  }
  function encodeOrdinary(text, out) {
    const chunks = TYPING.tokenizer.split === "gpt2" ? text.match(GPT2_SPLIT) || [] : text ? [text] : [];
    for (const chunk of chunks) mergeChunk(new TextEncoder().encode(chunk), out);
  }
  // Special tokens first, each where it next occurs (the longest where two start together).
  function encode(text) {
    const tk = TYPING.tokenizer, out = [];
    if (tk.kind === "char")
      return [...text].map((ch) => {
        const id = tokenizerTables().id.get(ch.codePointAt(0));
        if (id === undefined) throw { key: "typed.unknown", vars: { ch: JSON.stringify(ch), cp: "U+" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") } };
        return id;
      });
    for (let done = 0; ;) {
      let best = null;
      for (const [s, id] of tk.specials) {
        const at = text.indexOf(s, done);
        if (at >= 0 && (!best || at < best.at || (at === best.at && s.length > best.s.length))) best = { at, s, id };
      }
      if (!best) { encodeOrdinary(text.slice(done), out); return out; }
      encodeOrdinary(text.slice(done, best.at), out);
      out.push(best.id);
      done = best.at + best.s.length;
    }
  }
  const f32 = (shape, values) => ({ shape, v: Float32Array.from(values) });
  // x [n, k] · W[m, k]ᵀ + b: nn.Linear's layout.
  function linear(x, n, k, name, bias = true) {
    const w = PARAM[name + ".weight"], b = bias && PARAM[name + ".bias"], m = w.shape[0], out = new Float64Array(n * m);
    for (let t = 0; t < n; ++t)
      for (let o = 0; o < m; ++o) {
        let s = b ? b.v[o] : 0;
        for (let c = 0; c < k; ++c) s += x[t * k + c] * w.v[o * k + c];
        out[t * m + o] = s;
      }
    return out;
  }
  // LayerNorm ((x − mean) / √(var + eps) · γ + β) or RMSNorm (x / √(mean(x²) + eps) · γ) of each row;
  // `moments` gets each row's mean and variance, or mean of squares.
  function normalize(x, n, name, moments) {
    const g = PARAM[name + ".weight"].v, b = PARAM[name + ".bias"], out = new Float64Array(n * E);
    for (let t = 0; t < n; ++t) {
      const row = x.subarray(t * E, (t + 1) * E);
      let mean = 0, square = 0, variance = 0;
      for (const v of row) mean += v / E, square += (v * v) / E;
      for (const v of row) variance += ((v - mean) * (v - mean)) / E;
      const r = 1 / Math.sqrt((RMS ? square : variance) + C.norm_eps);
      for (let c = 0; c < E; ++c) out[t * E + c] = (RMS ? row[c] : row[c] - mean) * r * g[c] + (b ? b.v[c] : 0);
      if (moments) moments.push([mean, variance, square]);
    }
    return out;
  }
  const rowNorms = (x, n) => Array.from({ length: n }, (_, t) => Math.hypot(...x.subarray(t * E, (t + 1) * E)));
  const add = (a, b) => a.map((v, i) => v + b[i]);
  const gelu = (z) => 0.5 * z * (1 + Math.tanh(0.7978845608028654 * (z + 0.044715 * z * z * z)));
  // The arrays the C++ page holds for a text of ids, every layer in full.
  function forward(ids) {
    const n = ids.length, out = {}, norms = [], width = (H + 2 * G) * dk, wte = PARAM["transformer.wte.weight"].v;
    const tok = new Float64Array(n * E);
    ids.forEach((id, t) => tok.set(wte.subarray(id * E, (id + 1) * E), t * E));
    out.wte = f32([1, n, E], tok);
    let x = tok;
    if (!ROPE) {
      const pos = PARAM["transformer.wpe.weight"].v.subarray(0, n * E);
      out.wpe = f32([1, n, E], pos);
      x = add(tok, pos);
    }
    out.x0 = f32([1, n, E], x);
    norms.push(rowNorms(x, n));
    const rope = new Float64Array(n * dk);  // cos and sin of position i, pair p at [i, 2p], [i, 2p + 1]
    for (let i = 0; i < n; ++i)
      for (let p = 0; p < dk / 2; ++p) {
        const a = i * Math.pow(C.rope_theta, (-2 * p) / dk);
        rope[i * dk + 2 * p] = Math.cos(a); rope[i * dk + 2 * p + 1] = Math.sin(a);
      }
    if (ROPE) out.rope = f32([n, dk], rope);
    for (let l = 0; l < L; ++l) {
      const pre = `transformer.h.${l}.`, o = `l${l}.`;
      out[o + "in"] = f32([1, n, E], x);
      let qkv = linear(normalize(x, n, pre + "ln_1"), n, E, pre + "attn.c_attn");
      if (ROPE) {  // turn every query and key head's pairs by their position
        out[o + "c_attn"] = f32([1, n, width], qkv);
        qkv = qkv.slice();
        for (let i = 0; i < n; ++i)
          for (let c = 0; c < (H + G) * dk; c += 2) {
            const at = i * width + c, x0 = qkv[at], x1 = qkv[at + 1], p = (c % dk) / 2, cs = rope[i * dk + 2 * p], sn = rope[i * dk + 2 * p + 1];
            qkv[at] = x0 * cs - x1 * sn; qkv[at + 1] = x0 * sn + x1 * cs;
          }
      }
      out[o + "qkv"] = f32([1, n, width], qkv);
      const scores = new Float64Array(H * n * n), weights = new Float64Array(H * n * n), y = new Float64Array(n * E);
      for (let h = 0; h < H; ++h) {
        const qc = h * dk, kc = (H + kvOf(h)) * dk, vc = (H + G + kvOf(h)) * dk;
        for (let i = 0; i < n; ++i) {
          const row = (h * n + i) * n;
          for (let j = 0; j < n; ++j) {
            let s = 0;
            for (let c = 0; c < dk; ++c) s += qkv[i * width + qc + c] * qkv[j * width + kc + c];
            scores[row + j] = s;
          }
          let m = -Infinity, sum = 0;
          for (let j = 0; j <= i; ++j) m = Math.max(m, scores[row + j] / Math.sqrt(dk));
          for (let j = 0; j <= i; ++j) sum += weights[row + j] = Math.exp(scores[row + j] / Math.sqrt(dk) - m);
          for (let j = 0; j <= i; ++j) {
            weights[row + j] /= sum;
            for (let c = 0; c < dk; ++c) y[i * E + h * dk + c] += weights[row + j] * qkv[j * width + vc + c];
          }
        }
      }
      out[o + "scores"] = f32([H, n, n], scores);
      out[o + "scaled"] = f32([H, n, n], scores.map((v) => v / Math.sqrt(dk)));
      out[o + "weights"] = f32([H, n, n], weights);
      out[o + "y"] = f32([1, n, E], y);
      const attn = linear(y, n, E, pre + "attn.c_proj"), mid = add(x, attn), moments = [];
      out[o + "attn"] = f32([1, n, E], attn);
      out[o + "mid"] = f32([1, n, E], mid);
      norms.push(rowNorms(mid, n));
      const ln2 = normalize(mid, n, pre + "ln_2", moments);
      if (RMS) out[o + "ln2.ms"] = f32([n], moments.map((m) => m[2]));
      else { out[o + "ln2.mean"] = f32([n], moments.map((m) => m[0])); out[o + "ln2.var"] = f32([n], moments.map((m) => m[1])); }
      out[o + "ln2"] = f32([1, n, E], ln2);
      const fc = linear(ln2, n, E, pre + "mlp.c_fc"), hidden = C.hidden;
      let act;
      if (SWIGLU) {  // silu(gate)·up, the gate the first half of c_fc's row
        out[o + "fc"] = f32([1, n, 2 * hidden], fc);
        act = new Float64Array(n * hidden);
        for (let t = 0; t < n; ++t)
          for (let k = 0; k < hidden; ++k) { const z = fc[t * 2 * hidden + k]; act[t * hidden + k] = (z / (1 + Math.exp(-z))) * fc[t * 2 * hidden + hidden + k]; }
      } else act = fc.map(gelu);
      out[o + "act"] = f32([1, n, hidden], act);
      const mlp = linear(act, n, hidden, pre + "mlp.c_proj");
      out[o + "mlp"] = f32([1, n, E], mlp);
      x = add(mid, mlp);
      norms.push(rowNorms(x, n));
      out[o + "ln_2.weight"] = PARAM[pre + "ln_2.weight"];
      if (PARAM[pre + "ln_2.bias"]) out[o + "ln_2.bias"] = PARAM[pre + "ln_2.bias"];
      out[o + "out"] = f32([1, n, E], x);
    }
    const lnf = normalize(x, n, "transformer.ln_f");
    norms.push(rowNorms(lnf, n));
    out.lnf = f32([1, n, E], lnf);
    out.norms = f32([2 * L + 2, n], norms.flat());
    out.logits = f32([n, C.vocab_size], linear(lnf, n, E, C.tie ? "transformer.wte" : "lm_head", false));
    return out;
  }
  return { encode, forward };
}
