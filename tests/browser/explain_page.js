// `tinygpt explain`'s page in a real browser (Debian's chromium, headless, driven by playwright-core):
// a model trained here with snapshots, its page loaded from file://, then used as a learner would.
// A Llama-shaped model (RMSNorm, RoPE, SwiGLU, grouped heads, its own lm_head) with a SentencePiece
// tokenizer gets the same checks on the pieces it draws differently.
// Usage: node explain_page.js TINYGPT WORK_DIR PLAYWRIGHT_CORE_DIR WRITE_SENTENCEPIECE_MODEL WRITE_GPT2_DIR. Exits
// non-zero on the first failure.
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const [tinygpt, work, playwrightDir, writeSentencePiece, writeGpt2Dir] = process.argv.slice(2);
const { chromium } = require(path.resolve(playwrightDir));
const run = (...args) => execFileSync(tinygpt, args, { cwd: work, encoding: "utf8" });
function check(ok, what) {
  if (!ok) throw new Error("failed: " + what);
  console.log("ok: " + what);
}
const f32 = (x) => Math.fround(Number(x));

async function main() {
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  // A corpus of English and Korean lines, made here: the character tokenizer gets every syllable.
  const lines = [];
  for (let i = 0; i < 300; ++i) lines.push(`the cat sat on mat ${i % 7}. 안녕하세요 고양이가 앉았다 ${i % 5}.`);
  fs.writeFileSync(path.join(work, "corpus.txt"), lines.join("\n"));
  run("train", "--data", "corpus.txt", "--out", "run.h5", "--iters", "20", "--snapshot-every", "10", "--eval-every", "10",
      "--layers", "2", "--heads", "2", "--embd", "32", "--block", "32", "--batch", "4", "--threads", "1");
  check(fs.existsSync(path.join(work, "run.step10.h5")) && fs.existsSync(path.join(work, "run.step20.h5")),
        "train --snapshot-every 10 keeps run.step10.h5 and run.step20.h5");
  const text = "the cat sat on the mat";
  const steps = JSON.parse(run("attention", "--ckpt", "run.h5", "--text", text, "--steps", "--json", "--layer", "1", "--head", "1"));
  run("explain", "--ckpt", "run.h5", "--text", text, "--out", "page.html", "--ckpts", "run.step20.h5,run.step10.h5");
  run("explain", "--ckpt", "run.h5", "--text", "안녕하세요", "--out", "ko.html", "--lang", "ko");
  run("explain", "--ckpt", "run.h5", "--text", text, "--out", "layer1.html", "--layers", "1");
  const html = fs.readFileSync(path.join(work, "page.html"), "utf8");
  check(!/(src|href)\s*=\s*["']?https?:/i.test(html), "no http(s) reference in any src or href");
  check(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'/.test(html), "a CSP that forbids outside loads");

  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1300, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    const requests = [], errors = [];
    page.on("request", (r) => { if (!/^(file|data|blob):/.test(r.url())) requests.push(r.url()); });
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(e.message));
    await page.addInitScript(() => {
      window.__csp = [];
      document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));
    });
    await page.goto("file://" + path.join(work, "page.html"));
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
    check(await page.$eval("#self-check", (e) => e.className.includes("ok") && e.dataset.problems === "0"),
          "the page's self-check passes (rows sum to 1, masked weights 0, its softmax matches the model's)");
    const chips = await page.$$eval("#tokens .token .t", (ts) => ts.map((t) => t.textContent));
    check(chips.join("") === text.replaceAll(" ", "␣") && !chips.includes(""),
          "the token chips spell the text with ␣ for each space, as the maps label them: " + chips.join(" "));

    // The stepper: every step draws its own figures and formula.
    const expected = [["Q", "K", "V"], ["scores"], ["scaled"], ["masked"], ["weights"], ["output"]];
    for (let k = 0; k < expected.length; ++k) {
      const ids = await page.$$eval("#step-figures svg[id^=\"map-\"]", (s) => s.map((e) => e.id));
      check(JSON.stringify(ids) === JSON.stringify(expected[k].map((n) => "map-" + n)), `step ${k} shows ${expected[k].join(", ")}`);
      if (k + 1 < expected.length) await page.click("#next");
    }
    check(await page.$eval("#map-masked", () => true).catch(() => false) === false, "the last step replaced the mask's figure");
    check((await page.$$eval("#map-output rect[fill^='url(#hatch']", (r) => r.length)) === 0, "the output step has no masked cells");

    // Layer 1, head 1, scores: a hovered cell shows the number the C++ wrote (attention --steps --json).
    await page.selectOption("#layer", "1");
    await page.selectOption("#head", "1");
    check(await page.$eval('#maps button[data-layer="1"][data-head="1"]', (b) => b.getAttribute("aria-current") === "true"),
          "the maps mark the head chosen in the stepper");
    await page.click('#steps button[data-step="1"]');
    const [i, j] = [4, 2];
    await page.hover(`#map-scores rect[data-i="${i}"][data-j="${j}"]`);
    const shown = await page.$eval("#cell-value", (e) => e.dataset.value);
    check(f32(shown) === f32(steps.scores[i][j]), `hovered score [${i},${j}] ${shown} is the C++ value ${steps.scores[i][j]}`);
    await page.click('#steps button[data-step="4"]');
    await page.hover(`#map-weights rect[data-i="${i}"][data-j="${j}"]`);
    check(f32(await page.$eval("#cell-value", (e) => e.dataset.value)) === f32(steps.weights[i][j]), "a hovered weight is the C++ value");
    await page.hover(`#map-weights rect[data-i="1"][data-j="3"]`);
    check((await page.$eval("#cell-how", (e) => e.textContent)).length > 0 &&
          (await page.$eval("#cell-value", (e) => e.dataset.value)) === "", "a masked cell says it is masked");
    // Keyboard: focus the map, arrow right moves the cell.
    await page.focus("#map-weights");
    await page.keyboard.press("ArrowDown");
    check((await page.$eval("#cell-value", (e) => e.dataset.cell)) === `weights:2:3`, "arrow keys move the inspected cell");
    check((await page.evaluate(() => location.hash)).includes("layer=1&head=1&step=4"), "the view is in the URL fragment");

    // Export: the step's matrix as JSON holds the C++ values; SVG saves the step's figure.
    await page.click("#copy-json");
    const copied = JSON.parse(await page.evaluate(() => window.tinygptLastCopy));
    check(f32(copied.weights[i][j]) === f32(steps.weights[i][j]) && copied.weights[1][3] === null,
          "copy as JSON gives the step's matrix: the C++ weights, null where masked");
    await page.click("#copy-csv");
    const csv = await page.evaluate(() => window.tinygptLastCopy);
    check(csv.startsWith("weights\n") && f32(csv.split("\n")[1 + i].split(",")[j]) === f32(steps.weights[i][j]),
          "copy as CSV gives the same rows");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#save-svg")]);
    const svgText = fs.readFileSync(await download.path(), "utf8");
    check(download.suggestedFilename() === "tinygpt-layer1-head1-weights.svg" && svgText.startsWith("<?xml") &&
          svgText.includes("<svg") && (svgText.match(/<rect /g) || []).length > 20 * 20 / 2,
          "save as SVG writes the step's heatmap (" + download.suggestedFilename() + ")");

    // Temperature and top-k recompute the probabilities in the page.
    const before = await page.$eval("#probs-table tr[data-p]", (r) => Number(r.dataset.p));
    await page.fill("#temperature", "0.5");
    await page.dispatchEvent("#temperature", "input");
    const sharper = await page.$eval("#probs-table tr[data-p]", (r) => Number(r.dataset.p));
    check(sharper > before, `a lower temperature sharpens the top probability (${before} -> ${sharper})`);
    await page.fill("#topk", "1");
    check(await page.$eval("#probs-table tr[data-p]", (r) => Number(r.dataset.p)) === 1, "top-k 1 leaves one candidate at 1");

    // The snapshot slider redraws the maps, the probabilities and the marker on the loss curve.
    const mapBefore = await page.$eval("#maps canvas", (c) => c.toDataURL());
    await page.$eval("#snapshot", (s) => { s.value = "0"; s.dispatchEvent(new Event("input")); });
    check((await page.$eval("#snapshot-label", (e) => e.textContent)).includes("run.step10.h5"), "the slider's first snapshot is iteration 10");
    check((await page.$eval("#maps canvas", (c) => c.toDataURL())) !== mapBefore, "moving the slider redraws the maps");
    check(await page.$("#snapshot-marker") !== null && await page.$("#loss-plot polyline") !== null, "the loss curve marks the snapshot");
    await page.$eval("#snapshot", (s) => { s.value = s.max; s.dispatchEvent(new Event("input")); });
    check((await page.$eval("#snapshot-label", (e) => e.textContent)) === "run.h5 (iteration 20)" && (await page.$eval("#maps canvas", (c) => c.toDataURL())) === mapBefore,
          "the slider's end is the checkpoint itself: its maps again");
    await page.$eval("#snapshot", (s) => { s.value = "0"; s.dispatchEvent(new Event("input")); });

    await headViewAndDiagram(page, steps);
    await typing(page, text);

    // English and Korean.
    await page.click("#lang");
    check((await page.$eval("h1", (e) => e.textContent)).includes("모델"), "the language button switches to Korean");
    // A particle after a number follows the number's sound: 3 (삼) takes 은, 2 (이) takes 는.
    await page.click('#steps button[data-step="3"]');
    for (const [key, particle] of [[3, "은"], [2, "는"]]) {
      await page.hover(`#map-masked rect[data-i="1"][data-j="${key}"]`);
      const how = await page.$eval("#cell-how", (e) => e.textContent);
      check(how.includes(`키 ${key}${particle} `), `the Korean hover says 키 ${key}${particle} (${how})`);
    }
    check(requests.length === 0, "no request but file: and data: (" + requests.join(" ") + ")");
    check(errors.length === 0, "no console error (" + errors.join(" | ") + ")");
    check((await page.evaluate(() => window.__csp)).length === 0, "no CSP violation");

    // A page that takes apart layer 1 only: the stepper offers it alone, layer 0 stays as maps.
    const part = await context.newPage();
    part.on("pageerror", (e) => errors.push(e.message));
    await part.goto("file://" + path.join(work, "layer1.html") + "#layer=0");
    await part.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
    check(JSON.stringify(await part.$$eval("#layer option", (o) => o.map((e) => e.value))) === '["1"]',
          "with --layers 1 the stepper offers layer 1 alone (a link to layer 0 opens layer 1)");
    check(await part.$eval('#maps button[data-layer="0"]', (b) => b.getAttribute("aria-disabled") === "true" && b.title.includes("--layers 0")),
          "layer 0's maps are there, marked as maps only, saying how to take it apart");
    await part.click('#maps button[data-layer="0"][data-head="1"]', { force: true });  // aria-disabled: clicked anyway
    check((await part.$eval("#layer", (s) => s.value)) === "1", "choosing a maps-only head leaves the stepper where it was");
    check(await part.$eval("#self-check", (e) => e.dataset.problems === "0"), "its self-check passes");
    check((await part.$eval("#notes", (e) => e.textContent)).includes("layer 1 shown in full"), "the page says which layer it holds in full");
    check(errors.length === 0, "no error on that page (" + errors.join(" | ") + ")");

    const ko = await context.newPage();
    await ko.goto("file://" + path.join(work, "ko.html"));
    await ko.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
    const syllables = await ko.$$eval("#tokens .token .t", (ts) => ts.map((t) => t.textContent));
    check(JSON.stringify(syllables) === JSON.stringify([..."안녕하세요"]), "the Korean page shows one token per syllable: " + syllables.join(" "));
    check((await ko.$eval("#s-tokens h2", (e) => e.textContent)).includes("토큰"), "the Korean page opens in Korean");
    await onlyKorean(ko);

    await bpePage(context, errors);
    await gpt2TokenizerPage(context, errors);
    await tamperedWeights(context);

    await llamaPage(context, errors);
  } finally {
    await browser.close();
  }
}

