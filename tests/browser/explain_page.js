// `tinygpt explain`'s page in a real browser (Debian's chromium, headless, driven by playwright-core):
// a model trained here with snapshots, its page loaded from file://, then used as a learner would.
// A Llama-shaped model (RMSNorm, RoPE, SwiGLU, grouped heads, its own lm_head) with a SentencePiece
// tokenizer gets the same checks on the pieces it draws differently.
// Usage: node explain_page.js TINYGPT WORK_DIR PLAYWRIGHT_CORE_DIR WRITE_SENTENCEPIECE_MODEL. Exits
// non-zero on the first failure.
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const [tinygpt, work, playwrightDir, writeSentencePiece] = process.argv.slice(2);
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
      const ids = await page.$$eval("#step-figures svg", (s) => s.map((e) => e.id));
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
    check((await ko.$eval("h2", (e) => e.textContent)).includes("토큰"), "the Korean page opens in Korean");

    await llamaPage(context, errors);
  } finally {
    await browser.close();
  }
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
  const html = fs.readFileSync(path.join(work, "llama.html"), "utf8");
  const marker = '<script type="application/json" id="tinygpt-data">';
  const start = html.indexOf(marker) + marker.length, end = html.indexOf("</script>", start);
  const data = JSON.parse(html.slice(start, end));
  const cs = new Float32Array(Uint8Array.from(Buffer.from(data.model.arrays.rope.f32, "base64")).buffer);
  cs[5 * 16 + 2] += 0.01;  // position 5, pair 1's cosine
  data.model.arrays.rope.f32 = Buffer.from(cs.buffer).toString("base64");
  fs.writeFileSync(path.join(work, "tampered.html"), html.slice(0, start) + JSON.stringify(data).split("</").join("<\\/") + html.slice(end));
  await page.goto("file://" + path.join(work, "tampered.html"));
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  check(await page.$eval("#self-check", (e) => e.className.includes("bad") && Number(e.dataset.problems) > 0 && e.textContent.includes("RoPE of position 5")),
        "a changed cosine fails the self-check, naming the position");
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
