// Evaluates exported ONNX graphs with ONNX Runtime and compares them with
// rfm's predictions (written by onnx/internal/onnxcheck): labels must be equal,
// probabilities and values equal to 1e-5 relative. Exit 1 on any miss.
// Usage: node scripts/onnx_check.js CASE.json ...
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const REL = 1e-5;

function close(a, b) {
  return Math.abs(a - b) <= REL * Math.max(Math.abs(a), Math.abs(b)) + 1e-12;
}

async function check(file) {
  const c = JSON.parse(fs.readFileSync(file, 'utf8'));
  const session = await ort.InferenceSession.create(c.model);
  const feeds = {};
  const n = c.rows;
  if (c.numeric && c.numeric[0] && c.numeric[0].length > 0) {
    const k = c.numeric[0].length;
    const data = new Float64Array(n * k);
    c.numeric.forEach((row, i) => row.forEach((v, j) => { data[i * k + j] = v === null ? NaN : v; }));
    feeds.numeric = new ort.Tensor('float64', data, [n, k]);
  }
  if (c.categorical && c.categorical[0] && c.categorical[0].length > 0) {
    const m = c.categorical[0].length;
    feeds.categorical = new ort.Tensor('string', c.categorical.flat(), [n, m]);
  }
  const out = await session.run(feeds);
  let worst = 0;
  let bad = 0;
  const pred = out.prediction.data;
  if (pred.length !== n) throw new Error(`${c.name}: ${pred.length} predictions for ${n} rows`);
  for (let i = 0; i < n; i++) {
    if (c.labels) {
      if (pred[i] !== c.labels[i]) {
        if (bad++ < 5) console.error(`${c.name}: row ${i + 1}: label ${pred[i]}, rfm says ${c.labels[i]}`);
      }
      const p = out.probabilities.data;
      const k = c.proba[i].length;
      for (let j = 0; j < k; j++) {
        const a = p[i * k + j], b = c.proba[i][j];
        worst = Math.max(worst, Math.abs(a - b) / Math.max(Math.abs(b), 1e-300));
        if (!close(a, b) && bad++ < 5) console.error(`${c.name}: row ${i + 1}: probability ${j} is ${a}, rfm says ${b}`);
      }
    } else {
      const a = pred[i], b = c.values[i];
      worst = Math.max(worst, Math.abs(a - b) / Math.max(Math.abs(b), 1e-300));
      if (!close(a, b) && bad++ < 5) console.error(`${c.name}: row ${i + 1}: value ${a}, rfm says ${b}`);
    }
  }
  console.log(`${bad === 0 ? 'ok  ' : 'FAIL'} ${c.name}: ${n} rows, largest relative difference ${worst.toExponential(2)}`);
  return bad === 0;
}

(async () => {
  let ok = true;
  for (const f of process.argv.slice(2)) {
    try {
      ok = (await check(f)) && ok;
    } catch (e) {
      console.error(`FAIL ${f}: ${e.message}`);
      ok = false;
    }
  }
  process.exit(ok ? 0 : 1);
})();