// The head view draws the chosen head's weights as lines; the diagram marks the part each section shows.
async function headViewAndDiagram(page, steps) {
  await page.click('#steps button[data-step="1"]');  // layer 1, head 1 are chosen
  const lines = await page.$$eval("#head-view-svg line", (ls) => ls.map((l) => ({ i: +l.dataset.i, j: +l.dataset.j,
    opacity: +l.getAttribute("stroke-opacity"), title: l.querySelector("title").textContent, stroke: l.getAttribute("stroke") })));
  const T = steps.weights.length;
  check(lines.length > 0 && lines.every((l) => l.j <= l.i), `the head view draws ${lines.length} lines, none to a later key`);
  const strong = lines.reduce((a, b) => (steps.weights[b.i][b.j] > steps.weights[a.i][a.j] ? b : a));
  check(Math.abs(strong.opacity - steps.weights[strong.i][strong.j]) < 1e-6 &&
        f32(strong.title.split(": ").pop()) === f32(steps.weights[strong.i][strong.j]) &&
        strong.title.startsWith(`layer 1, head 1: query ${strong.i} `) && strong.title.includes(`key ${strong.j} `),
        `the strongest line (${strong.i} → ${strong.j}) is as dark as its C++ weight and names layer, head, query and key: ${strong.title}`);
  check(lines.filter((l) => l.i === T - 1).length === T && lines.filter((l) => l.i === T - 1).every((l) => l.stroke === "#e08214"),
        "every line of the chosen (last) token is drawn, in orange");
  // Every map's cells name their layer, head, query and key on hover.
  const small = await page.$('#maps button[data-layer="1"][data-head="1"] canvas');
  const cellSize = (await small.boundingBox()).width / T;
  await small.hover({ position: { x: cellSize * 1.5, y: cellSize * (T - 0.5) } });
  const hover = await page.$eval("#maps-value", (e) => e.textContent);
  const snapshot = JSON.parse(run("attention", "--ckpt", "run.step10.h5", "--text", "the cat sat on the mat", "--steps", "--json", "--layer", "1", "--head", "1"));
  check(hover.startsWith(`layer 1, head 1: query ${T - 1} `) && hover.includes("key 1 ") && f32(hover.split(": ").pop()) === f32(snapshot.weights[T - 1][1]),
        "a cell of a small map (the slider's snapshot, run.step10.h5) names its layer, head, query and key, with the C++ weight: " + hover);
  for (const [section, part] of [["where-embedding", "embedding"], ["where-attention", "attention"], ["where-mlp", "mlp"], ["where-output", "output"]]) {
    const here = await page.$$eval(`#${section} g.here`, (gs) => gs.map((g) => g.dataset.part));
    check(here.length > 0 && here.includes(part) && here.every((p) => p === part || p === "block"), `the diagram beside ${section} marks ${part}: ${here.join(", ")}`);
  }
  // Step 2 shows one query's softmax without and with ÷ √d_k; the unscaled one is the sharper.
  await page.click('#steps button[data-step="2"]');
  await page.hover(`#map-scaled rect[data-i="${T - 1}"][data-j="0"]`);
  const caption = await page.$eval("#step-extra figcaption", (e) => e.textContent);
  const [a, b] = caption.match(/([0-9.]+) unscaled, ([0-9.]+) scaled/).slice(1).map(Number);
  const softmax = (xs) => { const m = Math.max(...xs), e = xs.map((x) => Math.exp(x - m)), s = e.reduce((p, q) => p + q); return e.map((x) => x / s); };
  const row = steps.scores[T - 1];
  check(Math.abs(a - Math.max(...softmax(row))) < 1e-3 && Math.abs(b - Math.max(...softmax(row.map((x) => x / Math.sqrt(16))))) < 1e-3 && a >= b,
        `step 2 compares query ${T - 1}'s softmax unscaled and scaled: ${caption}`);
}

