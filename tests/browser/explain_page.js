// `tinygpt explain`'s page in a real browser (Debian's chromium, headless, driven by playwright-core):
// a model trained here with snapshots, its page loaded from file://, then used as a learner would.
// Usage: node explain_page.js TINYGPT WORK_DIR PLAYWRIGHT_CORE_DIR. Exits non-zero on the first failure.
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const [tinygpt, work, playwrightDir] = process.argv.slice(2);
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
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
