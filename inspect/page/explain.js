"use strict";
// tinygpt explain: the page's script. Every number comes from the C++ model (float32 arrays in the
// JSON data block); the page draws them and recomputes softmax (temperature, top-k) itself. A text
// typed in the page is computed by pageModel (model.js, before this file in the same script).
(function () {
  const D = JSON.parse(document.getElementById("tinygpt-data").textContent);
  const C = D.config, H = C.n_head, L = C.n_layer, dk = C.d_k, E = C.n_embd;
  // The text shown: the one the page was made with, or one typed in it (computed here, every layer in full).
  let T = D.tokens.length, DETAILED = D.detail_layers, typed = false;  // DETAILED: the layers in full; every layer has its maps
  // The architecture's pieces: GPT-2's (LayerNorm, learned positions, GELU) or the Llama family's.
  const G = C.n_kv_head, ROPE = C.position === "rope", RMS = C.norm === "rmsnorm", SWIGLU = C.mlp === "swiglu";
  const kvOf = (h) => Math.floor(h / (H / G));  // the key/value head query head h reads
  const SVGNS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);

  // ---- text in two languages ------------------------------------------------------------------
  const TEXT = {
    en: {
      title: "tinygpt: how the model reads this text",
      "h.tokens": "1. Tokens", "h.embed": "2. Embeddings and the residual stream",
      "h.attention": "3. Attention, one head at a time", "h.maps": "4. Every head of every layer",
      "h.block": "5. The rest of the block", "h.output": "6. The next token", "h.training": "7. While it trained",
      "p.tokens": "The tokenizer cuts the text into tokens; each has an id (its row in the embedding table) and a position. Choose a token: sections 2, 5 and 6 follow it.",
      "p.embed": "Each token starts as its token vector (wte[id]) plus its position vector (wpe[position]): one row of colours per token. Below: the length |x| of the chosen token's vector in the residual stream after each step.",
      "p.attention": "In each head, every token makes a query (what it looks for), a key (what it offers) and a value (what it passes on). Step through Q, K, V and the five operations on them: 1. scores Q·Kᵀ, 2. divided by √d_k, 3. the causal mask (a token cannot see later ones), 4. softmax, 5. the weighted sum of values.",
      "p.maps": "The attention weights of every head: a row is a query token, a column a key token. Choose one to open it above (* marks a layer this page holds as maps only).",
      "p.block": "After attention, the heads are put side by side and projected (c_proj), added to the residual stream, normalized ({norm}) and passed through the feed-forward network ({mlp}), which is added again.",
      "p.output": "At the chosen position, the final {norm} and the output layer ({head}) give a score for every token; softmax with a temperature turns them into probabilities.",
      "p.training": "Snapshots saved during training (train --snapshot-every): move the slider to see the attention maps and the probabilities at each.",
      layer: "layer", head: "head", prev: "◀ previous", next: "next ▶", "copy.csv": "copy as CSV", "copy.json": "copy as JSON",
      "save.svg": "save as SVG", temperature: "temperature", topk: "top-k (0: all)",
      "detail.hint": "Hover or focus a cell (arrow keys move) to see its exact value and how it was made.",
      step0: "Q, K, V", step1: "1. scores Q·Kᵀ", step2: "2. ÷ √d_k", step3: "3. causal mask", step4: "4. softmax", step5: "5. weights · V",
      query: "query", key: "key", dims: "dimension", token: "token", position: "position", id: "id", bytes: "bytes",
      masked: "masked: key {j} comes after query {i}, so its score is −∞ and its weight 0",
      "check.ok": "self-check passed: every row of weights sums to 1, masked weights are 0, the page's softmax matches the model's",
      "check.bad": "self-check failed: ", "no.snapshots": "No snapshots were given: run explain with --ckpts run.step100.h5,run.step200.h5,... (saved by train --snapshot-every 100).",
      "no.loss": "No CSV log was found beside the checkpoint.", snapshot: "snapshot", iteration: "iteration",
      "loss.title": "loss (train: line, validation: dots)", probability: "probability", logit: "logit",
      "maps.only": "layer {l} is in this page as maps only: run explain with --layers {l} to take it apart",
      "norm.title": "|x| of the chosen token after each step", copied: "copied", "model.line": "{L} layers, {H} heads, {E} embd (d_k = {dk}), vocab {V}, {T} tokens",
      residual: "residual stream in (x)", "heads.concat": "heads side by side (y)", proj: "projected: c_proj(y)",
      mid: "x + attention", ln2: "ln_2(x): (x − mean) / √(variance + {eps}) · γ{beta}", gelu: "GELU(c_fc(ln_2(x)))", mlp: "mlp: c_proj(GELU(...))",
      out: "x + mlp: the block's output", mean: "mean", variance: "variance", gamma: "γ (ln_2.weight)", beta: "β (ln_2.bias)",
      "p.embed.rope": "Each token starts as its token vector (wte[id]) alone: this model has no position vectors. Positions enter inside attention, where RoPE turns each query and key by its position (section 3). Below: the length |x| of the chosen token's vector in the residual stream after each step.",
      "mlp.gelu": "c_fc, GELU, c_proj", "mlp.swiglu": "c_fc makes a gate and an up projection; silu(gate)·up; c_proj",
      "head.tied": "the token embeddings, tied", "head.own": "lm_head, a matrix of its own",
      "ln2.rms": "ln_2(x): x / √(mean(x²) + {eps}) · γ", "mean.square": "mean(x²)",
      "act.swiglu": "silu(gate)·up", gate: "gate: c_fc(ln_2(x)), first half", up: "up: c_fc(ln_2(x)), second half",
      "mlp.out.swiglu": "mlp: c_proj(silu(gate)·up)",
      "h.rope": "RoPE: queries and keys turned by their position",
      "p.rope": "RoPE cuts each head's query and key into pairs of dimensions (2p, 2p+1) and turns pair p of the token at position i by the angle a = i·θ^(−2p/d_k), θ = {theta}: (x₀, x₁) → (x₀·cos a − x₁·sin a, x₀·sin a + x₁·cos a). Values are not turned. Because the query and the key are both turned, Q[i]·K[j] depends on how far apart i and j are, not on where they are. The table: the chosen token's pairs in this layer and head; the arrows: its first pairs of q, each drawn to the circle, before (grey) and after (blue).",
      "rope.of": "{token} at position {i}, layer {l}, head {h} (key/value head {g})", pair: "pair p", angle: "angle a",
      before: "before", after: "after", "rope.turn": "RoPE turns pair {p} of position {i} by a = {i}·{theta}^(−{twop}/{dk}) = {a}",
      "before.rope": "before RoPE (c_attn)", "kv.share": "query heads sharing key/value head {g}: {qs}",
      "arch.layernorm": "LayerNorm", "arch.rmsnorm": "RMSNorm", "arch.learned": "learned positions", "arch.rope": "RoPE",
      "arch.gelu": "GELU", "arch.swiglu": "SwiGLU", "arch.kv": "{G} key/value heads", "arch.kv1": "1 key/value head", "arch.bias": "biases", "arch.nobias": "no biases",
      "arch.tied": "tied output", "arch.own": "lm_head",
      "f.scores": "scores = Q·Kᵀ    [T, T]: row i, column j = Σ_c Q[i,c]·K[j,c]  ({dk} products)",
      "f.scaled": "scaled = scores / √d_k = scores / {root}    Why: a score is a sum of d_k products and grows like √d_k; unscaled, the softmax would put nearly all the weight on one key. Below: the softmax of query {i}'s row both ways, on the scores' colour scale.",
      "f.masked": "masked = scaled, with −∞ where key j comes after query i (hatched)",
      "f.weights": "weights[i,j] = exp(masked[i,j] − max_j) / Σ_j exp(masked[i,j] − max_j)   (each row sums to 1)",
      "f.output": "output = weights·V    [T, d_k]: row i = Σ_{j≤i} weights[i,j]·V[j,:]",
      "how.at": "layer {l}, head {h}: query {i} {qt}, key {j} {kt}",
      "how.row": "layer {l}, head {h}{kv}: {name}[{i},{j}], token {i} {t}, dimension {j}", "how.kv": " (key/value head {g})",
      "how.sum": "sum of {dk} products Q[{i},c]·K[{j},c]:", "how.keys": "sum over keys 0..{i}: {sum}",
      "cap.square": "{name} [{rows}, {cols}]: a row per query, a column per key", "cap.rows": "{name} [{rows}, {cols}]: a row per token, a column per dimension",
      "cmp.unscaled": "softmax without ÷ √d_k", "cmp.scaled": "softmax after ÷ √d_k", "cmp.of": "query {i} {t}: the largest weight is {a} unscaled, {b} scaled",
      "h.headview": "Head view", "p.headview": "Lines from each query (left) to the keys it reads (right), darker for more weight; the chosen token's lines in orange. Layer {l}, head {h}.",
      "h.where": "Where this is in the model", blocks: "× {L} blocks", tokens: "tokens",
      "diagram.attention": "attention: {H} × (Q·Kᵀ → ÷√d_k → mask → softmax → ·V)", "diagram.softmax": "softmax → next-token probabilities",
      "h.differs": "How this model differs from the original Transformer (Vaswani et al., 2017)",
      "differs.decoder": "Decoder only: no encoder and no cross-attention; the causal mask lets each token see only itself and earlier tokens.",
      "differs.prenorm": "Pre-norm: {norm} comes before each sublayer (ln_1 before attention, ln_2 before the MLP) and once more at the end (ln_f); the original normalizes after each residual addition (Add & Norm).",
      "differs.rmsnorm": "RMSNorm divides by the root mean square and subtracts no mean; the original uses LayerNorm.",
      "differs.learned": "Learned positions: a trained table (wpe) is added to the token vectors; the original adds fixed sinusoids.",
      "differs.rope": "RoPE: no position vectors; each query and key is turned by an angle that grows with its position; the original adds fixed sinusoids to the embeddings.",
      "differs.gelu": "GELU (tanh approximation) in the feed-forward network, where the original uses ReLU.",
      "differs.swiglu": "SwiGLU in the feed-forward network, silu(gate)·up, where the original uses ReLU.",
      "differs.kv": "Grouped-query attention: {H} query heads share {G} key/value heads; the original gives every head its own.",
      "differs.tied": "The output layer reuses the token embeddings (tied), as the original does.",
      "differs.own": "The output layer is a matrix of its own (lm_head); the original shares it with the embeddings.",
      "check.same": "the page's own forward pass gives the C++ numbers (largest difference {d} of an array's largest value)",
      "check.typed": "computed in the page: the checks hold; its forward pass matched the C++ numbers on the page's own text",
      "typed.label": "your text", "typed.compute": "compute it here", "typed.original": "the page's text",
      "typed.ready": "the page computes a text typed here itself (Ctrl+Enter): models of up to {most} parameters, this one has {p}",
      "typed.unknown": "{ch} ({cp}) is not one of the model's characters", "typed.empty": "type at least one character",
      "typed.done": "computed in the page: {n} tokens, every layer in full", "typed.cut": "{n} tokens: the first {most} are computed",
      "typed.sentencepiece": "Typing a text needs the tokenizer in the page, and a SentencePiece tokenizer runs only in the C++ library: run tinygpt explain --text instead.",
      "typed.parameters": "Typing a text: a page computes models of up to {most} parameters and this one has {p}: run tinygpt explain --text instead.",
      "typed.snapshots": "The snapshots were computed on the page's own text: choose \"the page's text\" to see them.",
      "norm.embedding": "embedding", "embed.hint": "Hover a cell to see its exact value.", "block.hint": "Hover a cell to see its exact value.",
    },
    ko: {
      title: "tinygpt: 모델이 이 글을 읽는 방법",
      "h.tokens": "1. 토큰", "h.embed": "2. 임베딩과 잔차 스트림", "h.attention": "3. 어텐션, 헤드 하나씩",
      "h.maps": "4. 모든 층의 모든 헤드", "h.block": "5. 블록의 나머지", "h.output": "6. 다음 토큰", "h.training": "7. 학습하는 동안",
      "p.tokens": "토크나이저가 글을 토큰으로 자릅니다. 토큰마다 id(임베딩 표의 행)와 위치가 있습니다. 토큰을 고르면 2, 5, 6절이 그 토큰을 따라갑니다.",
      "p.embed": "각 토큰은 토큰 벡터(wte[id])와 위치 벡터(wpe[위치])의 합으로 시작합니다: 토큰마다 한 줄의 색. 아래: 고른 토큰의 벡터 길이 |x|가 단계마다 어떻게 바뀌는지.",
      "p.attention": "헤드마다 각 토큰은 쿼리(찾는 것), 키(내보이는 것), 값(전달하는 것)을 만듭니다. Q, K, V와 그 위의 다섯 연산을 차례로 봅니다: 1. 점수 Q·Kᵀ, 2. √d_k로 나누기, 3. 인과 마스크(뒤의 토큰은 볼 수 없음), 4. 소프트맥스, 5. 값의 가중합.",
      "p.maps": "모든 헤드의 어텐션 가중치: 행은 쿼리 토큰, 열은 키 토큰입니다. 하나를 고르면 위에서 열립니다(*: 이 페이지에 지도로만 있는 층).",
      "p.block": "어텐션 뒤에 헤드들을 나란히 붙여 투영(c_proj)하고, 잔차 스트림에 더하고, 정규화({norm})한 뒤 피드포워드 신경망({mlp})을 거쳐 다시 더합니다.",
      "p.output": "고른 위치에서 마지막 {norm}과 출력층({head})이 모든 토큰의 점수를 내고, 온도를 둔 소프트맥스가 확률로 바꿉니다.",
      "p.training": "학습 중 저장한 스냅숏(train --snapshot-every): 슬라이더를 움직여 각 시점의 어텐션 지도와 확률을 봅니다.",
      layer: "층", head: "헤드", prev: "◀ 이전", next: "다음 ▶", "copy.csv": "CSV로 복사", "copy.json": "JSON으로 복사",
      "save.svg": "SVG로 저장", temperature: "온도", topk: "top-k (0: 전부)",
      "detail.hint": "칸에 마우스를 올리거나 포커스하면(화살표 키로 이동) 정확한 값과 계산 과정을 보여 줍니다.",
      step0: "Q, K, V", step1: "1. 점수 Q·Kᵀ", step2: "2. ÷ √d_k", step3: "3. 인과 마스크", step4: "4. 소프트맥스", step5: "5. 가중치 · V",
      query: "쿼리", key: "키", dims: "차원", token: "토큰", position: "위치", id: "id", bytes: "바이트",
      masked: "마스크됨: 키 {j}는 쿼리 {i}보다 뒤에 있어 점수가 −∞, 가중치가 0입니다",
      "check.ok": "자체 점검 통과: 가중치의 각 행의 합은 1, 마스크된 가중치는 0, 페이지의 소프트맥스가 모델과 일치",
      "check.bad": "자체 점검 실패: ", "no.snapshots": "스냅숏이 없습니다: explain에 --ckpts run.step100.h5,run.step200.h5,... 를 주세요 (train --snapshot-every 100이 저장).",
      "no.loss": "체크포인트 옆에 CSV 기록이 없습니다.", snapshot: "스냅숏", iteration: "반복",
      "loss.title": "손실 (학습: 선, 검증: 점)", probability: "확률", logit: "로짓",
      "maps.only": "{l}층은 이 페이지에 지도로만 있습니다: explain에 --layers {l}을 주면 자세히 봅니다",
      "norm.title": "단계마다 고른 토큰의 |x|", copied: "복사됨", "model.line": "{L}층, 헤드 {H}개, 임베딩 {E} (d_k = {dk}), 어휘 {V}, 토큰 {T}개",
      residual: "들어오는 잔차 스트림 (x)", "heads.concat": "나란히 붙인 헤드 (y)", proj: "투영: c_proj(y)",
      mid: "x + 어텐션", ln2: "ln_2(x): (x − 평균) / √(분산 + {eps}) · γ{beta}", gelu: "GELU(c_fc(ln_2(x)))", mlp: "mlp: c_proj(GELU(...))",
      out: "x + mlp: 블록의 출력", mean: "평균", variance: "분산", gamma: "γ (ln_2.weight)", beta: "β (ln_2.bias)",
      "p.embed.rope": "각 토큰은 토큰 벡터(wte[id]) 하나로 시작합니다: 이 모델에는 위치 벡터가 없습니다. 위치는 어텐션 안에서 들어옵니다: RoPE가 쿼리와 키를 그 위치만큼 돌립니다(3절). 아래: 고른 토큰의 벡터 길이 |x|가 단계마다 어떻게 바뀌는지.",
      "mlp.gelu": "c_fc, GELU, c_proj", "mlp.swiglu": "c_fc가 게이트와 업 투영을 만들고, silu(게이트)·업, c_proj",
      "head.tied": "토큰 임베딩을 공유", "head.own": "따로 있는 행렬 lm_head",
      "ln2.rms": "ln_2(x): x / √(mean(x²) + {eps}) · γ", "mean.square": "제곱의 평균 mean(x²)",
      "act.swiglu": "silu(게이트)·업", gate: "게이트: c_fc(ln_2(x))의 앞 절반", up: "업: c_fc(ln_2(x))의 뒤 절반",
      "mlp.out.swiglu": "mlp: c_proj(silu(게이트)·업)",
      "h.rope": "RoPE: 위치만큼 돌린 쿼리와 키",
      "p.rope": "RoPE는 헤드의 쿼리와 키를 차원 쌍 (2p, 2p+1)으로 나누고, 위치 i에 있는 토큰의 p번째 쌍을 각 a = i·θ^(−2p/d_k)만큼 돌립니다(θ = {theta}): (x₀, x₁) → (x₀·cos a − x₁·sin a, x₀·sin a + x₁·cos a). 값(V)은 돌리지 않습니다. 쿼리와 키를 모두 돌리므로 Q[i]·K[j]는 두 토큰이 어디에 있는지가 아니라 얼마나 떨어져 있는지에 달려 있습니다. 표: 이 층과 헤드에서 고른 토큰의 쌍들. 화살표: 그 토큰 q의 앞쪽 쌍들을 원의 크기로, 돌리기 전(회색)과 후(파랑).",
      "rope.of": "위치 {i}의 {token}, {l}층, 헤드 {h} (키/값 헤드 {g})", pair: "쌍 p", angle: "각 a",
      before: "전", after: "후", "rope.turn": "RoPE가 위치 {i}의 쌍 {p}를 돌리는 각: a = {i}·{theta}^(−{twop}/{dk}) = {a}",
      "before.rope": "RoPE 전 (c_attn)", "kv.share": "함께 쓰는 쿼리 헤드: {qs} (키/값 헤드 {g})",
      "arch.layernorm": "LayerNorm", "arch.rmsnorm": "RMSNorm", "arch.learned": "학습된 위치", "arch.rope": "RoPE",
      "arch.gelu": "GELU", "arch.swiglu": "SwiGLU", "arch.kv": "키/값 헤드 {G}개", "arch.kv1": "키/값 헤드 1개", "arch.bias": "편향 있음", "arch.nobias": "편향 없음",
      "arch.tied": "출력층 공유", "arch.own": "lm_head 따로",
      "f.scores": "scores = Q·Kᵀ    [T, T]: i행 j열 = Σ_c Q[i,c]·K[j,c]  (곱 {dk}개의 합)",
      "f.scaled": "scaled = scores / √d_k = scores / {root}    왜: 점수는 곱 d_k개의 합이라 √d_k에 비례해 커집니다. 나누지 않으면 소프트맥스가 거의 모든 가중치를 키 하나에 줍니다. 아래: 쿼리 {i}의 행에 나누기 전과 후의 소프트맥스를 한 것, 점수와 같은 색 척도.",
      "f.masked": "masked = scaled, 키 j가 쿼리 i보다 뒤에 있으면 −∞ (빗금)",
      "f.weights": "weights[i,j] = exp(masked[i,j] − max_j) / Σ_j exp(masked[i,j] − max_j)   (각 행의 합은 1)",
      "f.output": "output = weights·V    [T, d_k]: i행 = Σ_{j≤i} weights[i,j]·V[j,:]",
      "how.at": "{l}층, 헤드 {h}: 쿼리 {i} {qt}, 키 {j} {kt}",
      "how.row": "{l}층, 헤드 {h}{kv}: {name}[{i},{j}], 토큰 {i} {t}, 차원 {j}", "how.kv": " (키/값 헤드 {g})",
      "how.sum": "곱 {dk}개 Q[{i},c]·K[{j},c]의 합:", "how.keys": "키 0..{i}에 대한 합: {sum}",
      "cap.square": "{name} [{rows}, {cols}]: 행은 쿼리, 열은 키", "cap.rows": "{name} [{rows}, {cols}]: 행은 토큰, 열은 차원",
      "cmp.unscaled": "÷ √d_k 없이 한 소프트맥스", "cmp.scaled": "÷ √d_k 뒤의 소프트맥스", "cmp.of": "쿼리 {i} {t}: 가장 큰 가중치가 나누기 전 {a}, 나눈 뒤 {b}",
      "h.headview": "헤드 보기", "p.headview": "각 쿼리(왼쪽)에서 그 쿼리가 읽는 키(오른쪽)로 가는 선: 가중치가 클수록 진합니다. 고른 토큰의 선은 주황색. {l}층, 헤드 {h}.",
      "h.where": "모델 안에서 지금 보는 곳", blocks: "블록 × {L}", tokens: "토큰",
      "diagram.attention": "어텐션: {H} × (Q·Kᵀ → ÷√d_k → 마스크 → 소프트맥스 → ·V)", "diagram.softmax": "소프트맥스 → 다음 토큰의 확률",
      "h.differs": "이 모델이 원래의 트랜스포머(Vaswani 외, 2017)와 다른 점",
      "differs.decoder": "디코더만 있습니다: 인코더도 교차 어텐션도 없고, 인과 마스크 때문에 각 토큰은 자기와 앞의 토큰만 봅니다.",
      "differs.prenorm": "사전 정규화: {norm}이 각 부분층 앞(어텐션 앞의 ln_1, MLP 앞의 ln_2)과 맨 끝(ln_f)에 옵니다. 원래 모델은 잔차를 더한 뒤에 정규화합니다(Add & Norm).",
      "differs.rmsnorm": "RMSNorm은 제곱평균제곱근으로 나누기만 하고 평균을 빼지 않습니다. 원래 모델은 LayerNorm을 씁니다.",
      "differs.learned": "학습된 위치: 학습한 표(wpe)를 토큰 벡터에 더합니다. 원래 모델은 고정된 사인 곡선을 더합니다.",
      "differs.rope": "RoPE: 위치 벡터가 없고, 쿼리와 키를 위치에 따라 커지는 각만큼 돌립니다. 원래 모델은 고정된 사인 곡선을 임베딩에 더합니다.",
      "differs.gelu": "피드포워드 신경망에 GELU(tanh 근사)를 씁니다. 원래 모델은 ReLU를 씁니다.",
      "differs.swiglu": "피드포워드 신경망에 SwiGLU, 곧 silu(게이트)·업을 씁니다. 원래 모델은 ReLU를 씁니다.",
      "differs.kv": "그룹 쿼리 어텐션: 쿼리 헤드 {H}개가 키/값 헤드 {G}개를 함께 씁니다. 원래 모델은 헤드마다 따로 있습니다.",
      "differs.tied": "출력층은 원래 모델처럼 토큰 임베딩을 다시 씁니다(공유).",
      "differs.own": "출력층은 따로 있는 행렬(lm_head)입니다. 원래 모델은 임베딩과 공유합니다.",
      "check.same": "페이지가 직접 한 순전파가 C++의 수와 같음 (가장 큰 차이: 배열 최댓값의 {d})",
      "check.typed": "페이지에서 계산함: 점검 통과. 페이지의 순전파는 페이지 원래 글에서 C++의 수와 같았음",
      "typed.label": "직접 쓴 글", "typed.compute": "여기서 계산", "typed.original": "페이지의 원래 글",
      "typed.ready": "여기에 쓴 글은 페이지가 직접 계산합니다(Ctrl+Enter): 매개변수 {most}개까지의 모델, 이 모델은 {p}개",
      "typed.unknown": "{ch} ({cp})는 모델의 문자에 없습니다", "typed.empty": "한 글자 이상 쓰세요",
      "typed.done": "페이지에서 계산함: 토큰 {n}개, 모든 층을 자세히", "typed.cut": "토큰 {n}개: 앞의 {most}개만 계산합니다",
      "typed.sentencepiece": "글을 직접 쓰려면 페이지 안에 토크나이저가 있어야 하는데, SentencePiece 토크나이저는 C++ 라이브러리에서만 돕니다: 대신 tinygpt explain --text를 쓰세요.",
      "typed.parameters": "글 직접 쓰기: 페이지는 매개변수 {most}개까지의 모델을 계산하는데 이 모델은 {p}개입니다: 대신 tinygpt explain --text를 쓰세요.",
      "typed.snapshots": "스냅숏은 페이지의 원래 글로 계산했습니다: 보려면 \"페이지의 원래 글\"을 누르세요.",
      "norm.embedding": "임베딩", "embed.hint": "칸에 마우스를 올리면 정확한 값을 보여 줍니다.", "block.hint": "칸에 마우스를 올리면 정확한 값을 보여 줍니다.",
    },
  };
  const state = { lang: D.language === "ko" ? "ko" : "en", layer: 0, head: 0, step: 0, pos: T - 1, t: 1, k: 0, snap: -1, cell: [T - 1, 0] };
  // Whether a Korean reading of `text` ends in a consonant (batchim): a number by its last digit
  // (일, 삼, 육, 칠, 팔, and 영 십 백 천 만 for a final 0 do; 이, 사, 오, 구 do not), a Hangul
  // syllable by its final jamo; null for anything else (Latin text keeps the particle as written).
  const endsInConsonant = (text) => {
    if (/^-?[0-9][0-9,]*$/.test(text)) return !"2459".includes(text[text.length - 1]);
    const c = text.codePointAt(text.length - 1);
    return c >= 0xac00 && c <= 0xd7a3 ? (c - 0xac00) % 28 !== 0 : null;
  };
  const PARTICLES = { "은": ["은", "는"], "는": ["은", "는"], "이": ["이", "가"], "가": ["이", "가"],
                      "을": ["을", "를"], "를": ["을", "를"], "과": ["과", "와"], "와": ["과", "와"] };
  const tr = (key, vars) => {
    let s = (TEXT[state.lang][key] !== undefined ? TEXT[state.lang][key] : TEXT.en[key]) || key;
    for (const [k, v] of Object.entries(vars || {})) {
      const value = String(v), consonant = endsInConsonant(value);
      s = s.replace(new RegExp("\\{" + k + "\\}(은|는|이|가|을|를|과|와)?", "g"), (_, particle) =>
        value + (particle ? (consonant === null ? particle : PARTICLES[particle][consonant ? 0 : 1]) : ""));
    }
    return s;
  };

  // ---- the data: float32 arrays from base64 ----------------------------------------------------
  function decode(entry) {
    const bin = atob(entry.f32 || entry.i32);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; ++i) bytes[i] = bin.charCodeAt(i);
    const values = entry.f32 ? new Float32Array(bytes.buffer) : new Int32Array(bytes.buffer);
    return { shape: entry.shape, v: values };
  }
  function arrays(model) {
    const out = {};
    for (const [name, entry] of Object.entries(model.arrays)) out[name] = decode(entry);
    return out;
  }
  let A = arrays(D.model);
  const snapshots = D.snapshots.map((s) => ({ name: s.name, iteration: s.iteration, a: arrays(s) }));
  // The shortest decimal that reads back as the same float32: the number the C++ wrote.
  function exact(x) {
    if (!isFinite(x)) return String(x);
    for (let p = 1; p <= 9; ++p) {
      const s = x.toPrecision(p);
      if (Math.fround(Number(s)) === x) return String(Number(s));
    }
    return String(x);
  }
  const factor = (x) => (x < 0 ? `(${exact(x)})` : exact(x));  // a product's factor: "a·(−b)", never "+ -b"
  const short = (x) => (Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(2) : x.toFixed(4));
  const tokenLabel = (i) => D.tokens[i].label;
  const vocabLabel = (id) => (D.vocab ? D.vocab[id] : typed ? D.typing.tokenizer.labels[id] : (D.candidate_labels || {})[id]) || "#" + id;

  // ---- a typed text: computed in the page (model.js) when the page carries the weights ----------
  const TYPING = D.typing, MODEL = TYPING.weights ? pageModel(C, TYPING, decode) : null;
  const encode = (text) => MODEL.encode(text), forward = (ids) => MODEL.forward(ids);

  // How far the page's forward pass is from the C++ numbers of the same text: the largest difference
  // of any array, relative to that array's largest value. Float rounding stays far under kRounding.
  const kRounding = 1e-4;
  function compareWithModel() {
    const mine = forward(ORIGINAL.tokens.map((t) => t.id)), problems = [];
    let worst = 0, where = "";
    const kept = ORIGINAL.arrays.logit_ids;  // a large vocabulary: each position's candidates only
    if (kept) mine.logits = { shape: kept.shape, v: Float32Array.from(kept.v, (id, k) => mine.logits.v[Math.floor(k / kept.shape[1]) * C.vocab_size + id]) };
    for (const [name, theirs] of Object.entries(ORIGINAL.arrays)) {
      const ours = mine[name];
      if (!ours) continue;
      if (ours.v.length !== theirs.v.length) { problems.push(`${name}: ${ours.v.length} numbers, the model's ${theirs.v.length}`); continue; }
      let scale = 1e-30;
      for (const v of theirs.v) scale = Math.max(scale, Math.abs(v));
      for (let i = 0; i < ours.v.length; ++i) {
        const d = Math.abs(ours.v[i] - theirs.v[i]) / scale;
        if (!(d <= worst)) { worst = d; where = name; }
      }
    }
    if (!(worst <= kRounding)) problems.push(`the page's forward pass differs from the model's in ${where} by ${worst.toExponential(2)} of its largest value`);
    return { problems, worst };
  }
  let checked = null;  // compareWithModel() on the page's own text, once the page is drawn

  // ---- colour: a colour-blind-safe sequential scale (viridis) and a diverging one (blue-orange) --
  const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const DIVERGING = [[33, 102, 172], [103, 169, 207], [247, 247, 247], [244, 165, 96], [178, 24, 43]];
  function rampRGB(stops, t) {
    t = Math.min(1, Math.max(0, t)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(t)), f = t - i;
    return stops[i].map((v, k) => Math.round(v + f * (stops[i + 1][k] - v)));
  }
  const css = ([r, g, b]) => `rgb(${r},${g},${b})`;
  // A scale for values: weights in [0, 1] sequential; anything signed diverging around 0.
  // rgb(x) gives [r, g, b]; color(x) the same as CSS.
  function scaleFor(values, kind) {
    if (kind === "weights") return withColor({ lo: 0, hi: 1, rgb: (x) => rampRGB(VIRIDIS, x), kind });
    let m = 0;
    for (const x of values) if (isFinite(x)) m = Math.max(m, Math.abs(x));
    m = m || 1;
    return withColor({ lo: -m, hi: m, rgb: (x) => rampRGB(DIVERGING, (x + m) / (2 * m)), kind });
  }
  const withColor = (scale) => ({ ...scale, color: (x) => css(scale.rgb(x)) });
  const WEIGHTS = scaleFor([], "weights");
  function el(tag, attrs, children) {
    const ns = ["svg", "rect", "g", "text", "line", "polyline", "circle", "path", "title", "pattern", "defs"].includes(tag);
    const e = ns ? document.createElementNS(SVGNS, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children || []) if (c) e.appendChild(c);
    return e;
  }
  function legend(scale, width) {
    const g = el("g", { class: "legend" });
    const n = 40;
    for (let i = 0; i < n; ++i)
      g.appendChild(el("rect", { x: (i * width) / n, y: 0, width: width / n + 0.5, height: 8, fill: scale.color(scale.lo + ((scale.hi - scale.lo) * (i + 0.5)) / n) }));
    const ticks = scale.kind === "weights" ? [0, 0.5, 1] : [scale.lo, 0, scale.hi];
    ticks.forEach((v, i) => g.appendChild(el("text", { x: (i * width) / 2, y: 20, "font-size": 10, "text-anchor": ["start", "middle", "end"][i], text: short(v) })));
    return g;
  }

  // A heatmap of rows x cols as SVG, with a numeric legend; cell(i, j) -> value (or null: masked).
  // onCell(i, j) on hover, focus movement with the arrow keys. Returns {svg, select(i, j)}.
  function heatmap(o) {
    const cs = o.cell || Math.max(3, Math.min(28, Math.floor((o.width || 420) / Math.max(o.cols, 1))));  // a short text: large cells
    // Room for the labels: the longest row label, and the longest column label turned by 60°.
    const longest = (f, n) => (f ? Math.max(1, ...Array.from({ length: n }, (_, k) => String(f(k)).length)) : 0);
    const left = o.rowLabels ? Math.min(90, 8 + 6.5 * longest(o.rowLabels, o.rows)) : 4;
    const top = o.colLabels ? Math.min(90, 10 + 5.7 * longest(o.colLabels, o.cols)) : 4;
    const w = Math.max(left + o.cols * cs + 8, left + 180), h = top + o.rows * cs + 34;
    const svg = el("svg", { xmlns: SVGNS, width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": o.label || "" });
    const values = [];
    for (let i = 0; i < o.rows; ++i) for (let j = 0; j < o.cols; ++j) { const v = o.value(i, j); if (v !== null) values.push(v); }
    const scale = o.scale || scaleFor(values, o.kind);
    const defs = el("defs", {}, [el("pattern", { id: "hatch" + (o.id || ""), width: 4, height: 4, patternUnits: "userSpaceOnUse" },
      [el("rect", { width: 4, height: 4, fill: "#fff" }), el("path", { d: "M0,4 L4,0", stroke: "#999", "stroke-width": 1 })])]);
    svg.appendChild(defs);
    const g = el("g", { transform: `translate(${left},${top})` });
    for (let i = 0; i < o.rows; ++i)
      for (let j = 0; j < o.cols; ++j) {
        const v = o.value(i, j);
        const r = el("rect", { x: j * cs, y: i * cs, width: cs, height: cs, fill: v === null ? `url(#hatch${o.id || ""})` : scale.color(v), "data-i": i, "data-j": j });
        g.appendChild(r);
      }
    const cursor = el("rect", { width: cs, height: cs, fill: "none", stroke: "#f2a900", "stroke-width": 2, visibility: "hidden" });
    g.appendChild(cursor);
    svg.appendChild(g);
    if (o.rowLabels && cs >= 7)
      for (let i = 0; i < o.rows; ++i) svg.appendChild(el("text", { x: left - 3, y: top + i * cs + cs * 0.8, "font-size": Math.min(11, cs), "text-anchor": "end", text: o.rowLabels(i) }));
    if (o.colLabels && cs >= 7)
      for (let j = 0; j < o.cols; ++j) svg.appendChild(el("text", { transform: `translate(${left + j * cs + cs * 0.75},${top - 3}) rotate(-60)`, "font-size": Math.min(11, cs), text: o.colLabels(j) }));
    const lg = legend(scale, 160);  // its own width: three tick labels never overlap
    lg.setAttribute("transform", `translate(${left},${top + o.rows * cs + 6})`);
    svg.appendChild(lg);
    let at = null;
    function select(i, j) {
      i = Math.max(0, Math.min(o.rows - 1, i)); j = Math.max(0, Math.min(o.cols - 1, j));
      at = [i, j];
      cursor.setAttribute("x", j * cs); cursor.setAttribute("y", i * cs); cursor.setAttribute("visibility", "visible");
      if (o.onCell) o.onCell(i, j);
    }
    if (o.onCell) {
      svg.setAttribute("tabindex", "0");
      g.addEventListener("mousemove", (e) => { const t = e.target; if (t.dataset && t.dataset.i !== undefined) select(+t.dataset.i, +t.dataset.j); });
      svg.addEventListener("focus", () => select(at ? at[0] : 0, at ? at[1] : 0));
      svg.addEventListener("keydown", (e) => {
        const d = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
        if (!d) return;
        e.preventDefault(); e.stopPropagation();
        select((at ? at[0] : 0) + d[0], (at ? at[1] : 0) + d[1]);
      });
    }
    return { svg, select, scale };
  }
  const figure = (caption, node) => el("figure", {}, [el("figcaption", { text: caption }), node]);

  // ---- attention: one layer and head, step by step ---------------------------------------------
  const at = (arr, ...idx) => { let o = 0; for (let k = 0; k < idx.length; ++k) o = o * arr.shape[k] + idx[k]; return arr.v[o]; };
  // c_attn's row: n_head query heads, then G key heads, then G value heads, d_k columns each; query
  // head h reads key/value head kvOf(h). "qkv" is what attention uses, "c_attn" the same before RoPE.
  const column = (which, h, c) => (which === 0 ? h * dk : (H + (which - 1) * G) * dk + kvOf(h) * dk) + c;
  const qkv = (l, which, i, c, name = "qkv") => at(A[`l${l}.${name}`], 0, i, column(which, state.head, c));
  const square = (name) => (i, j) => at(A[`l${state.layer}.${name}`], state.head, i, j);
  const output = (i, c) => at(A[`l${state.layer}.y`], 0, i, state.head * dk + c);
  const rootDk = Math.sqrt(dk);
  // The scores' colour scale, which the scaled and masked scores share: ÷ √d_k shows as a fading.
  const scoresScale = () => {
    const values = [];
    for (let i = 0; i < T; ++i) for (let j = 0; j < T; ++j) values.push(square("scores")(i, j));
    return scaleFor(values, "signed");
  };
  const STEPS = [
    { formula: () => {
        const made = (n) => `ln_1(x)·W_${n}${C.bias ? " + b_" + n : ""}`, turned = (n) => (ROPE ? `rope(${made(n)}, ${tr("position")})` : made(n));
        return `Q = ${turned("q")},  K = ${turned("k")},  V = ${made("v")}    [T, d_k] = [${T}, ${dk}]`;
      },
      figures: () => ["Q", "K", "V"].map((n, w) => ({ name: n, rows: T, cols: dk, value: (i, c) => qkv(state.layer, w, i, c), kind: "signed" })) },
    { formula: () => tr("f.scores", { dk }),
      figures: () => [{ name: "scores", rows: T, cols: T, value: square("scores"), kind: "signed" }] },
    { formula: () => tr("f.scaled", { root: exact(Math.fround(rootDk)), i: state.cell[0] }),
      figures: () => [{ name: "scaled", rows: T, cols: T, value: square("scaled"), kind: "signed", scale: scoresScale() }], extra: softmaxBothWays },
    { formula: () => tr("f.masked"),
      figures: () => [{ name: "masked", rows: T, cols: T, value: (i, j) => (j > i ? null : square("scaled")(i, j)), kind: "signed", scale: scoresScale() }] },
    { formula: () => tr("f.weights"),
      figures: () => [{ name: "weights", rows: T, cols: T, value: (i, j) => (j > i ? null : square("weights")(i, j)), kind: "weights" }] },
    { formula: () => tr("f.output"),
      figures: () => [{ name: "output", rows: T, cols: dk, value: output, kind: "signed" }] },
  ];
  // What a hovered cell is and how it was made: its layer, head, query and key (or token and
  // dimension), then the arithmetic with the numbers.
  function how(name, i, j) {
    const l = state.layer, h = state.head, quote = (k) => JSON.stringify(tokenLabel(k));
    if (name === "Q" || name === "K" || name === "V" || name === "output") {
      const kv = name === "K" || name === "V" ? tr("how.kv", { g: kvOf(h) }) : "";
      const row = tr("how.row", { l, h, kv, name, i, j, t: quote(i) });
      if (name === "output") {
        const terms = [];
        for (let k = 0; k <= i; ++k) terms.push(`${factor(square("weights")(i, k))}·${factor(qkv(l, 2, k, j))}`);
        return `${row}\nΣ_{j≤${i}} weights[${i},j]·V[j,${j}]:\n${terms.join(" + ")}`;
      }
      const made = `ln_1(x)[${i}] · W_${name.toLowerCase()}[:, ${j}]${C.bias ? " + b" : ""} (c_attn)`;
      return name === "V" || !ROPE ? `${row}\n= ${made}` : `${row}\n${ropeHow(name === "Q" ? 0 : 1, i, j)}`;
    }
    const cell = tr("how.at", { l, h, i, j, qt: quote(i), kt: quote(j) });
    if (name === "masked" && j > i) return `${cell}\n${tr("masked", { i, j })}`;
    const s = square("scores")(i, j), scaled = square("scaled")(i, j);
    if (name === "scores") {
      const terms = [];
      for (let c = 0; c < dk; ++c) terms.push(`${factor(qkv(l, 0, i, c))}·${factor(qkv(l, 1, j, c))}`);
      return `${cell}\n${tr("how.sum", { dk, i, j })}\n${terms.join(" + ")}\n= ${exact(s)}`;
    }
    if (name === "scaled" || name === "masked") return `${cell}\n${exact(s)} / √${dk} = ${exact(s)} / ${exact(Math.fround(rootDk))} = ${exact(scaled)}`;
    if (name === "weights") {
      if (j > i) return `${cell}\n${tr("masked", { i, j })}`;
      let m = -Infinity, sum = 0;
      for (let k = 0; k <= i; ++k) m = Math.max(m, square("scaled")(i, k));
      for (let k = 0; k <= i; ++k) sum += Math.exp(square("scaled")(i, k) - m);
      const e = Math.exp(scaled - m);
      return `${cell}\nexp(${exact(scaled)} − ${exact(m)}) = ${e.toPrecision(7)}\n${tr("how.keys", { i, sum: sum.toPrecision(7) })}\n` +
        `${e.toPrecision(7)} / ${sum.toPrecision(7)} = ${(e / sum).toPrecision(7)}`;
    }
    return cell;
  }
  // Step 2's reason, drawn: query i's row through the softmax without and with ÷ √d_k, as bars.
  function softmaxBothWays() {
    const i = Math.min(state.cell[0], T - 1), rows = [square("scores"), square("scaled")].map((f) => {
      const xs = Array.from({ length: i + 1 }, (_, j) => f(i, j)), m = Math.max(...xs), e = xs.map((x) => Math.exp(x - m)), sum = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / sum);
    });
    const bar = 14, w = 170, svg = el("svg", { xmlns: SVGNS, id: "softmax-both", width: 2 * w + 150, height: (i + 1) * bar + 40, role: "img", "aria-label": tr("cmp.of", { i, t: "", a: "", b: "" }) });
    [tr("cmp.unscaled"), tr("cmp.scaled")].forEach((title, k) => svg.appendChild(el("text", { x: 60 + k * (w + 20), y: 12, "font-size": 11, text: title })));
    for (let j = 0; j <= i; ++j) {
      const y = 20 + j * bar;
      svg.appendChild(el("text", { x: 56, y: y + bar - 4, "font-size": 11, "text-anchor": "end", text: tokenLabel(j) }));
      rows.forEach((r, k) => {
        svg.appendChild(el("rect", { x: 60 + k * (w + 20), y, width: Math.max(1, w * r[j]), height: bar - 3, fill: css(rampRGB(VIRIDIS, r[j])) },
          [el("title", { text: `${tr(k ? "cmp.scaled" : "cmp.unscaled")}: ${tr("key")} ${j} ${JSON.stringify(tokenLabel(j))} ${r[j].toPrecision(4)}` })]));
        svg.appendChild(el("text", { x: 64 + k * (w + 20) + w * r[j], y: y + bar - 4, "font-size": 10, text: r[j].toFixed(3) }));
      });
    }
    const top = rows.map((r) => Math.max(...r).toFixed(3));
    return figure(tr("cmp.of", { i, t: JSON.stringify(tokenLabel(i)), a: top[0], b: top[1] }), svg);
  }
  // ---- RoPE: pair p of position i turned by a = i·θ^(−2p/d_k) ----------------------------------
  const ropeCos = (i, p) => at(A.rope, i, 2 * p), ropeSin = (i, p) => at(A.rope, i, 2 * p + 1);
  // Q (which 0) or K (which 1) of position i, column c: before RoPE, the turn, after.
  function ropeHow(which, i, c) {
    const p = Math.floor(c / 2), x0 = qkv(state.layer, which, i, 2 * p, "c_attn"), x1 = qkv(state.layer, which, i, 2 * p + 1, "c_attn");
    const cs = ropeCos(i, p), sn = ropeSin(i, p), a = i * Math.pow(C.rope_theta, (-2 * p) / dk);
    const made = c % 2 === 0 ? `${factor(x0)}·${factor(cs)} − ${factor(x1)}·${factor(sn)}` : `${factor(x0)}·${factor(sn)} + ${factor(x1)}·${factor(cs)}`;
    return `${tr("before.rope")}: (x₀, x₁) = (${exact(x0)}, ${exact(x1)})\n` +
      `${tr("rope.turn", { p, i, theta: C.rope_theta, twop: 2 * p, dk, a: a.toPrecision(7) })}\ncos a = ${exact(cs)}, sin a = ${exact(sn)}\n` +
      `= ${made} = ${exact(qkv(state.layer, which, i, c))}`;
  }
  // The chosen token's pairs: a table of every pair and arrows for the first few.
  function drawRope() {
    const box = $("rope");
    box.hidden = !ROPE;
    if (!ROPE) return;
    const figs = $("rope-figures"), i = state.pos, l = state.layer, pairs = dk / 2;
    figs.textContent = "";
    const value = (which, c, name) => qkv(l, which, i, c, name);
    const head = [tr("pair"), "θ^(−2p/d_k)", tr("angle"), "cos a", "sin a", `q ${tr("before")}`, `q ${tr("after")}`, `k ${tr("before")}`, `k ${tr("after")}`];
    const table = el("table", { class: "rope", id: "rope-table" }, [
      el("caption", { class: "muted", text: tr("rope.of", { token: JSON.stringify(tokenLabel(i)), i, l, h: state.head, g: kvOf(state.head) }) }),
      el("tr", {}, head.map((t) => el("th", { text: t })))]);
    const pair = (which, p, name) => `(${short(value(which, 2 * p, name))}, ${short(value(which, 2 * p + 1, name))})`;
    for (let p = 0; p < pairs; ++p) {
      const freq = Math.pow(C.rope_theta, (-2 * p) / dk);
      table.appendChild(el("tr", { "data-pair": p }, [p, freq.toPrecision(5), (i * freq).toPrecision(5), short(ropeCos(i, p)), short(ropeSin(i, p)),
        pair(0, p, "c_attn"), pair(0, p, "qkv"), pair(1, p, "c_attn"), pair(1, p, "qkv")].map((t) => el("td", { text: String(t) }))));
    }
    figs.appendChild(el("div", { class: "rope-pairs" }, [table]));
    // q's first pairs as arrows from the origin, before (grey) and after (blue); each pair drawn to
    // the circle's radius, as the turn keeps its length.
    const shown = Math.min(pairs, 4), r = 44, svg = el("svg", { xmlns: SVGNS, width: shown * (2 * r + 16), height: 2 * r + 30, id: "rope-arrows", role: "img", "aria-label": tr("h.rope") });
    for (let p = 0; p < shown; ++p) {
      const cx = p * (2 * r + 16) + r + 4, cy = r + 4, k = (r - 4) / (Math.hypot(value(0, 2 * p, "c_attn"), value(0, 2 * p + 1, "c_attn")) || 1);
      svg.appendChild(el("circle", { cx, cy, r, fill: "none", stroke: "#d0d0d0" }));
      for (const [name, colour] of [["c_attn", "#9a9a9a"], ["qkv", "#3b6fb6"]])
        svg.appendChild(el("line", { x1: cx, y1: cy, x2: cx + k * value(0, 2 * p, name), y2: cy - k * value(0, 2 * p + 1, name), stroke: colour, "stroke-width": 2 }));
      svg.appendChild(el("text", { x: cx, y: 2 * r + 24, "font-size": 11, "text-anchor": "middle", text: `p = ${p}, a = ${(i * Math.pow(C.rope_theta, (-2 * p) / dk)).toFixed(3)}` }));
    }
    figs.appendChild(svg);
  }

  // bertviz's head view: each query token (left) joined to every key it reads (right) by a line as
  // dark as the weight; the chosen token's lines in orange. Every line names its cell and weight.
  function drawHeadView() {
    const box = $("head-view"), a = A, l = state.layer, h = state.head;  // the stepper's model, as the section
    box.textContent = "";
    const rowH = Math.max(9, Math.min(18, Math.floor(640 / T))), labelW = 90, gap = 160, width = 2 * labelW + gap, height = T * rowH + 8;
    const svg = el("svg", { xmlns: SVGNS, id: "head-view-svg", width, height, role: "img", "aria-label": tr("h.headview") });
    const y = (i) => 4 + i * rowH + rowH / 2;
    for (let i = 0; i < T; ++i)
      for (let j = 0; j <= i; ++j) {
        const w = at(a[`l${l}.weights`], h, i, j), mine = i === state.pos;
        if (w < 0.01 && !mine) continue;  // a line under 1% is not visible
        svg.appendChild(el("line", { x1: labelW, y1: y(i), x2: labelW + gap, y2: y(j), stroke: mine ? "#e08214" : "#0b5cad", "stroke-opacity": Math.max(0.02, w),
          "stroke-width": 1 + 3 * w, "data-i": i, "data-j": j }, [el("title", { text: `${tr("how.at", { l, h, i, j, qt: JSON.stringify(tokenLabel(i)), kt: JSON.stringify(tokenLabel(j)) })}: ${exact(w)}` })]));
      }
    for (let i = 0; i < T; ++i) {
      const size = Math.min(12, rowH - 1), strong = i === state.pos ? 700 : 400;
      svg.appendChild(el("text", { x: labelW - 4, y: y(i) + size / 3, "font-size": size, "font-weight": strong, "text-anchor": "end", text: tokenLabel(i) }));
      svg.appendChild(el("text", { x: labelW + gap + 4, y: y(i) + size / 3, "font-size": size, "font-weight": strong, text: tokenLabel(i) }));
    }
    box.appendChild(el("h3", { text: tr("h.headview") }));
    box.appendChild(el("p", { class: "explain", text: tr("p.headview", { l, h }) }));
    box.appendChild(svg);
  }
  // The whole model as boxes, the part a section shows ("embedding", "attention", "mlp", "output")
  // filled: a learner sees where they are.
  function blockDiagram(part) {
    const boxes = [
      [tr("tokens"), ""], [ROPE ? "wte[id]" : `wte[id] + wpe[${tr("position")}]`, "embedding"],
      [RMS ? "ln_1 (RMSNorm)" : "ln_1 (LayerNorm)", "block"], [tr("diagram.attention", { H }), "attention"],
      ["c_proj, + x", "mlp"], [RMS ? "ln_2 (RMSNorm)" : "ln_2 (LayerNorm)", "mlp"], [`MLP (${SWIGLU ? "SwiGLU" : "GELU"}), + x`, "mlp"],
      ["ln_f", "output"], [C.tie ? "wteᵀ" : "lm_head", "output"], [tr("diagram.softmax"), "output"]];
    const rowH = 24, w = 440, svg = el("svg", { xmlns: SVGNS, id: "where-" + part + "-svg", class: "where", width: w, height: boxes.length * rowH + 30, role: "img", "aria-label": tr("h.where") });
    svg.appendChild(el("text", { x: 0, y: 12, "font-size": 12, "font-weight": 600, text: tr("h.where") }));
    svg.appendChild(el("rect", { x: 2, y: 18 + 2 * rowH - 3, width: w - 4, height: 5 * rowH + 2, fill: "none", stroke: "#999", "stroke-dasharray": "4 3" }));
    [`${tr("layer")} ${state.layer}`, tr("blocks", { L })].forEach((t, k) =>
      svg.appendChild(el("text", { x: w - 6, y: 18 + 3 * rowH + 12 * k, "font-size": 10, "text-anchor": "end", fill: "#5a5a5a", text: t })));
    boxes.forEach(([label, p], k) => {
      const here = p === part || (part === "attention" && p === "block");
      const g = el("g", { "data-part": p, class: here ? "here" : "" });
      g.appendChild(el("rect", { x: 12, y: 18 + k * rowH, width: w - 90, height: rowH - 6, rx: 3, fill: here ? "#0b5cad" : "#f6f6f4", stroke: "#d0d0d0" }));
      g.appendChild(el("text", { x: 18, y: 18 + k * rowH + 13, "font-size": 11, fill: here ? "#fff" : "#1b1b1b", text: label }));
      svg.appendChild(g);
    });
    return svg;
  }

  let current = [];  // the step's figures: {spec, map}
  function drawStep() {
    const step = STEPS[state.step];
    $("formula").textContent = step.formula();
    [...$("steps").children].forEach((b, k) => b.setAttribute("aria-current", k === state.step ? "step" : "false"));
    const box = $("step-figures");
    box.textContent = "";
    current = step.figures().map((spec) => {
      const square = spec.cols === T && spec.name !== "Q" && spec.name !== "K" && spec.name !== "V" && spec.name !== "output";
      const map = heatmap({ ...spec, id: spec.name, width: square ? 460 : Math.max(200, 9 * spec.cols), label: spec.name,
        rowLabels: (i) => tokenLabel(i), colLabels: square ? (j) => tokenLabel(j) : (j) => String(j),
        onCell: (i, j) => showCell(spec, i, j) });
      map.svg.id = "map-" + spec.name;
      box.appendChild(figure(tr(square ? "cap.square" : "cap.rows", { name: spec.name, rows: spec.rows, cols: spec.cols }), map.svg));
      return { spec, map };
    });
    if (step.extra) box.appendChild(el("div", { id: "step-extra" }, [step.extra()]));
    const [ci, cj] = state.cell;
    const first = current[0];
    first.map.select(Math.min(ci, first.spec.rows - 1), Math.min(cj, first.spec.cols - 1));
    drawRope();
    drawHeadView();
    const where = $("where-attention");
    where.textContent = "";
    where.appendChild(blockDiagram("attention"));
    const sharing = [...Array(H).keys()].filter((h) => kvOf(h) === kvOf(state.head));
    $("kv-share").textContent = G < H ? tr("kv.share", { g: kvOf(state.head), qs: sharing.join(", ") }) : "";
    updateHash();
  }
  function showCell(spec, i, j) {
    const row = state.cell[0];
    state.cell = [i, j];
    if (STEPS[state.step].extra && i !== row && $("step-extra")) {  // step 2's softmax follows the hovered query
      $("formula").textContent = STEPS[state.step].formula();
      $("step-extra").replaceChildren(STEPS[state.step].extra());
    }
    const v = spec.value(i, j);
    $("cell-value").textContent = v === null ? "−∞ → 0" : exact(v);
    $("cell-value").dataset.value = v === null ? "" : exact(v);
    $("cell-value").dataset.cell = `${spec.name}:${i}:${j}`;
    $("cell-how").textContent = how(spec.name, i, j);
  }
  function matrixOf(spec) {
    const rows = [];
    for (let i = 0; i < spec.rows; ++i) { const r = []; for (let j = 0; j < spec.cols; ++j) { const v = spec.value(i, j); r.push(v === null ? null : Number(exact(v))); } rows.push(r); }
    return rows;
  }
  function copyText(text, button) {
    const done = () => { const old = button.textContent; button.textContent = tr("copied"); setTimeout(() => (button.textContent = old), 900); };
    const fallback = () => { const t = el("textarea", {}); t.value = text; document.body.appendChild(t); t.select(); document.execCommand("copy"); t.remove(); done(); };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
    window.tinygptLastCopy = text;
  }

  // ---- maps of every head, and the training slider ---------------------------------------------
  const weightsOf = (a) => (l, h) => (i, j) => (j > i ? null : at(a[`l${l}.weights`], h, i, j));
  // rows x cols cells as one pixel each of a canvas, scaled up by CSS to w x h: for maps too many or
  // too large for an SVG element per cell. A masked cell (null) is white.
  function pixels(rows, cols, value, scale, w, h) {
    const canvas = el("canvas", { width: cols, height: rows, style: `display: block; width: ${w}px; height: ${h}px; image-rendering: pixelated` });
    const ctx = canvas.getContext("2d"), img = ctx.createImageData(cols, rows);
    for (let i = 0; i < rows; ++i)
      for (let j = 0; j < cols; ++j) {
        const v = value(i, j), o = 4 * (i * cols + j);
        const [r, g, b] = v === null ? [255, 255, 255] : scale.rgb(v);
        img.data[o] = r; img.data[o + 1] = g; img.data[o + 2] = b; img.data[o + 3] = 255;
      }
    ctx.putImageData(img, 0, 0);
    return canvas;
  }
  function drawMaps() {
    const box = $("maps");
    box.textContent = "";
    box.style.gridTemplateColumns = `repeat(${H}, max-content)`;
    const a = state.snap >= 0 ? snapshots[state.snap].a : A;
    const cell = Math.max(1, Math.min(4, Math.floor(120 / T)));
    for (let l = 0; l < L; ++l)
      for (let h = 0; h < H; ++h) {
        const full = DETAILED.includes(l);
        const b = el("button", { type: "button", "aria-current": String(l === state.layer && h === state.head), "data-layer": l, "data-head": h,
          title: full ? "" : tr("maps.only", { l }),
          onclick: () => { if (!full) return; state.layer = l; state.head = h; syncSelectors(); drawStep(); drawMaps(); drawBlock(); $("s-attention").scrollIntoView(); } },
          [pixels(T, T, weightsOf(a)(l, h), WEIGHTS, T * cell, T * cell), el("span", { text: `${tr("layer")} ${l} · ${tr("head")} ${h}${full ? "" : " *"}` })]);
        if (!full) b.setAttribute("aria-disabled", "true");
        b.firstChild.addEventListener("mousemove", (e) => {  // every cell names its layer, head, query and key
          const i = Math.min(T - 1, Math.floor(e.offsetY / cell)), j = Math.min(T - 1, Math.floor(e.offsetX / cell)), w = weightsOf(a)(l, h)(i, j);
          $("maps-value").textContent = `${tr("how.at", { l, h, i, j, qt: JSON.stringify(tokenLabel(i)), kt: JSON.stringify(tokenLabel(j)) })}: ` +
            (w === null ? tr("masked", { i, j }) : exact(w));
        });
        box.appendChild(b);
      }
    $("maps-legend").textContent = "";
    $("maps-legend").appendChild(el("svg", { xmlns: SVGNS, width: 180, height: 24 }, [legend(WEIGHTS, 160)]));
    $("maps-legend").appendChild(el("div", { class: "detail", id: "maps-value", text: tr("embed.hint") }));
  }

  // ---- the rest of the block for the chosen token ----------------------------------------------
  function strip(name, arr, row, width, caption) {
    const n = arr.shape[arr.shape.length - 1];
    const value = (i, j) => arr.v[row * n + j];
    const m = heatmap({ rows: 1, cols: n, cell: Math.max(1, Math.min(8, Math.floor(width / n))), value, kind: "signed", id: name, label: caption,
      onCell: (i, j) => { $("block-value").textContent = `${caption} [${j}] = ${exact(value(0, j))}`; } });
    m.svg.id = "strip-" + name;
    return figure(caption, m.svg);
  }
  // Columns [half·n, (half + 1)·n) of a [1, T, 2n] array (SwiGLU's gate: half 0, up: half 1) as [1, T, n].
  function halfOf(arr, half) {
    const n = arr.shape[2] / 2, out = new Float32Array(T * n);
    for (let i = 0; i < T; ++i) out.set(arr.v.subarray(i * 2 * n + half * n, i * 2 * n + (half + 1) * n), i * n);
    return { shape: [1, T, n], v: out };
  }
  function drawBlock() {
    const box = $("block");
    box.textContent = "";
    const l = state.layer, p = state.pos, pre = `l${l}.`;
    box.appendChild(el("p", { class: "muted", text: `${tr("layer")} ${l}, ${tr("token")} ${p} ${JSON.stringify(tokenLabel(p))}` }));
    const inx = A[pre + "in"], bias = A[pre + "ln_2.bias"], eps = exact(Math.fround(C.norm_eps));
    // RMSNorm divides by √(mean(x²) + eps); LayerNorm subtracts the mean and divides by √(var + eps).
    const stats = RMS
      ? (() => { const ms = A[pre + "ln2.ms"].v[p]; return `${tr("mean.square")} = ${exact(ms)}, 1/√(mean(x²) + ${eps}) = ${(1 / Math.sqrt(ms + C.norm_eps)).toPrecision(7)}`; })()
      : (() => { const mean = A[pre + "ln2.mean"].v[p], variance = A[pre + "ln2.var"].v[p];
          return `${tr("mean")} = ${exact(mean)}, ${tr("variance")} = ${exact(variance)}, 1/√(${tr("variance")} + ${eps}) = ${(1 / Math.sqrt(variance + C.norm_eps)).toPrecision(7)}`; })();
    const mlp = SWIGLU
      ? [strip("gate", halfOf(A[pre + "fc"], 0), p, 520, tr("gate")), strip("up", halfOf(A[pre + "fc"], 1), p, 520, tr("up")),
         strip("act", A[pre + "act"], p, 520, tr("act.swiglu")), strip("mlp", A[pre + "mlp"], p, 520, tr("mlp.out.swiglu"))]
      : [strip("act", A[pre + "act"], p, 520, tr("gelu")), strip("mlp", A[pre + "mlp"], p, 520, tr("mlp"))];
    const rows = [
      strip("x", inx, p, 520, tr("residual")), strip("y", A[pre + "y"], p, 520, tr("heads.concat")),
      strip("attn", A[pre + "attn"], p, 520, tr("proj")), strip("mid", A[pre + "mid"], p, 520, tr("mid")),
      el("p", { class: "formula", id: "norm-stats", text: stats }),
      strip("gamma", A[pre + "ln_2.weight"], 0, 520, tr("gamma")), bias ? strip("beta", bias, 0, 520, tr("beta")) : null,
      strip("ln2", A[pre + "ln2"], p, 520, RMS ? tr("ln2.rms", { eps }) : tr("ln2", { eps, beta: bias ? " + β" : "" })),
      ...mlp, strip("out", A[pre + "out"], p, 520, tr("out")),
      el("div", { class: "detail", id: "block-value", text: tr("block.hint") }),
    ].filter((r) => r);
    rows.forEach((r) => box.appendChild(r));
    $("where-mlp").replaceChildren(blockDiagram("mlp"));
  }

  // ---- embeddings and the residual stream's length ---------------------------------------------
  function drawEmbed() {
    const box = $("embed");
    box.textContent = "";
    // Pixels, not an SVG element per cell: T x C is 98k cells for GPT-2's width and 128 tokens.
    const cw = Math.max(1, Math.floor(360 / E)), ch = Math.max(2, Math.min(8, Math.floor(300 / T)));
    const where = `wpe[${tr("position")}]`;
    const shown = ROPE ? [["wte", "wte[id]"], ["x0", "x = wte[id]"]] : [["wte", "wte[id]"], ["wpe", where], ["x0", `x = wte[id] + ${where}`]];
    for (const [name, caption] of shown) {
      const arr = A[name], value = (i, j) => arr.v[i * E + j];
      const scale = scaleFor(arr.v, "signed");
      const canvas = pixels(T, E, value, scale, E * cw, T * ch);
      canvas.id = "embed-" + name;
      canvas.addEventListener("mousemove", (e) => {
        const i = Math.min(T - 1, Math.floor(e.offsetY / ch)), j = Math.min(E - 1, Math.floor(e.offsetX / cw));
        $("embed-value").textContent = `${caption}: ${tr("token")} ${i} ${JSON.stringify(tokenLabel(i))} [${j}] = ${exact(value(i, j))}`;
      });
      const labels = el("div", { class: "row-labels", style: `font-size: ${ch}px; line-height: ${ch}px` },
        ch >= 7 ? D.tokens.map((_, i) => el("div", { text: tokenLabel(i) })) : []);
      box.appendChild(figure(tr("cap.rows", { name: caption, rows: T, cols: E }), el("div", {}, [el("div", { style: "display: flex; gap: 4px" }, [labels, canvas]),
        el("div", { class: "legend", text: `${tr("dims")} 0 … ${E - 1} →` }),
        el("svg", { xmlns: SVGNS, width: 180, height: 24 }, [legend(scale, 160)])])));
    }
    box.appendChild(el("div", { class: "detail", id: "embed-value", text: tr("embed.hint") }));
    $("where-embedding").replaceChildren(blockDiagram("embedding"));
    drawNorms();
  }
  function drawNorms() {
    const box = $("norms");
    box.textContent = "";
    const n = A.norms, stages = n.shape[0], p = state.pos;
    const names = [tr("norm.embedding")];
    for (let l = 0; l < L; ++l) names.push(`${l}: + attn`, `${l}: + mlp`);
    names.push("ln_f");
    const vals = names.map((_, s) => n.v[s * T + p]);
    const max = Math.max(...vals) || 1, w = 520, rowH = 16;
    const svg = el("svg", { xmlns: SVGNS, width: w, height: stages * rowH + 24, role: "img", "aria-label": tr("norm.title") });
    svg.appendChild(el("text", { x: 0, y: 12, "font-size": 12, text: `${tr("norm.title")}: ${tr("token")} ${p} ${JSON.stringify(tokenLabel(p))}` }));
    vals.forEach((v, s) => {
      svg.appendChild(el("text", { x: 0, y: 32 + s * rowH, "font-size": 11, text: names[s] }));
      svg.appendChild(el("rect", { x: 110, y: 22 + s * rowH, width: ((w - 200) * v) / max, height: rowH - 4, fill: "#3b6fb6" }));
      svg.appendChild(el("text", { x: 115 + ((w - 200) * v) / max, y: 32 + s * rowH, "font-size": 11, text: exact(v) }));
    });
    box.appendChild(svg);
  }

  // ---- next-token probabilities, recomputed here for a temperature and top-k -------------------
  function probabilities(a, p) {
    const lg = a.logits, V = lg.shape[1];
    const ids = a.logit_ids ? Array.from(a.logit_ids.v.subarray(p * V, (p + 1) * V)) : [...Array(V).keys()];
    const logits = Array.from(lg.v.subarray(p * V, (p + 1) * V));
    let order = ids.map((_, k) => k).sort((x, y) => logits[y] - logits[x] || ids[x] - ids[y]);
    if (state.k > 0) order = order.slice(0, state.k);
    const m = logits[order[0]];
    let sum = 0;
    const e = order.map((k) => { const v = Math.exp((logits[k] - m) / state.t); sum += v; return v; });
    return order.map((k, r) => ({ id: ids[k], logit: logits[k], p: e[r] / sum }));
  }
  function drawProbs() {
    $("temperature-value").textContent = state.t.toFixed(2);
    const a = state.snap >= 0 ? snapshots[state.snap].a : A;
    const list = probabilities(a, state.pos);
    const table = el("table", { class: "probs", id: "probs-table" });
    table.appendChild(el("caption", { class: "muted", text: `${tr("position")} ${state.pos} ${JSON.stringify(tokenLabel(state.pos))} → ?` }));
    for (const c of list.slice(0, 20))
      table.appendChild(el("tr", { "data-id": c.id, "data-p": c.p }, [
        el("td", { class: "tok", text: JSON.stringify(vocabLabel(c.id)) }), el("td", { class: "muted", text: "#" + c.id }),
        el("td", { class: "bar" }, [el("div", { style: `width: ${Math.max(1, 300 * c.p)}px` })]),
        el("td", { text: (100 * c.p).toFixed(2) + "%" }), el("td", { class: "muted", text: `${tr("logit")} ${exact(c.logit)}` })]));
    const box = $("probs");
    box.textContent = "";
    box.appendChild(table);
    $("where-output").replaceChildren(blockDiagram("output"));
  }

  // ---- training: the snapshot slider and the loss curve ----------------------------------------
  function drawTraining() {
    const controls = $("snapshot-controls"), box = $("training");
    controls.textContent = "";
    box.textContent = "";
    if (!snapshots.length || typed) { controls.appendChild(el("p", { class: "muted", text: tr(typed ? "typed.snapshots" : "no.snapshots") })); }
    else {
      // The snapshots, then the checkpoint itself (state.snap -1) at the slider's end.
      const shown = () => (state.snap >= 0 ? snapshots[state.snap] : { name: D.model.name, iteration: D.model.iteration });
      const slider = el("input", { type: "range", id: "snapshot", min: 0, max: snapshots.length, step: 1,
        value: state.snap >= 0 ? state.snap : snapshots.length, "aria-label": tr("snapshot") });
      const label = el("output", { id: "snapshot-label" });
      const show = () => (label.textContent = `${shown().name} (${tr("iteration")} ${shown().iteration})`);
      slider.addEventListener("input", () => {
        state.snap = +slider.value < snapshots.length ? +slider.value : -1;
        show(); drawMaps(); drawProbs(); drawLoss(); updateHash();
      });
      controls.appendChild(el("label", {}, [el("span", { text: tr("snapshot") }), slider, label]));
      show();
    }
    drawLoss();
  }
  function drawLoss() {
    const box = $("training");
    box.textContent = "";
    if (!D.loss.length) { box.appendChild(el("p", { class: "muted", text: tr("no.loss") })); return; }
    const w = 520, h = 220, pad = 36;
    const xs = D.loss.map((r) => r[0]), ys = D.loss.flatMap((r) => [r[1], r[2]]).filter((v) => v !== null);
    const x0 = Math.min(...xs), x1 = Math.max(...xs) || 1, y0 = Math.min(...ys), y1 = Math.max(...ys);
    const X = (x) => pad + ((w - 2 * pad) * (x - x0)) / (x1 - x0 || 1), Y = (y) => h - pad - ((h - 2 * pad) * (y - y0)) / (y1 - y0 || 1);
    const svg = el("svg", { xmlns: SVGNS, width: w, height: h, id: "loss-plot", role: "img", "aria-label": tr("loss.title") });
    svg.appendChild(el("text", { x: pad, y: 14, "font-size": 12, text: tr("loss.title") }));
    svg.appendChild(el("polyline", { fill: "none", stroke: "#3b6fb6", "stroke-width": 1.5, points: D.loss.map((r) => `${X(r[0])},${Y(r[1])}`).join(" ") }));
    for (const r of D.loss) if (r[2] !== null) svg.appendChild(el("circle", { cx: X(r[0]), cy: Y(r[2]), r: 3, fill: "#e08214" }));
    for (const [v, y] of [[y1, Y(y1)], [y0, Y(y0)]]) svg.appendChild(el("text", { x: 2, y: y + 4, "font-size": 10, text: v.toFixed(3) }));
    for (const [v, x] of [[x0, X(x0)], [x1, X(x1)]]) svg.appendChild(el("text", { x, y: h - pad + 14, "font-size": 10, "text-anchor": "middle", text: String(v) }));
    const iteration = state.snap >= 0 ? snapshots[state.snap].iteration : D.model.iteration;
    if (snapshots.length && !typed && iteration >= 0) {
      const x = X(iteration);
      svg.appendChild(el("line", { id: "snapshot-marker", x1: x, x2: x, y1: pad - 10, y2: h - pad, stroke: "#1b1b1b", "stroke-dasharray": "3 3" }));
    }
    box.appendChild(svg);
  }

  // ---- self-check: the model's numbers hold what they must --------------------------------------
  // Every query and key pair the model turned is c_attn's pair turned by the page's cos and sin; the
  // values are c_attn's own.
  function ropeProblems(l) {
    const out = [], before = A[`l${l}.c_attn`], after = A[`l${l}.qkv`], width = after.shape[2];
    for (let i = 0; i < T; ++i)
      for (let c = 0; c < width; c += 2) {
        const x0 = at(before, 0, i, c), x1 = at(before, 0, i, c + 1), p = (c % dk) / 2;
        const turned = c < (H + G) * dk;
        const want0 = turned ? x0 * ropeCos(i, p) - x1 * ropeSin(i, p) : x0, want1 = turned ? x0 * ropeSin(i, p) + x1 * ropeCos(i, p) : x1;
        const tol = 1e-6 * (Math.abs(x0) + Math.abs(x1)) + 1e-30;
        if (Math.abs(at(after, 0, i, c) - want0) > tol || Math.abs(at(after, 0, i, c + 1) - want1) > tol)
          out.push(`l${l} RoPE of position ${i}, columns ${c}, ${c + 1}: page (${want0}, ${want1}) vs model (${at(after, 0, i, c)}, ${at(after, 0, i, c + 1)})`);
      }
    return out;
  }
  function selfCheck() {
    const problems = [];
    for (let l = 0; l < L; ++l)
      for (let h = 0; h < H; ++h)
        for (let i = 0; i < T; ++i) {
          let sum = 0, m = -Infinity, esum = 0;
          for (let j = 0; j < T; ++j) {
            const w = at(A[`l${l}.weights`], h, i, j);
            if (j > i && w !== 0) problems.push(`l${l} h${h}: masked weight [${i},${j}] = ${w}`);
            if (j <= i) sum += w;
          }
          if (Math.abs(sum - 1) > 1e-5) problems.push(`l${l} h${h} row ${i} sums to ${sum}`);
          if (!DETAILED.includes(l)) continue;  // the page's softmax needs the scaled scores
          for (let j = 0; j <= i; ++j) m = Math.max(m, at(A[`l${l}.scaled`], h, i, j));
          for (let j = 0; j <= i; ++j) esum += Math.exp(at(A[`l${l}.scaled`], h, i, j) - m);
          for (let j = 0; j <= i; ++j) {
            const mine = Math.exp(at(A[`l${l}.scaled`], h, i, j) - m) / esum, model = at(A[`l${l}.weights`], h, i, j);
            if (Math.abs(mine - model) > 2e-6) problems.push(`l${l} h${h} weight [${i},${j}]: page ${mine} vs model ${model}`);
          }
        }
    if (ROPE) for (const l of DETAILED) problems.push(...ropeProblems(l));
    const probs = probabilities(A, T - 1).reduce((s, c) => s + c.p, 0);
    if (Math.abs(probs - 1) > 1e-6) problems.push(`probabilities sum to ${probs}`);
    if (checked && !typed) problems.push(...checked.problems);
    const box = $("self-check");
    box.className = "check " + (problems.length ? "bad" : "ok");
    const compared = typed ? tr("check.typed") : checked ? tr("check.same", { d: checked.worst.toExponential(1) }) : "";
    box.textContent = problems.length ? tr("check.bad") + problems.slice(0, 3).join("; ") : "✓ " + tr("check.ok") + (compared ? "; " + compared : "");
    box.dataset.problems = problems.length;
    box.dataset.worst = checked ? checked.worst : "";
  }

  // ---- the chosen token, selectors, language, URL fragment -------------------------------------
  function drawTokens() {
    const box = $("tokens");
    box.textContent = "";
    D.tokens.forEach((t, i) => {
      const b = el("button", { type: "button", class: "token" + (t.partial ? " partial" : ""), "aria-pressed": String(i === state.pos), "data-pos": i,
        title: `${tr("id")} ${t.id}, ${tr("position")} ${i}, ${tr("bytes")} ${t.bytes}`,
        onclick: () => { state.pos = i; drawTokens(); drawNorms(); drawRope(); drawHeadView(); drawBlock(); drawProbs(); updateHash(); } },
        [el("span", { class: "t", text: t.partial ? `‹${t.bytes}›` : t.label }), el("span", { class: "meta", text: `${t.id} · ${i}` })]);  // ␣ for a space, as every map labels it
      box.appendChild(b);
    });
  }
  function syncSelectors() { $("layer").value = state.layer; $("head").value = state.head; }
  function translate() {
    document.documentElement.lang = state.lang;
    const normName = tr("arch." + C.norm);
    const vars = { norm: normName, mlp: tr("mlp." + C.mlp), head: tr(C.tie ? "head.tied" : "head.own"), theta: C.rope_theta };
    const variant = (key) => (key === "p.embed" && ROPE ? "p.embed.rope" : key);
    document.querySelectorAll("[data-i18n]").forEach((e) => (e.textContent = tr(variant(e.dataset.i18n), vars)));
    $("lang").textContent = state.lang === "en" ? "한국어" : "English";
    $("tokens").setAttribute("aria-label", tr("tokens"));
    const arch = [normName, tr("arch." + C.position), tr("arch." + C.mlp), G < H ? tr(G === 1 ? "arch.kv1" : "arch.kv", { G }) : null, tr(C.bias ? "arch.bias" : "arch.nobias"),
      tr(C.tie ? "arch.tied" : "arch.own")];
    $("model-line").textContent = [tr("model.line", { L, H, E, dk, V: C.vocab_size, T }), ...arch.filter((a) => a)].join(" · ");
    [...$("steps").children].forEach((b, k) => (b.textContent = tr("step" + k)));
    drawDiffers();
    drawTyping();
  }
  // The few ways this model is not the Transformer of "Attention Is All You Need".
  function drawDiffers() {
    const keys = ["differs.decoder", "differs.prenorm", RMS ? "differs.rmsnorm" : null, ROPE ? "differs.rope" : "differs.learned",
      SWIGLU ? "differs.swiglu" : "differs.gelu", G < H ? "differs.kv" : null, C.tie ? "differs.tied" : "differs.own"].filter((k) => k);
    $("differs-list").replaceChildren(...keys.map((k) => el("li", { "data-key": k, text: tr(k, { norm: tr("arch." + C.norm), H, G }) })));
  }

  // ---- typing a text: tokenized and computed in the page -----------------------------------------
  const ORIGINAL = { arrays: A, tokens: D.tokens, detailed: DETAILED };
  let typedNote = null;  // [key, vars] of what the last typed text gave
  function drawTyping() {
    const note = $("typed-note");
    if (TYPING.refusal) {
      for (const id of ["typed", "compute", "original"]) $(id).disabled = true;
      note.textContent = tr("typed." + TYPING.refusal, { most: grouped(TYPING.most_parameters), p: grouped(TYPING.parameters) });
    } else note.textContent = typedNote ? tr(typedNote[0], typedNote[1]) : tr("typed.ready", { most: grouped(TYPING.most_parameters), p: grouped(TYPING.parameters) });
  }
  const grouped = (n) => n.toLocaleString("en-US");  // 2,000,000: read the same in both languages
  const tokenOf = (id) => ({ id, label: TYPING.tokenizer.labels[id], bytes: TYPING.tokenizer.bytes[id], partial: TYPING.tokenizer.partial[id] === 1 });
  function showText(arrays, tokens, detailed, isTyped) {
    A = arrays; D.tokens = tokens; T = tokens.length; DETAILED = detailed; typed = isTyped;
    state.pos = T - 1; state.cell = [T - 1, 0];
    if (typed) state.snap = -1;
    if (!DETAILED.includes(state.layer)) state.layer = DETAILED[0];
    fillLayers();
    $("notes").textContent = typed ? "" : D.notes.join(" · ");  // what was cut or left out of the page's own text
    drawAll();
    updateHash();
  }
  function computeTyped() {
    let ids;
    try { ids = encode($("typed").value); } catch (e) { typedNote = e.key ? [e.key, e.vars] : ["typed.empty", {}]; drawTyping(); return; }
    if (!ids.length) { typedNote = ["typed.empty", {}]; drawTyping(); return; }
    typedNote = ids.length > TYPING.most_tokens ? ["typed.cut", { n: ids.length, most: TYPING.most_tokens }] : ["typed.done", { n: ids.length }];
    ids = ids.slice(0, TYPING.most_tokens);
    showText(forward(ids), ids.map(tokenOf), [...Array(L).keys()], true);
  }
  function fillLayers() {
    $("layer").replaceChildren(...DETAILED.map((l) => el("option", { value: l, text: String(l) })));
    syncSelectors();
  }
  function drawAll() { translate(); drawTokens(); drawEmbed(); drawStep(); drawMaps(); drawBlock(); drawProbs(); drawTraining(); selfCheck(); }
  function updateHash() {
    const h = `#layer=${state.layer}&head=${state.head}&step=${state.step}&pos=${state.pos}&lang=${state.lang}&t=${state.t}&k=${state.k}&snap=${state.snap}`;
    if (location.hash !== h) history.replaceState(null, "", h);
  }
  function readHash() {
    const q = new URLSearchParams(location.hash.slice(1));
    const int = (k, lo, hi, d) => { const v = parseInt(q.get(k), 10); return Number.isFinite(v) && v >= lo && v <= hi ? v : d; };
    state.layer = int("layer", 0, L - 1, DETAILED[0]);
    if (!DETAILED.includes(state.layer)) state.layer = DETAILED[0]; state.head = int("head", 0, H - 1, 0); state.step = int("step", 0, STEPS.length - 1, 0);
    state.pos = int("pos", 0, T - 1, T - 1); state.k = int("k", 0, 1e9, 0); state.snap = int("snap", -1, snapshots.length - 1, -1);
    const t = parseFloat(q.get("t")); state.t = Number.isFinite(t) && t >= 0.1 && t <= 2 ? t : 1;
    if (q.get("lang") === "ko" || q.get("lang") === "en") state.lang = q.get("lang");
  }

  readHash();
  fillLayers();
  for (let h = 0; h < H; ++h) $("head").appendChild(el("option", { value: h, text: String(h) }));
  STEPS.forEach((_, k) => $("steps").appendChild(el("button", { type: "button", role: "tab", "data-step": k, onclick: () => { state.step = k; drawStep(); } })));
  syncSelectors();
  $("layer").addEventListener("change", () => { state.layer = +$("layer").value; drawStep(); drawMaps(); drawBlock(); });
  $("head").addEventListener("change", () => { state.head = +$("head").value; drawStep(); drawMaps(); });
  $("prev").addEventListener("click", () => { state.step = Math.max(0, state.step - 1); drawStep(); });
  $("next").addEventListener("click", () => { state.step = Math.min(STEPS.length - 1, state.step + 1); drawStep(); });
  $("lang").addEventListener("click", () => { state.lang = state.lang === "en" ? "ko" : "en"; drawAll(); updateHash(); });
  $("temperature").value = state.t; $("topk").value = state.k;
  $("temperature").addEventListener("input", () => { state.t = +$("temperature").value; drawProbs(); updateHash(); });
  $("topk").addEventListener("input", () => { state.k = Math.max(0, parseInt($("topk").value, 10) || 0); drawProbs(); updateHash(); });
  $("copy-csv").addEventListener("click", (e) => copyText(current.map((f) => f.spec.name + "\n" + matrixOf(f.spec).map((r) => r.map((v) => (v === null ? "" : v)).join(",")).join("\n")).join("\n\n"), e.target));
  $("copy-json").addEventListener("click", (e) => copyText(JSON.stringify(Object.fromEntries(current.map((f) => [f.spec.name, matrixOf(f.spec)]))), e.target));
  $("save-svg").addEventListener("click", () => {
    const svg = current[0].map.svg.cloneNode(true);
    const blob = new Blob(['<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(svg)], { type: "image/svg+xml" });
    const a = el("a", { href: URL.createObjectURL(blob), download: `tinygpt-layer${state.layer}-head${state.head}-${current[0].spec.name}.svg` });
    document.body.appendChild(a); a.click(); a.remove();
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input, select, textarea, svg")) return;
    if (e.key === "ArrowRight" || e.key === "n") $("next").click();
    else if (e.key === "ArrowLeft" || e.key === "p") $("prev").click();
  });
  $("notes").textContent = D.notes.join(" · ");
  $("typed").value = D.text;
  $("compute").addEventListener("click", computeTyped);
  $("typed").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) computeTyped(); });  // Enter alone: a new line
  $("original").addEventListener("click", () => { typedNote = null; $("typed").value = D.text; showText(ORIGINAL.arrays, ORIGINAL.tokens, ORIGINAL.detailed, false); });
  drawAll();
  document.body.dataset.ready = "1";
  // The forward pass takes a moment for a large model: after the first drawing, not before.
  setTimeout(() => {
    if (MODEL) { checked = compareWithModel(); selfCheck(); }
    document.body.dataset.checked = "1";
  }, 0);
})();