// Typing a text: the page tokenizes it as the C++ tokenizer does and computes the numbers the C++
// model gives for it; a character the model lacks is refused; the page's own text comes back.
async function typing(page, original) {
  await page.waitForSelector('body[data-checked="1"]', { timeout: 20000 });
  check(await page.$eval("#self-check", (e) => Number(e.dataset.worst) < 1e-5 && e.textContent.includes("forward pass gives the C++ numbers")),
        "the self-check runs the page's forward pass on its text: the C++ numbers to float rounding");
  const typed = "a cat on the mat sat";
  const tokens = JSON.parse(run("tokens", "--ckpt", "run.h5", "--text", typed, "--json"));
  const steps = JSON.parse(run("attention", "--ckpt", "run.h5", "--text", typed, "--steps", "--json", "--layer", "0", "--head", "1"));
  await page.fill("#typed", typed);
  await page.click("#compute");
  check(JSON.stringify(await page.$$eval("#tokens .token .meta", (m) => m.map((e) => Number(e.textContent.split(" · ")[0])))) === JSON.stringify(tokens.ids),
        "a typed text gets the C++ tokenizer's ids");
  check((await page.$eval("#typed-note", (e) => e.textContent)).includes(`${tokens.ids.length} tokens, every layer in full`) &&
        JSON.stringify(await page.$$eval("#layer option", (o) => o.map((e) => e.value))) === '["0","1"]', "the typed text is computed with every layer in full");
  await page.selectOption("#layer", "0");
  await page.selectOption("#head", "1");
  await page.click('#steps button[data-step="1"]');
  const copied = async () => { await page.click("#copy-json"); return JSON.parse(await page.evaluate(() => window.tinygptLastCopy)); };
  const scores = (await copied()).scores;
  await page.click('#steps button[data-step="4"]');
  const weights = (await copied()).weights;
  let worst = 0;
  const scale = Math.max(...steps.scores.flat().map(Math.abs));
  steps.scores.forEach((r, i) => r.forEach((v, j) => { worst = Math.max(worst, Math.abs(scores[i][j] - v) / scale); }));
  steps.weights.forEach((r, i) => r.forEach((v, j) => { if (j <= i) worst = Math.max(worst, Math.abs(weights[i][j] - v)); }));
  check(worst < 1e-5, `the typed text's scores and weights (layer 0, head 1) are the C++ ones to float rounding (${worst.toExponential(1)})`);
  check(await page.$eval("#self-check", (e) => e.dataset.problems === "0"), "the self-check passes on the typed text");
  await page.fill("#typed", "the cat sat on the 🐟");
  await page.click("#compute");
  check((await page.$eval("#typed-note", (e) => e.textContent)) === '"🐟" (U+1F41F) is not one of the model\'s characters' &&
        (await page.$$eval("#tokens .token", (t) => t.length)) === tokens.ids.length, "a character the model lacks is refused and the shown text stays");
  await page.click("#original");
  check((await page.$$eval("#tokens .token .t", (ts) => ts.map((t) => t.textContent).join(""))) === original.replaceAll(" ", "␣"),
        "the page's own text comes back");
  await page.click("#lang");
  check((await page.$eval("#differs li", (e) => e.textContent)).startsWith("디코더만"), "the differences box is in Korean too");
  await page.click("#lang");
  const differs = await page.$$eval("#differs li", (l) => l.map((e) => e.dataset.key));
  check(JSON.stringify(differs) === JSON.stringify(["differs.decoder", "differs.prenorm", "differs.learned", "differs.gelu", "differs.tied"]),
        "the differences box names pre-norm, learned positions, GELU and the tied output for this model: " + differs.join(", "));
}

