#!/usr/bin/env node
// Parse record sets with the JavaScript build of schemas/record_set.ksy, as the Kaitai Web IDE
// does, and print one JSON summary per file (an array, in argument order).
//
// Usage: NODE_PATH=.tools/npm/node_modules node tests/js/parse_record_set.js GEN_DIR FILE.bin...
//   GEN_DIR holds RecordSet.js and the modules it imports (scripts/ksc.js --target javascript).
//
// Bytes are printed as hex, nulls as null; 64-bit numbers are JS doubles (exact below 2^53),
// which the Python side accounts for.
'use strict';

const fs = require('fs');
const path = require('path');
const KaitaiStream = require('kaitai-struct/KaitaiStream');

const [genDir, ...files] = process.argv.slice(2);
if (!genDir || files.length === 0) {
  process.stderr.write('usage: parse_record_set.js GEN_DIR FILE.bin...\n');
  process.exit(2);
}
const { RecordSet } = require(path.resolve(genDir, 'RecordSet.js'));

const hex = (b) => (b === undefined || b === null ? null : Buffer.from(b).toString('hex'));

function record(r) {
  const b = r.body;
  return {
    len_body: r.lenBody.value,
    attributes: b.attributes,
    timestamp_delta: b.timestampDelta.value,
    offset_delta: b.offsetDelta.value,
    key: b.lenKey.value >= 0 ? hex(b.key) : null,
    value: b.lenValue.value >= 0 ? hex(b.value) : null,
    headers: b.headers.map((h) => ({ key: h.key, value: h.lenValue.value >= 0 ? hex(h.value) : null })),
  };
}

function batch(f) {
  const b = f.body;
  const a = b.attributes;
  const out = {
    kind: 'record_batch',
    base_offset: b.baseOffset,
    batch_length: b.batchLength,
    partition_leader_epoch: b.partitionLeaderEpoch,
    magic: b.magic,
    crc: b.crc,
    compression: a.compression,
    timestamp_type: a.timestampType,
    is_transactional: a.isTransactional,
    is_control: a.isControl,
    has_delete_horizon: a.hasDeleteHorizon,
    last_offset_delta: b.lastOffsetDelta,
    base_timestamp: b.baseTimestamp,
    max_timestamp: b.maxTimestamp,
    producer_id: b.producerId,
    producer_epoch: b.producerEpoch,
    base_sequence: b.baseSequence,
    records_count: b.recordsCount,
  };
  if (a.compression === 0) out.records = b.records.records.map(record);
  else out.compressed_records = hex(b.compressedRecords);
  return out;
}

function legacy(f) {
  const m = f.body;
  return {
    kind: 'legacy_message',
    offset: m.offset,
    message_size: m.messageSize,
    crc: m.crc,
    magic: m.magic,
    compression: m.attributes.compression,
    timestamp_type: m.timestampType, // the message's: -1 (none) for magic 0
    timestamp: m.magic === 1 ? m.timestamp : null,
    key: m.lenKey >= 0 ? hex(m.key) : null,
    value: m.lenValue >= 0 ? hex(m.value) : null,
  };
}

const results = files.map((file) => {
  const data = fs.readFileSync(file);
  const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const rs = new RecordSet(new KaitaiStream(buf));
  const frames = (rs.frames || []).map((f) => {
    const common = { ofs_frame: f.ofsFrame, length: f.length, frame_magic: f.magic };
    if (f.magic === 2) return Object.assign(common, batch(f));
    if (f.magic === 0 || f.magic === 1) return Object.assign(common, legacy(f));
    return Object.assign(common, { kind: 'unknown', raw: hex(f.body) });
  });
  return { file, frames, trailing: hex(rs.trailing) };
});
process.stdout.write(JSON.stringify(results) + '\n');
