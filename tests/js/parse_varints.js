#!/usr/bin/env node
// Decode hex-encoded varints with the JavaScript build of schemas/varint.ksy and print
// [{"raw": number, "value": number, "len": bytes consumed}, ...] as JSON.
//
// Usage: NODE_PATH=.tools/npm/node_modules node tests/js/parse_varints.js GEN_DIR HEX...
'use strict';

const path = require('path');
const KaitaiStream = require('kaitai-struct/KaitaiStream');

const [genDir, ...hexes] = process.argv.slice(2);
const { Varint } = require(path.resolve(genDir, 'Varint.js'));

const out = hexes.map((h) => {
  const bytes = Uint8Array.from(Buffer.from(h, 'hex'));
  const io = new KaitaiStream(bytes.buffer);
  const v = new Varint(io);
  return { raw: v.raw, value: v.value, len: io.pos };
});
process.stdout.write(JSON.stringify(out) + '\n');
