// convert.js: published TF.js layers models from npm, turned into what
// madlib_dl loads, with TensorFlow.js' own predictions to check against
// (test/published/run.sh runs it).
//
// The models are not in this tree (their weights are third-party); they
// are npm packages that ship model.json and the weight shards inside
// the package, installed into the ignored folder .published/:
//   mkdir -p .published && (cd .published && npm install --legacy-peer-deps \
//       @tensorflow/tfjs@4.22.0 nsfwjs@4.4.0 @upscalerjs/esrgan-slim@1.0.0)
//   node test/published/convert.js .published OUTDIR
//
//   nsfwjs 4.4.0           MobileNetV2 (224x224x3) and InceptionV3
//                          (299x299x3) image classifiers, 5 classes; the
//                          package ships model.json and the shards as
//                          browserified modules (base64 strings), the
//                          weights uint8-quantized (TF.js dequantizes)
//   @upscalerjs/esrgan-slim  a super-resolution network (x2) of Conv2D,
//                          UpSampling2D, Concatenate and Add whose input is
//                          [null, null, null, 3]: any image size
//
// For each model writes into OUTDIR:
//   NAME.arch.json      the Keras model_config, as published
//   NAME.weights.hex    the weights as one bytea literal (\x...): float32
//                       little-endian in Keras get_weights() order, layer
//                       by layer (model.layers.flatMap(l => l.getWeights())),
//                       not TF.js' getWeights() order, which lists every
//                       non-trainable weight (BatchNormalization's moving
//                       statistics) after all the trainable ones
//   NAME.tfjs_order.hex the same weights in TF.js' model.getWeights()
//                       order (load_keras_model must refuse it when the
//                       shapes show it)
//   NAME.manifest.json  the weights' names and shapes in Keras order
//   NAME.tfjs_manifest.json  the same in TF.js' model.getWeights() order
//   NAME.SIZE.inputs.tsv  images as id TAB float8 array literal, values
//                       ((j * 7 + r * 13) mod 251) / 250 of image r at flat
//                       index j, written with 9 digits (exact in float32)
//   NAME.SIZE.expected.tsv  id TAB class (1-based) TAB TF.js' output
'use strict';
const fs = require('fs');
const path = require('path');

const pub = path.resolve(process.argv[2] || '.published');
const out = path.resolve(process.argv[3] || '/tmp/published');
const nm = path.join(pub, 'node_modules');
const tf = require(path.join(nm, '@tensorflow/tfjs'));

function b64ToBytes(s) {
  return new Uint8Array(Buffer.from(s, 'base64'));
}

function concat(parts) {
  const n = parts.reduce((a, p) => a + p.byteLength, 0);
  const buf = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { buf.set(new Uint8Array(p), o); o += p.byteLength; }
  return buf.buffer;
}

// {modelTopology, weightSpecs, weightData} of a model
function nsfwjs(dir, shards) {
  const d = path.join(nm, 'nsfwjs/dist/models', dir);
  const j = require(path.join(d, 'model.min.js'));
  const parts = [];
  for (let i = 1; i <= shards; i++)
    parts.push(b64ToBytes(require(path.join(d, `group1-shard${i}of${shards}.min.js`))));
  return {modelTopology: j.modelTopology, weightSpecs: j.weightsManifest.flatMap(g => g.weights),
          weightData: concat(parts)};
}

function plainJson(dir) {
  const j = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const parts = j.weightsManifest.flatMap(g => g.paths).map(p => fs.readFileSync(path.join(dir, p)));
  return {modelTopology: j.modelTopology, weightSpecs: j.weightsManifest.flatMap(g => g.weights),
          weightData: concat(parts.map(b => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)))};
}

function hexOf(tensors) {
  const arrays = tensors.map(t => t.dataSync());
  const n = arrays.reduce((a, x) => a + x.length, 0);
  const buf = Buffer.alloc(n * 4);
  let o = 0;
  for (const a of arrays) for (let i = 0; i < a.length; i++, o += 4) buf.writeFloatLE(a[i], o);
  return '\\x' + buf.toString('hex') + '\n';
}

function image(r, h, w, c) {
  const v = new Float32Array(h * w * c);
  for (let j = 0; j < v.length; j++) v[j] = Math.fround(((j * 7 + r * 13) % 251) / 250);
  return v;
}

function literal(v, h, w, c) {
  const rows = [];
  for (let y = 0; y < h; y++) {
    const cols = [];
    for (let x = 0; x < w; x++) {
      const px = [];
      for (let k = 0; k < c; k++) px.push(v[(y * w + x) * c + k].toPrecision(9));
      cols.push('{' + px.join(',') + '}');
    }
    rows.push('{' + cols.join(',') + '}');
  }
  return '{' + rows.join(',') + '}';
}

async function convert(name, artifacts, sizes, nImages) {
  const model = await tf.loadLayersModel({load: async () => artifacts});
  const cfg = artifacts.modelTopology.model_config || artifacts.modelTopology;
  fs.writeFileSync(path.join(out, `${name}.arch.json`), JSON.stringify(cfg));
  const keras = model.layers.flatMap(l => l.getWeights());
  fs.writeFileSync(path.join(out, `${name}.weights.hex`), hexOf(keras));
  fs.writeFileSync(path.join(out, `${name}.tfjs_order.hex`), hexOf(model.getWeights()));
  const entry = w => ({name: w.originalName || w.name, shape: w.shape});
  fs.writeFileSync(path.join(out, `${name}.manifest.json`),
                   JSON.stringify(model.layers.flatMap(l => l.weights.map(entry))));
  fs.writeFileSync(path.join(out, `${name}.tfjs_manifest.json`), JSON.stringify(model.weights.map(entry)));
  for (const [h, w, c] of sizes) {
    const tag = `${h}x${w}`;
    const ins = [];
    const exp = [];
    for (let r = 0; r < nImages; r++) {
      const v = image(r, h, w, c);
      ins.push(`${r}\t${literal(v, h, w, c)}`);
      const y = tf.tidy(() => model.predict(tf.tensor4d(v, [1, h, w, c])).dataSync());
      for (let k = 0; k < y.length; k++) exp.push(`${r}\t${k + 1}\t${y[k].toPrecision(9)}`);
    }
    fs.writeFileSync(path.join(out, `${name}.${tag}.inputs.tsv`), ins.join('\n') + '\n');
    fs.writeFileSync(path.join(out, `${name}.${tag}.expected.tsv`), exp.join('\n') + '\n');
    console.log(`${name} ${tag}: ${nImages} images, ${model.countParams()} parameters`);
  }
  model.dispose();
}

(async () => {
  fs.mkdirSync(out, {recursive: true});
  const only = process.argv[4];
  if (!only || only === 'mobilenet_v2')
    await convert('mobilenet_v2', nsfwjs('mobilenet_v2', 1), [[224, 224, 3]], 2);
  if (!only || only === 'inception_v3')
    await convert('inception_v3', nsfwjs('inception_v3', 6), [[299, 299, 3]], 2);
  if (!only || only === 'esrgan_slim_x2')
    await convert('esrgan_slim_x2', plainJson(path.join(nm, '@upscalerjs/esrgan-slim/models/x2')),
                  [[16, 16, 3], [32, 32, 3]], 2);
})().catch(e => { console.error(e); process.exit(1); });