// In Korean, every word on the page is Korean but for code names, formulas' symbols and the text's
// own tokens: the page at each step, its hovers, its titles and its labels.
async function onlyKorean(page) {
  const code = new Set(["Q", "K", "V", "T", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "b", "c", "i", "j", "k", "p", "q", "x", "y", "a", "e", "c_attn", "c_proj",
    "c_fc", "ln_1", "ln_2", "ln_f", "wte", "wpe", "id", "d_k", "max_j", "mlp", "attn", "lm_head", "softmax", "scores", "scaled", "masked", "weights",
    "output", "exp", "cos", "sin", "tanh", "silu", "mean", "weight", "bias", "GELU", "ReLU", "SwiGLU", "LayerNorm", "RMSNorm", "RoPE", "MLP", "CSV", "JSON",
    "SVG", "C", "Ctrl", "Enter", "Add", "Norm", "Vaswani", "English", "top", "rope", "ckpts", "tinygpt", "explain", "train", "text", "language"]);
  const seen = new Set();
  for (let k = 0; k < 6; ++k) {
    await page.click(`#steps button[data-step="${k}"]`);
    const map = await page.$eval("#step-figures svg", (e) => e.id);
    await page.hover(`#${map} rect[data-i="2"][data-j="${k === 3 ? 4 : 1}"]`);
    const text = await page.evaluate(() => [document.body.innerText, ...[...document.querySelectorAll("svg title")].map((t) => t.textContent),
      ...[...document.querySelectorAll("[title], [aria-label]")].map((e) => (e.title || "") + " " + (e.getAttribute("aria-label") || ""))].join("\n"));
    // Command lines and file names are code: "--snapshot-every", "run.step100.h5".
    // Command lines, file names, quoted tokens and a token's bytes are not words of the page.
    const words = text.replace(/--[a-z-]+|[\w.]+\.h5|"[^"\n]*"|\b[0-9A-F]{2}( [0-9A-F]{2})*\b/g, " ").match(/[A-Za-z][A-Za-z_0-9]*/g) || [];
    for (const w of words) if (!code.has(w)) seen.add(w + " (" + text.slice(Math.max(0, text.indexOf(w) - 30), text.indexOf(w) + 20).replace(/\n/g, " ") + ")");
  }
  check(seen.size === 0, "in Korean, no English word outside code names, at any step or hover (" + [...seen].join(" ") + ")");
}

