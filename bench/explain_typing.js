// How long the explain page takes to compute a typed text itself, for a model near the largest it
// carries the weights of (inspect::kMostTypedParameters), in Debian's chromium: opening the page
// (its self-check runs the forward pass once) against the same page without the weights, and
// "compute it here" on a text of 128 tokens, redrawing included, against `tinygpt explain`
// writing the page, all timed in the same run.
// Usage: node bench/explain_typing.js TINYGPT PLAYWRIGHT_CORE_DIR WORK_DIR
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const [tinygpt, playwrightDir, work] = process.argv.slice(2);
const { chromium } = require(path.resolve(playwrightDir));
const run = (...args) => execFileSync(tinygpt, args, { cwd: work, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const words = ["the", "cat", "sat", "on", "a", "mat", "and", "looked", "at", "river", "bank", "of"];
  const lines = [];
  for (let i = 0; i < 2000; ++i) lines.push(Array.from({ length: 12 }, (_, k) => words[(i * 7 + k * 5) % words.length]).join(" ") + ".");
  fs.writeFileSync(path.join(work, "corpus.txt"), lines.join("\n"));
  // 4 layers of 192: 1.8 M parameters, under the 2 M a page carries.
  run("train", "--data", "corpus.txt", "--out", "big.h5", "--iters", "1", "--layers", "4", "--heads", "4", "--embd", "192",
      "--block", "128", "--batch", "1", "--force");
  const text = lines.slice(0, 12).join(" ").slice(0, 128);
  const started = process.hrtime.bigint();
  run("explain", "--ckpt", "big.h5", "--text", text, "--out", "big.html", "--force");
  const cpp = Number(process.hrtime.bigint() - started) / 1e6;
  const info = run("info", "--ckpt", "big.h5");
  const parameters = (info.match(/parameters +([0-9]+)/) || ["", "?"])[1];
  // The reference page: the same, but for the weights and tokenizer a typed text needs.
  const html = fs.readFileSync(path.join(work, "big.html"), "utf8"), mark = '<script type="application/json" id="tinygpt-data">';
  const start = html.indexOf(mark) + mark.length, end = html.indexOf("</script>", start), data = JSON.parse(html.slice(start, end));
  data.typing = { refusal: "parameters", parameters: data.typing.parameters, most_parameters: 0, most_vocabulary: 0, most_tokens: 0 };
  fs.writeFileSync(path.join(work, "reference.html"), html.slice(0, start) + JSON.stringify(data).split("</").join("<\\/") + html.slice(end));

  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const opens = [], checks = [], references = [], computes = [];
  // Milliseconds until the page is drawn and until its self-check has run.
  const open = async (file) => {
    const t0 = Date.now();
    await page.goto("file://" + path.join(work, file));
    await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
    const drawn = Date.now() - t0;
    await page.waitForSelector('body[data-checked="1"]', { timeout: 120000 });
    return [drawn, Date.now() - t0];
  };
  let worst = "";
  for (let k = 0; k < 7; ++k) {  // in turn, each first as often
    if (k % 2) references.push((await open("reference.html"))[0]);
    const [drawn, checked] = await open("big.html");
    opens.push(drawn), checks.push(checked);
    worst = await page.$eval("#self-check", (e) => e.dataset.worst);
    const typed = text.split("").reverse().join("");
    computes.push(await page.evaluate((t) => {
      document.getElementById("typed").value = t;
      const s = performance.now();
      document.getElementById("compute").click();
      return performance.now() - s;
    }, typed));
    if (k % 2 === 0) references.push((await open("reference.html"))[0]);
  }
  await browser.close();
  const cpu = (fs.readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/) || ["", os.cpus()[0].model])[1];
  const version = execFileSync("/usr/bin/chromium", ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  console.log(`machine: ${cpu}, ${os.cpus().length} cores; ${version}`);
  console.log(`model: ${parameters} parameters, 4 layers of 192, 128 tokens; page ${(fs.statSync(path.join(work, "big.html")).size / 1e6).toFixed(1)} MB`);
  console.log(`tinygpt explain (reference):          ${cpp.toFixed(0)} ms`);
  console.log(`page drawn:                           ${median(opens)} ms (median of 7), ${(median(opens) / median(references)).toFixed(2)} x the page without weights (${median(references)} ms)`);
  console.log(`self-check done (its forward pass):   ${median(checks)} ms (median of 7)`);
  console.log(`compute it here, 128 tokens, redrawn: ${median(computes).toFixed(0)} ms (median of 7), ${(median(computes) / cpp).toFixed(2)} x explain`);
  console.log(`largest difference from the C++ numbers: ${Number(worst).toExponential(1)} of an array's largest value`);
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
