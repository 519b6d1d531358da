#!/usr/bin/env node
// Compile .ksy files with the pinned npm kaitai-struct-compiler (the same build the Web IDE runs).
//
// Usage:
//   node scripts/ksc.js --target python|javascript [--debug] --out DIR [--import-root DIR] FILE.ksy...
//
// Writes every file the compiler returns into DIR and prints a JSON summary on stdout:
//   {"compiler": "0.11.0", "target": "...", "debug": false,
//    "files": [{"file": "record_set.py", "schema": "record_set.ksy"}, ...]}
// ("schema" is the .ksy, relative to the import root, that the output was generated from).
//
// Exits non-zero on any compiler error AND on any warning. The npm build's public API drops
// warnings: JavaScriptKSYParser.yamlToSpecs only rethrows problems whose severity is not
// Warning. So the compiler source is loaded with a one-line hook at that spot that reports
// every problem; the hook target is checked to occur exactly once, so a different compiler
// build fails loudly instead of silently losing warnings.
'use strict';

const fs = require('fs');
const path = require('path');
const Module = require('module');

const TOOLS = path.resolve(__dirname, '..', '.tools', 'npm', 'node_modules');
const COMPILER_JS = path.join(TOOLS, 'kaitai-struct-compiler', 'kaitai-struct-compiler.js');
const yaml = require(path.join(TOOLS, 'js-yaml'));

const HOOK_TARGET = 'var problems = $as_sc_Iterable(problems$2);';
const HOOK = HOOK_TARGET +
  ' if (globalThis.__kscProblemSink) {' +
  ' var __it = $n(problems).iterator__sc_Iterator();' +
  ' while ($n(__it).hasNext__Z()) {' +
  ' var __p = $n(__it).next__O();' +
  ' globalThis.__kscProblemSink(String(__p.message__T()),' +
  ' __p.severity__Lio_kaitai_struct_problems_ProblemSeverity() ===' +
  ' $m_Lio_kaitai_struct_problems_ProblemSeverity$Warning$()); } }';

function loadCompiler() {
  const src = fs.readFileSync(COMPILER_JS, 'utf8');
  const hits = src.split(HOOK_TARGET).length - 1;
  if (hits !== 1) {
    throw new Error(`cannot hook compiler warnings: expected 1 match of the hook target, found ${hits}`);
  }
  const m = new Module(COMPILER_JS, module);
  m.filename = COMPILER_JS;
  m.paths = Module._nodeModulePaths(path.dirname(COMPILER_JS));
  m._compile(src.replace(HOOK_TARGET, HOOK), COMPILER_JS);
  return m.exports;
}

function parseArgs(argv) {
  const opts = { target: null, debug: false, out: null, importRoot: null, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--target') opts.target = argv[++i];
    else if (a === '--debug') opts.debug = true;
    else if (a === '--out') opts.out = argv[++i];
    else if (a === '--import-root') opts.importRoot = argv[++i];
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else opts.files.push(a);
  }
  if (!['python', 'javascript'].includes(opts.target)) {
    throw new Error('--target must be python or javascript');
  }
  if (!opts.out) throw new Error('--out DIR is required');
  if (opts.files.length === 0) throw new Error('no .ksy files given');
  opts.importRoot = path.resolve(opts.importRoot || path.dirname(opts.files[0]));
  return opts;
}

function readKsy(file) {
  return yaml.load(fs.readFileSync(file, 'utf8'), { filename: file });
}

// The compiler names output files after meta/id; map them back to the schema they came from.
function outputName(target, id) {
  if (target === 'python') return `${id}.py`;
  const camel = id.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  return `${camel}.js`;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const compiler = loadCompiler();
  const problems = [];
  globalThis.__kscProblemSink = (msg, isWarning) => {
    problems.push(`${isWarning ? 'warning' : 'error'}: ${msg.trim()}`);
  };

  const idToSchema = new Map();
  const noteSchema = (file, spec) => {
    const id = spec && spec.meta && spec.meta.id;
    if (id) idToSchema.set(id, path.relative(opts.importRoot, path.resolve(file)));
  };
  const importer = {
    importYaml(name, mode) {
      // All schemas live in one folder, so "rel" (relative to the importing file) and "abs"
      // (relative to an import path) both resolve against the import root.
      void mode;
      const file = path.resolve(opts.importRoot, `${name}.ksy`);
      const spec = readKsy(file);
      noteSchema(file, spec);
      return Promise.resolve(spec);
    },
  };

  const outputs = new Map(); // file name -> contents
  for (const file of opts.files) {
    const spec = readKsy(file);
    noteSchema(file, spec);
    let result;
    const before = problems.length;
    try {
      result = await compiler.compile(opts.target, spec, importer, opts.debug);
    } catch (err) {
      // A compilation problem has already been reported through the hook; anything else
      // (unreadable import, YAML error) has not.
      if (problems.length === before) {
        const msg = (err && (err.getMessage ? err.getMessage() : err.message)) || String(err);
        problems.push(`error: ${file}: ${msg}`);
      }
      continue;
    }
    for (const [name, contents] of Object.entries(result)) {
      if (outputs.has(name) && outputs.get(name) !== contents) {
        problems.push(`error: ${name} generated twice with different contents (from ${file})`);
      }
      outputs.set(name, contents);
    }
  }

  if (problems.length > 0) {
    // Warnings repeat once per file that imports the offending schema.
    for (const p of [...new Set(problems)]) process.stderr.write(`${p}\n`);
    process.exitCode = 1;
    return;
  }

  fs.mkdirSync(opts.out, { recursive: true });
  const byName = new Map();
  for (const [id, schema] of idToSchema) byName.set(outputName(opts.target, id), schema);
  const files = [];
  for (const name of [...outputs.keys()].sort()) {
    fs.writeFileSync(path.join(opts.out, name), outputs.get(name));
    files.push({ file: name, schema: byName.has(name) ? byName.get(name) : null });
  }
  process.stdout.write(JSON.stringify({
    compiler: compiler.version, target: opts.target, debug: opts.debug, files,
  }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`error: ${(err && err.stack) || err}\n`);
  process.exitCode = 1;
});