// A BPE model (GPT-2's split): a typed text gets the C++ tokenizer's ids, a special token included.
async function bpePage(context, errors) {
  run("train", "--data", "corpus.txt", "--tokenizer", "bpe", "--vocab-size", "300", "--out", "bpe.h5", "--iters", "10", "--layers", "1",
      "--heads", "2", "--embd", "32", "--block", "64", "--batch", "4", "--threads", "1");
  run("explain", "--ckpt", "bpe.h5", "--text", "the cat sat", "--out", "bpe.html");
  const page = await context.newPage();
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("file://" + path.join(work, "bpe.html"));
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  for (const typed of ["the cat's mat, 12 cats  sat\n on 고양이가 앉았다!", "  x ½ 3.5 'll"]) {
    const ids = JSON.parse(run("tokens", "--ckpt", "bpe.h5", "--text", typed, "--json")).ids;
    await page.fill("#typed", typed);
    await page.click("#compute");
    const shown = await page.$$eval("#tokens .token .meta", (m) => m.map((e) => Number(e.textContent.split(" · ")[0])));
    check(JSON.stringify(shown) === JSON.stringify(ids), `the page's BPE gives the C++ ids for ${JSON.stringify(typed)}: ${ids.length} tokens`);
  }
  check(await page.$eval("#self-check", (e) => e.dataset.problems === "0"), "the BPE page's self-check passes on a typed text");

  // A Llama shape (RMSNorm, RoPE, SwiGLU, one key/value head, its own lm_head) with a BPE tokenizer:
  // the page's forward pass is the C++ one on the page's text and on a typed one.
  run("train", "--data", "corpus.txt", "--tokenizer", "bpe", "--vocab-size", "300", "--arch", "llama", "--kv-heads", "1", "--no-tie",
      "--out", "llama-bpe.h5", "--iters", "10", "--layers", "2", "--heads", "2", "--embd", "32", "--block", "64", "--batch", "4", "--threads", "1");
  run("explain", "--ckpt", "llama-bpe.h5", "--text", "the cat sat", "--out", "llama-bpe.html");
  await page.goto("file://" + path.join(work, "llama-bpe.html"));
  await page.waitForSelector('body[data-checked="1"]', { timeout: 20000 });
  check(await page.$eval("#self-check", (e) => e.dataset.problems === "0" && Number(e.dataset.worst) < 1e-5),
        "a Llama shape's page: its forward pass (RoPE, RMSNorm, SwiGLU, shared heads) gives the C++ numbers");
  const typed = "a mat sat on the cat";
  const steps = JSON.parse(run("attention", "--ckpt", "llama-bpe.h5", "--text", typed, "--steps", "--json", "--layer", "1", "--head", "1"));
  await page.fill("#typed", typed);
  await page.click("#compute");
  await page.selectOption("#layer", "1");
  await page.selectOption("#head", "1");
  await page.click('#steps button[data-step="4"]');
  await page.click("#copy-json");
  const weights = JSON.parse(await page.evaluate(() => window.tinygptLastCopy)).weights;
  let worst = 0;
  steps.weights.forEach((r, i) => r.forEach((v, j) => { if (j <= i) worst = Math.max(worst, Math.abs(weights[i][j] - v)); }));
  check(worst < 1e-5, `the Llama shape's weights for a typed text are the C++ ones (${worst.toExponential(1)})`);
}

