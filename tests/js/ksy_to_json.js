#!/usr/bin/env node
// Print {"file.ksy": <parsed YAML>, ...} for the given .ksy files, parsed with js-yaml as the
// compiler and the Web IDE parse them (Python has no YAML parser in this project).
//
// Usage: NODE_PATH=.tools/npm/node_modules node tests/js/ksy_to_json.js FILE.ksy...
'use strict';

const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');

const out = {};
for (const file of process.argv.slice(2)) {
  out[path.basename(file)] = yaml.load(fs.readFileSync(file, 'utf8'));
}
process.stdout.write(JSON.stringify(out) + '\n');
