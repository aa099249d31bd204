// ort_check.js: every exported model in a directory, run by ONNX Runtime
// (onnxruntime-node, CPU), against madlib_dl's own predictions.
//
// The directory holds <case>.onnx and <case>.json pairs: the inputs (name,
// shape, data) and madlib_dl's outputs (name, data), as test/unit/test_onnx
// (ONNX_DUMP_DIR) and test/interchange/check.sh write them.  Prints the
// largest absolute difference per model; exits 1 when one is over 1e-5,
// or a model does not load or run.
//
//   NODE_PATH=test/interchange/node_modules node test/interchange/ort_check.js DIR
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const TOL = 1e-5;

async function main(dir) {
  const cases = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  let worst = 0;
  let failed = 0;
  for (const c of cases) {
    const name = c.slice(0, -5);
    const spec = JSON.parse(fs.readFileSync(path.join(dir, c), 'utf8'));
    let d = 0;
    try {
      const session = await ort.InferenceSession.create(path.join(dir, name + '.onnx'));
      const feeds = {};
      for (const inp of spec.inputs) {
        feeds[inp.name] = inp.dtype === 'int64'
          ? new ort.Tensor('int64', BigInt64Array.from(inp.data.map((v) => BigInt(Math.round(v)))), inp.shape)
          : new ort.Tensor('float32', Float32Array.from(inp.data), inp.shape);
      }
      const out = await session.run(feeds);
      for (const o of spec.outputs) {
        const got = out[o.name];
        if (!got) throw new Error('no output ' + o.name);
        if (got.data.length !== o.data.length) {
          throw new Error(`output ${o.name}: ${got.data.length} values, madlib_dl gave ${o.data.length}`);
        }
        for (let i = 0; i < o.data.length; i++) d = Math.max(d, Math.abs(got.data[i] - o.data[i]));
      }
    } catch (e) {
      console.log(`${name}: FAILED: ${e.message}`);
      failed++;
      continue;
    }
    worst = Math.max(worst, d);
    const ok = d <= TOL;
    if (!ok) failed++;
    console.log(`${name}: max abs difference ${d.toExponential(3)}${ok ? '' : ' OVER 1e-5'}`);
  }
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}: ` +
              `${cases.length} models, ${failed} failed, largest difference ${worst.toExponential(3)}`);
  process.exit(failed || cases.length === 0 ? 1 : 0);
}

main(process.argv[2]);