// GPT-2's own tokenizer (50257 tokens in its byte order, <|endoftext|>) on a one-layer model
// imported from Hugging Face's layout: the page keeps each position's 256 candidates, yet computes
// a typed text with the whole vocabulary, special token included, as the C++ does.
async function gpt2TokenizerPage(context, errors) {
  execFileSync(writeGpt2Dir, [path.join(work, "gpt2")]);
  run("import", "--from", "gpt2", "--out", "gpt2.h5");
  run("explain", "--ckpt", "gpt2.h5", "--text", "Hello world<|endoftext|> again", "--out", "gpt2.html");
  const page = await context.newPage();
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("file://" + path.join(work, "gpt2.html"));
  await page.waitForSelector('body[data-checked="1"]', { timeout: 60000 });
  check(await page.$eval("#self-check", (e) => e.dataset.problems === "0" && Number(e.dataset.worst) < 1e-5),
        "GPT-2's tokenizer page: its forward pass gives the C++ numbers, the kept candidates' logits included");
  for (const typed of ["It's 2026: the café's 3 cats—naïve!<|endoftext|>\n\n  Bye", "안녕하세요 😀 'll 're"]) {
    const ids = JSON.parse(run("tokens", "--ckpt", "gpt2.h5", "--text", typed, "--json")).ids;
    await page.fill("#typed", typed);
    await page.click("#compute");
    const shown = await page.$$eval("#tokens .token .meta", (m) => m.map((e) => Number(e.textContent.split(" · ")[0])));
    check(JSON.stringify(shown) === JSON.stringify(ids), `GPT-2's tokenizer in the page gives the C++ ids for ${JSON.stringify(typed)}: ${ids.length} tokens`);
  }
  check(await page.$eval("#self-check", (e) => e.dataset.problems === "0"), "the self-check passes on the typed text");
  const rows = await page.$$eval("#probs-table tr[data-id]", (r) => r.map((e) => [e.dataset.id, e.querySelector(".tok").textContent]));
  check(rows.length === 20 && rows.every(([id, label]) => label !== JSON.stringify("#" + id)), "the typed text's candidates have their labels: " + rows.slice(0, 3).join(" "));
  check(errors.length === 0, "no error on the GPT-2 tokenizer's page (" + errors.join(" | ") + ")");
}

// Copies page `from` to `to` with one float32 of an array in its data block (chosen by `pick`) moved by `by`.
function changeFloat(from, to, pick, at, by) {
  const html = fs.readFileSync(path.join(work, from), "utf8"), marker = '<script type="application/json" id="tinygpt-data">';
  const start = html.indexOf(marker) + marker.length, end = html.indexOf("</script>", start);
  const data = JSON.parse(html.slice(start, end)), entry = pick(data);
  const values = new Float32Array(Uint8Array.from(Buffer.from(entry.f32, "base64")).buffer);
  values[at] += by;
  entry.f32 = Buffer.from(values.buffer).toString("base64");
  fs.writeFileSync(path.join(work, to), html.slice(0, start) + JSON.stringify(data).split("</").join("<\\/") + html.slice(end));
}

// The page's forward pass is checked against the C++ numbers: one weight changed in the page fails it.
async function tamperedWeights(context) {
  changeFloat("page.html", "tampered-weights.html", (data) => data.typing.weights["transformer.h.1.mlp.c_fc.weight"], 7, 0.05);
  const page = await context.newPage();
  await page.goto("file://" + path.join(work, "tampered-weights.html"));
  await page.waitForSelector('body[data-checked="1"]', { timeout: 20000 });
  const badge = await page.$eval("#self-check", (e) => e.textContent);
  check(await page.$eval("#self-check", (e) => e.className.includes("bad")) && badge.includes("forward pass differs from the model's in l1."),
        "one weight of the page changed: the self-check says its forward pass differs from the model's (" + badge.slice(0, 120) + ")");
}

// A Llama-shaped model with a SentencePiece tokenizer: the page shows the pieces it has, and its
// numbers are the model's (attention --steps --json).
async function llamaPage(context, errors) {
  execFileSync(writeSentencePiece, [path.join(work, "sp.model"), path.join(work, "sp_corpus.txt")]);
  run("train", "--data", "sp_corpus.txt", "--tokenizer", "sentencepiece", "--tokenizer-model", "sp.model", "--out", "llama.h5",
      "--arch", "llama", "--kv-heads", "1", "--no-tie", "--iters", "20", "--layers", "2", "--heads", "2", "--embd", "32",
      "--block", "32", "--batch", "4", "--threads", "1");
  const text = "Once upon a time, Tom said";
  const steps = JSON.parse(run("attention", "--ckpt", "llama.h5", "--text", text, "--steps", "--json", "--layer", "1", "--head", "1"));
  run("explain", "--ckpt", "llama.h5", "--text", text, "--out", "llama.html");
  const page = await context.newPage();
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto("file://" + path.join(work, "llama.html") + "#layer=1&head=1");
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  check(await page.$eval("#self-check", (e) => e.className.includes("ok") && e.dataset.problems === "0"),
        "the Llama page's self-check passes (its RoPE turns included)");
  const line = await page.$eval("#model-line", (e) => e.textContent);
  check(["RMSNorm", "RoPE", "SwiGLU", "1 key/value head ·", "no biases", "lm_head"].every((w) => line.includes(w)),
        "the model line names the pieces: " + line);
  check(await page.$("#embed-wpe") === null && await page.$("#embed-wte") !== null, "no position table is drawn, the token vectors are");
  check(await page.$eval("#compute", (b) => b.disabled) && (await page.$eval("#typed-note", (e) => e.textContent)).includes("SentencePiece tokenizer runs only in the C++ library"),
        "typing a text is refused for a SentencePiece tokenizer, with the reason");
  await page.waitForSelector('body[data-checked="1"]', { timeout: 20000 });
  check(await page.$eval("#self-check", (e) => e.dataset.worst === ""), "without the weights in the page, no forward pass is compared");
  const differs = await page.$$eval("#differs li", (l) => l.map((e) => e.dataset.key));
  check(["differs.rmsnorm", "differs.rope", "differs.swiglu", "differs.kv", "differs.own"].every((k) => differs.includes(k)),
        "the differences box names RMSNorm, RoPE, SwiGLU, shared key/value heads and lm_head: " + differs.join(", "));
  check((await page.$eval("#kv-share", (e) => e.textContent)) === "query heads sharing key/value head 0: 0, 1",
        "the stepper says which query heads share the key/value head");
  check((await page.$eval("#formula", (e) => e.textContent)).startsWith("Q = rope(ln_1(x)·W_q, position)"), "Q's formula turns it, without a bias");
  const [i, j] = [5, 3];
  await page.hover(`#map-Q rect[data-i="${i}"][data-j="${j}"]`);
  check(f32(await page.$eval("#cell-value", (e) => e.dataset.value)) === f32(steps.q[i][j]), "a hovered Q cell is the model's turned query");
  const how = await page.$eval("#cell-how", (e) => e.textContent);
  check(how.includes("before RoPE (c_attn)") && how.includes("cos a = ") && how.includes(`position ${i} by a = ${i}·`),
        "the Q cell shows its turn with numbers: " + how.split("\n").join(" | "));
  await page.hover(`#map-K rect[data-i="${i}"][data-j="${j}"]`);
  check(f32(await page.$eval("#cell-value", (e) => e.dataset.value)) === f32(steps.k[i][j]), "a hovered K cell is key/value head 0's turned key");
  await page.click('#steps button[data-step="1"]');
  await page.hover(`#map-scores rect[data-i="${i}"][data-j="2"]`);
  check(f32(await page.$eval("#cell-value", (e) => e.dataset.value)) === f32(steps.scores[i][2]), "a hovered score is the C++ value");
  check(await page.$eval("#rope", (e) => !e.hidden) && (await page.$$eval("#rope-table tr[data-pair]", (r) => r.length)) === 16 / 2 &&
        (await page.$$eval("#rope-arrows line", (l) => l.length)) === 8, "the RoPE box lists the head's 8 pairs and draws the first 4 turned");
  const captions = await page.$$eval("#block figcaption", (f) => f.map((e) => e.textContent));
  check(captions.some((c) => c.startsWith("gate")) && captions.some((c) => c.startsWith("up")) && captions.includes("silu(gate)·up") &&
        captions.some((c) => c.includes("√(mean(x²) + 0.00001) · γ")) && !captions.some((c) => c.includes("β")),
        "the block shows RMSNorm without β and SwiGLU's gate, up and product");
  check((await page.$eval("#s-output p", (e) => e.textContent)).includes("final RMSNorm and the output layer (lm_head"),
        "the output section names the final RMSNorm and the lm_head");
  await page.click("#lang");
  check((await page.$eval("#rope h3", (e) => e.textContent)).startsWith("RoPE: 위치만큼") &&
        (await page.$eval("#kv-share", (e) => e.textContent)).startsWith("함께 쓰는 쿼리 헤드"), "the Llama pieces are in Korean too");
  check(errors.length === 0, "no error on the Llama page (" + errors.join(" | ") + ")");

  // The self-check catches a turn that is not the model's: one cosine of the page's table changed.
  changeFloat("llama.html", "tampered.html", (data) => data.model.arrays.rope, 5 * 16 + 2, 0.01);  // position 5, pair 1's cosine
  await page.goto("file://" + path.join(work, "tampered.html"));
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  check(await page.$eval("#self-check", (e) => e.className.includes("bad") && Number(e.dataset.problems) > 0 && e.textContent.includes("RoPE of position 5")),
        "a changed cosine fails the self-check, naming the position");
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
